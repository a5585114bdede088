"""Why the PostgreSQL store's dense recall falls at 10^6 passages, and what brings it back: the
scale bench's vectors (``bench_postgres_scale.vectors_of``) in a bare table with pgvector's HNSW
index (``--m``, ``--ef-construction``), asked the scale bench's questions at several
``hnsw.ef_search`` values, unfiltered and under its 5% filter (the iterative scan in relaxed
order, the same keeping ``ef_search`` rows sorted here, strict order, and the store's exact scan
of the allowed rows), each against numpy's exact top 10.

    PYTHONPATH=. python bench/postgres_recall_probe.py 1000000 [--m 16 --ef-construction 64]
        [--keep DIR] [--json OUT.json]

Per setting: recall@10 (mean), how many questions found none of their top 10 / all of it, whether
the question's own passage (its nearest by far) was found, and the p50/p95 time of the SQL alone.
``--keep DIR`` keeps the server's data folder between runs (the table is made once per size, m
and ef_construction). The server: ``SEMSEARCH_PG_URL``'s, else pgserver's PostgreSQL + pgvector.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_postgres_scale import DIM, PAGE, question_vectors, vectors_of  # noqa: E402
from psycopg import sql  # noqa: E402

from semsearch.store.postgres.queries import exact_scan, runs  # noqa: E402

QUESTIONS = 100


def filter_of(n: int, seed: int = 7) -> np.ndarray:
    """A 5% filter of the scale bench's shape: whole pages of ``PAGE`` rows, a twentieth of them."""
    pages = -(-n // PAGE)
    chosen = np.zeros(pages, dtype=bool)
    chosen[np.random.default_rng(seed).choice(pages, size=max(1, pages // 20), replace=False)] = True
    return np.repeat(chosen, PAGE)[:n]


def load(
    connection, vectors: np.ndarray, allowed: np.ndarray, name: str, m: int, ef_construction: int
) -> float:
    """The table ``name`` (row, allowed, embedding) and its HNSW index; the index's build seconds."""
    connection.execute(
        f"CREATE TABLE {name} (row int PRIMARY KEY, allowed bool NOT NULL, embedding vector({DIM}))"
    )
    with connection.cursor().copy(
        f"COPY {name} (row, allowed, embedding) FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["int4", "bool", "vector"])
        for row, vector in enumerate(vectors):
            copy.write_row((row, bool(allowed[row]), vector))
    connection.execute("SET maintenance_work_mem = '8GB'")
    connection.execute("SET max_parallel_maintenance_workers = 1")
    started = time.perf_counter()
    connection.execute(
        f"CREATE INDEX ON {name} USING hnsw (embedding vector_ip_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction})"
    )
    connection.execute("VACUUM ANALYZE " + name)
    return time.perf_counter() - started


def ask(connection, name: str, vector: np.ndarray, way: dict, allowed_runs: tuple[list, list]) -> list[int]:
    """The rows ``way`` finds for ``vector``: its settings, its LIMIT (more than 10: sorted here,
    the first 10 kept), filtered or not, or the exact range scan."""
    with connection.transaction():
        for key, value in way.get("settings", {}).items():
            connection.execute("SELECT set_config(%s, %s, true)", [key, value])
        if way.get("exact"):
            scan = exact_scan(sql.Identifier(name))
            return [r for r, _ in connection.execute(scan, [vector, *allowed_runs, vector, 10])]
        where = "WHERE allowed" if way.get("filtered") else ""
        statement = f"SELECT row, embedding <#> %s FROM {name} {where} ORDER BY embedding <#> %s LIMIT %s"
        rows = connection.execute(statement, [vector, vector, way.get("limit", 10)]).fetchall()
    return [r for r, _ in sorted(rows, key=lambda pair: pair[1])[:10]]


def measure(connection, name, vectors, questions, own, allowed, way: dict) -> dict:
    found, seconds, own_found = [], [], 0
    allowed_runs = runs(allowed)
    filtered = way.get("filtered") or way.get("exact")
    for question, row in zip(questions, own, strict=True):
        exact = vectors @ question
        if filtered:
            exact = np.where(allowed, exact, -np.inf)
        truth = set(np.argsort(-exact)[:10].tolist())
        started = time.perf_counter()
        got = ask(connection, name, question, way, allowed_runs)
        seconds.append(time.perf_counter() - started)
        found.append(len(truth & set(got)) / 10)
        own_found += int(row) in got
    found = np.array(found)
    return {
        **way,
        "recall@10": round(float(found.mean()), 3),
        "none": int((found == 0).sum()),
        "all": int((found == 1).sum()),
        "own passage found": None if filtered else own_found,
        "p50_ms": round(1000 * float(np.median(seconds)), 1),
        "p95_ms": round(1000 * float(np.percentile(seconds, 95)), 1),
    }


def ways(efs: list[int]) -> list[dict]:
    """The searches measured: unfiltered at each ``ef_search``; under the filter, the store's
    iterative scan (relaxed order, the first 10), the same keeping ``ef_search`` rows sorted here,
    strict order, and the exact range scan."""
    found = [{"settings": {"hnsw.ef_search": str(ef)}} for ef in efs]
    for ef in efs:
        relaxed = {"hnsw.ef_search": str(ef), "hnsw.iterative_scan": "relaxed_order"}
        found.append({"filtered": True, "settings": relaxed})
        found.append({"filtered": True, "settings": relaxed, "limit": ef})
        found.append({"filtered": True, "settings": {**relaxed, "hnsw.iterative_scan": "strict_order"}})
    return [*found, {"exact": True}]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("n", type=int)
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--ef", default="40,100,200,400,800")  # ef_search values
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import psycopg
    from pgvector.psycopg import register_vector

    url = os.environ.get("SEMSEARCH_PG_URL")
    if not url:
        import pgserver

        folder = args.keep or Path(tempfile.mkdtemp(prefix="semsearch-probe-"))
        url = pgserver.get_server(folder, cleanup_mode=None if args.keep else "delete").get_uri()
    vectors, _ = vectors_of(args.n, np.random.default_rng(7))
    questions, own = question_vectors(vectors, QUESTIONS)
    allowed = filter_of(args.n)
    name = f"probe_{args.n}_{args.m}_{args.ef_construction}"
    results = []
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(connection)
        made = connection.execute("SELECT to_regclass(%s)", [name]).fetchone()[0]
        if made is None:
            seconds = load(connection, vectors, allowed, name, args.m, args.ef_construction)
            print(json.dumps({"table": name, "index_seconds": round(seconds, 1)}), flush=True)
        for way in ways([int(e) for e in args.ef.split(",")]):
            result = measure(connection, name, vectors, questions, own, allowed, way)
            results.append(result)
            print(json.dumps(result), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
