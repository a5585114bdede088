"""What runs in the database for a question (see ``store.engine``): top k by inner product over
the HNSW index, or an exact scan where a filter leaves few rows; BM25 summed over the question's
tokens' stored columns; the median cosine from the stored sample; page figures from the pages'
centroids. Filters arrive as the rows they allow (``--path`` and ``--where`` are read from the
record, as on a folder index) and apply before the top k."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from semsearch.store.engine import Candidates, PageFigures
from semsearch.store.postgres.layout import PAGE_SAMPLE, ROW_SAMPLE, sql
from semsearch.store.postgres.remote import Tables

EXACT_ROWS = 4096
"""An index of at most this many passages is scored whole (every cosine, one scan): its ranking
is the folder index's exactly. A bigger one is searched for candidates, which costs less from
about there on (4,000 passages: 22 ms a question whole against 20 ms by candidates; 10,000: 41
against 21 ms, interleaved, load 4.4)."""
FILTER_EXACT_ROWS = 50_000
"""A filter leaving at most this many passages is searched by an exact scan of them: pgvector's
iterative scan of the HNSW graph under a filter found 0.65 of the exact top 10 at 10^5 passages
with 5% allowed and 0.31 at 10^6 (``bench/postgres_recall_probe.py``), where scanning 50,000
allowed rows takes about 0.1 s on a 2-core machine."""
EF_SEARCH = 200
"""``hnsw.ef_search``: candidates the HNSW search keeps (recall@10 .997 at 200,000 passages)."""


def runs(mask: np.ndarray) -> tuple[list[int], list[int]]:
    """The starts and ends of ``mask``'s runs of True (the rows a filter allows: whole files)."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return edges[0::2].tolist(), edges[1::2].tolist()


def exact_scan(chunks: Any) -> Any:
    """The statement scoring the allowed rows of the table ``chunks`` exactly, the best first:
    one range scan of the primary key per run of them (``OFFSET 0`` keeps it a scan). Its
    parameters: the vector, the runs' starts and ends (``runs``), the vector again, how many."""
    return (
        sql()
        .SQL(
            "SELECT c.row, (-(c.embedding <#> %s))::real FROM unnest(%s::int[], %s::int[]) AS r(a, b) "
            "CROSS JOIN LATERAL (SELECT row, embedding FROM {} WHERE row >= r.a AND row < r.b OFFSET 0) c "
            "ORDER BY (c.embedding <#> %s) + 0, c.row LIMIT %s"
        )
        .format(chunks)
    )


def token_counts(tokens: Sequence[str]) -> tuple[list[str], list[int]]:
    """Each distinct token and how often the question has it (BM25 counts each occurrence)."""
    counted = Counter(tokens)
    return list(counted), list(counted.values())


class Queries:
    """The queries of one version's tables (see ``layout``)."""

    def __init__(
        self, tables: Tables, exact_rows: int = EXACT_ROWS, filter_exact_rows: int = FILTER_EXACT_ROWS
    ):
        self.tables = tables
        self.exact_rows = exact_rows
        self.filter_exact_rows = filter_exact_rows
        self._medians: dict[bytes, dict[int, tuple[float, float]]] = {}

    def _run(self, statement: Any, params: Any, settings: dict[str, str] | None = None) -> list[tuple]:
        """``statement``'s rows, run in a transaction of its own with these ``settings``."""

        def work(connection: Any) -> list[tuple]:
            with connection.transaction():
                for name, value in (settings or {}).items():
                    connection.execute("SELECT set_config(%s, %s, true)", [name, value])
                return connection.execute(statement, params).fetchall()

        return self.tables.connections.run(work)

    def all_cosines(self, vector: np.ndarray) -> np.ndarray:
        """Every row's cosine, in row order (one scan)."""
        s = sql()
        statement = s.SQL(
            "SELECT count(*), string_agg(float4send((-(embedding <#> %s))::real), ''::bytea ORDER BY row) "
            "FROM {}"
        ).format(self.tables.name("chunks"))
        count, data = self._run(statement, [vector])[0]
        if count != self.tables.rows or len(data or b"") != 4 * count:
            raise self.tables.damaged(f"{count:,} passages where its record says {self.tables.rows:,}")
        return np.frombuffer(data or b"", dtype=">f4").astype(np.float32)

    def dense(self, vector: np.ndarray, depth: int, allowed: np.ndarray | None) -> dict[int, float]:
        """The best ``depth`` rows by cosine among ``allowed`` (None: all): HNSW, or an exact
        scan of the allowed rows when they are few (or when the vectors have no HNSW index)."""
        s = sql()
        chunks = self.tables.name("chunks")
        if allowed is not None and int(allowed.sum()) <= self.filter_exact_rows:
            starts, ends = runs(allowed)
            return dict(self._run(exact_scan(chunks), [vector, starts, ends, vector, depth]))
        condition, params = s.SQL(""), []
        if allowed is not None:
            starts, ends = runs(allowed)
            condition = s.SQL("WHERE row <@ %s::int4multirange")
            params = [_multirange(starts, ends)]
        statement = s.SQL(
            "SELECT row, (-(embedding <#> %s))::real FROM {} {} ORDER BY embedding <#> %s LIMIT %s"
        ).format(chunks, condition)
        settings = {"hnsw.ef_search": str(max(EF_SEARCH, depth)), "hnsw.iterative_scan": "relaxed_order"}
        return dict(self._run(statement, [vector, *params, vector, depth], settings))

    def cosines_of(self, vector: np.ndarray, rows: Sequence[int]) -> dict[int, float]:
        if not rows:
            return {}
        statement = sql().SQL("SELECT row, (-(embedding <#> %s))::real FROM {} WHERE row = ANY(%s)")
        found = dict(self._run(statement.format(self.tables.name("chunks")), [vector, list(rows)]))
        if len(found) != len(set(rows)):
            raise self.tables.damaged("passages its keyword index names are missing")
        return found

    def median(self, vector: np.ndarray, what: int = ROW_SAMPLE) -> tuple[float, float]:
        """The median and best cosine over the sample of rows (or of page centroids): both
        samples' in one scan, kept for the question's next call (its page figures)."""
        key = vector.tobytes()
        found = self._medians.get(key)
        if found is None:
            statement = sql().SQL(
                "SELECT what, percentile_cont(0.5) WITHIN GROUP (ORDER BY -(embedding <#> %s)), "
                "max(-(embedding <#> %s)) FROM {} GROUP BY what"
            )
            rows = self._run(statement.format(self.tables.name("samples")), [vector, vector])
            found = {kind: (float(median), float(best)) for kind, median, best in rows}
            self._medians = {key: found}  # one question's: a new question replaces it
        return found.get(what, (float("nan"), float("nan")))

    def keyword(
        self, part: str, tokens: Sequence[str], depth: int, allowed: np.ndarray | None, rows: Sequence[int]
    ) -> tuple[tuple[int, float] | None, dict[int, float], dict[int, float]]:
        """BM25 over ``tokens`` summed in the database from ``part``'s columns: the best row over
        every row (None when no row holds a token), the best ``depth`` among ``allowed``, and the
        scores of ``rows``."""
        distinct, counts = token_counts(tokens)
        s = sql()
        condition, params = s.SQL("true"), []
        if allowed is not None:
            condition, params = s.SQL("r <@ %s::int4multirange"), [_multirange(*runs(allowed))]
        statement = s.SQL(
            "WITH q(token, n) AS (SELECT * FROM unnest(%s::text[], %s::int[])), "
            "scored AS MATERIALIZED (SELECT u.r, sum(u.w * q.n)::real AS s "
            "FROM q JOIN {} t ON t.token = q.token "
            "CROSS JOIN LATERAL unnest(t.rows, t.weights) AS u(r, w) GROUP BY u.r) "
            "(SELECT 0, r, s FROM scored ORDER BY s DESC, r LIMIT 1) "
            "UNION ALL (SELECT 1, r, s FROM scored WHERE {} ORDER BY s DESC, r LIMIT %s) "
            "UNION ALL (SELECT 2, r, s FROM scored WHERE r = ANY(%s))"
        ).format(self.tables.name(part), condition)
        found = self._run(statement, [distinct, counts, *params, depth, list(rows)])
        best = next(((r, s) for kind, r, s in found if kind == 0), None)
        top = {r: s for kind, r, s in found if kind == 1}
        asked = {r: s for kind, r, s in found if kind == 2}
        return best, top, asked

    def candidates(
        self, vector: np.ndarray, tokens: Sequence[str] | None, depth: int, allowed: np.ndarray | None,
        include: np.ndarray,
    ) -> Candidates:  # fmt: skip
        vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        if self.tables.rows <= self.exact_rows:
            cosine = self.all_cosines(vector)
            rows = np.arange(len(cosine), dtype=np.int64)
            best = float(cosine.max()) if len(cosine) else 0.0
            return Candidates(rows, cosine, None, float("nan"), best, 0.0, True)
        cosines = self.dense(vector, depth, allowed)
        overall = self.dense(vector, 1, None) if allowed is not None else cosines
        best = max(overall.values(), default=0.0)
        cosines.update(overall)
        median, _ = self.median(vector)
        keyword_best, scores = 0.0, None
        if tokens:
            asked = sorted({*cosines, *np.asarray(include).tolist()})
            top_row, top, scores = self.keyword("terms", tokens, depth, allowed, asked)
            if top_row is not None:
                keyword_best = top_row[1]
                top[top_row[0]] = top_row[1]
            scores.update(top)
            cosines.update(self.cosines_of(vector, sorted(set(scores) - set(cosines))))
        cosines.update(self.cosines_of(vector, sorted(set(np.asarray(include).tolist()) - set(cosines))))
        rows = np.array(sorted(cosines), dtype=np.int64)
        return Candidates(
            rows=rows,
            cosine=np.array([cosines[r] for r in rows.tolist()], dtype=np.float32),
            keyword=None
            if tokens is None
            else np.array([(scores or {}).get(r, 0.0) for r in rows.tolist()], np.float32),
            median=median,
            best=best,
            keyword_best=float(keyword_best),
            complete=False,
        )

    def page_figures(self, vector: np.ndarray, tokens: Sequence[str], pages: np.ndarray) -> PageFigures:
        vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        asked = np.asarray(pages, dtype=np.int64).tolist()
        s = sql()
        means = dict(
            self._run(
                s.SQL("SELECT page, (-(centroid <#> %s))::real FROM {} WHERE page = ANY(%s)").format(
                    self.tables.name("pages")
                ),
                [vector, asked],
            )
        )
        if len(means) != len(set(asked)):
            raise self.tables.damaged("pages its passages name are missing")
        mean_median, sample_best = self.median(vector, PAGE_SAMPLE)
        two = self._run(
            s.SQL(
                "SELECT p.page, t.c FROM unnest(%s::int[]) AS p(page) CROSS JOIN LATERAL (SELECT "
                "(-(embedding <#> %s))::real AS c FROM {} WHERE page = p.page "
                "ORDER BY (embedding <#> %s) + 0 LIMIT 2) AS t"
            ).format(self.tables.name("chunks")),
            [asked, vector, vector],
        )
        found: dict[int, list[float]] = {page: [] for page in asked}
        for page, cosine in two:
            found[page].append(cosine)
        top_two = np.full((len(asked), 2), np.nan, dtype=np.float32)
        for i, page in enumerate(asked):
            best = sorted(found[page], reverse=True)[:2]
            top_two[i, : len(best)] = best
        best_page, _, scores = (
            self.keyword("page_terms", tokens, 0, None, asked) if tokens else (None, {}, {})
        )
        mean = np.array([means[page] for page in asked], dtype=np.float32)
        return PageFigures(
            pages=np.asarray(asked, dtype=np.int64),
            mean=mean,
            mean_median=mean_median,
            mean_best=float(max(sample_best, float(mean.max()) if len(mean) else -np.inf)),
            top_two=top_two,
            keyword=np.array([scores.get(page, 0.0) for page in asked], dtype=np.float32),
            keyword_best=float(best_page[1]) if best_page else 0.0,
        )


def _multirange(starts: list[int], ends: list[int]) -> str:
    return "{" + ",".join(f"[{a},{b})" for a, b in zip(starts, ends, strict=True)) + "}"
