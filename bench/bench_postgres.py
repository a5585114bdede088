"""The PostgreSQL store against the folder index on every dev set: the same index (each set's
folder index under $RANK_WORK/idx, read only) copied into a PostgreSQL schema, every question
judged on both (the cached query embeddings of ``ranking_sets``), and the eval figures and the
questions whose first passage, first three or gate decision differ.

    PYTHONPATH=. python bench/bench_postgres.py                    # every set, every setting
    PYTHONPATH=. python bench/bench_postgres.py docs foam --json OUT.json

Settings: ``whole`` (an index of up to ``queries.EXACT_ROWS`` passages, as every dev set is: every
cosine scored in the database), ``candidates`` (forced on these small sets: the best 100 rows by
cosine and by BM25, the rest set to the median, as an index above the bound is searched), and
``candidates-50`` (50 of each, as deep as ``eval`` ranks: the approximation stressed) and
``sample-256`` (the candidates, with the median estimated from 256 rows instead of every row of
these sets). The server: pgserver's
(PostgreSQL 18, pgvector 0.8.2) in a temporary folder, or ``SEMSEARCH_PG_URL``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking_sets import SETS, WORK, CachedModel  # noqa: E402

from semsearch.collection import Collection  # noqa: E402
from semsearch.evaluation.quality import evaluate  # noqa: E402
from semsearch.evaluation.questions import load_questions  # noqa: E402
from semsearch.retrieve import engine  # noqa: E402
from semsearch.retrieve.opening import load_index  # noqa: E402
from semsearch.store.built import Built  # noqa: E402
from semsearch.store.postgres import writer  # noqa: E402
from semsearch.store.postgres.queries import EXACT_ROWS  # noqa: E402
from semsearch.store.stores import open_store  # noqa: E402

SETTINGS = {
    "whole": {},
    "candidates": {"exact_rows": 0},
    "candidates-50": {"exact_rows": 0, "depth": 50},
    "sample-256": {"exact_rows": 0, "sample": 256},
}
FIGURES = ("top1", "top3", "mrr", "answered", "rejected")


def server_url(folder: Path) -> tuple[str, object]:
    given = os.environ.get("SEMSEARCH_PG_URL")
    if given:
        return given, None
    import pgserver

    server = pgserver.get_server(folder, cleanup_mode="delete")
    return server.get_uri(), server


def copy_into(index, url: str, sample: int | None) -> None:
    """The folder ``index`` written into the schema at ``url`` (its sample of ``sample`` rows)."""
    store = open_store(url)
    kept = writer.SAMPLE_ROWS
    writer.SAMPLE_ROWS = sample or kept
    try:
        chunks = index.chunks.load()
        built = Built(np.asarray(index.vectors), list(chunks), index.meta, np.asarray(index.offtopic),
                      index.keywords, index.pages)  # fmt: skip
        store.write(built)
    finally:
        writer.SAMPLE_ROWS = kept


def judged(collection: Collection, questions) -> list[tuple]:
    report = evaluate(collection, questions, k=3)
    rows = []
    for result in report.results:
        rows.append((result.rank, result.passes, result.first.location if result.first else None))
    return report.metrics, rows


def compare(name: str, url: str, model: CachedModel) -> dict:
    docs, files, split = SETS[name]
    folder = WORK / "idx" / name
    questions = [q for file in files for q in load_questions(file)]
    index = load_index(folder)
    base_metrics, base = judged(Collection.opened(index, embedder=model), questions)
    out = {"set": name, "split": split, "chunks": len(index.chunks), "questions": len(questions)}
    out["folder"] = {figure: base_metrics[figure] for figure in FIGURES}
    for setting, options in SETTINGS.items():
        schema = f"bench_{name}_{setting}".replace("-", "_")
        schema_url = f"{url}{'&' if '?' in url else '?'}schema={schema}"
        copy_into(index, schema_url, options.get("sample"))
        depth = engine.CANDIDATES
        engine.CANDIDATES = options.get("depth", depth)
        try:
            with Collection(schema_url, embedder=model) as collection:
                collection.index.store._queries.exact_rows = options.get("exact_rows", EXACT_ROWS)
                metrics, rows = judged(collection, questions)
        finally:
            engine.CANDIDATES = depth
        out[setting] = {
            **{figure: metrics[figure] for figure in FIGURES},
            "first_differs": sum(a[2] != b[2] for a, b in zip(base, rows, strict=True)),
            "rank_differs": sum(a[0] != b[0] for a, b in zip(base, rows, strict=True)),
            "gate_differs": sum(a[1] != b[1] for a, b in zip(base, rows, strict=True)),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sets", nargs="*", default=[n for n in SETS if (WORK / "idx" / n).is_dir()])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    model = CachedModel()
    with tempfile.TemporaryDirectory(prefix="bench-postgres-") as folder:
        url, server = server_url(Path(folder) / "pg")
        results = []
        for name in args.sets:
            result = compare(name, url, model)
            results.append(result)
            print(json.dumps(result), flush=True)
        if server is not None:
            server.cleanup()
    print(
        f"\n{'set':10} {'setting':14} "
        + " ".join(f"{name:>6}" for name in ("top1", "top3", "mrr", "answ", "rej"))
        + "  first rank gate"
    )
    for result in results:
        print(
            f"{result['set']:10} {'folder':14} "
            + " ".join(f"{result['folder'][f] or 0:6.3f}" for f in FIGURES)
        )
        for setting in SETTINGS:
            row = result[setting]
            print(
                f"{'':10} {setting:14} "
                + " ".join(f"{row[f] or 0:6.3f}" for f in FIGURES)
                + f"  {row['first_differs']:5} {row['rank_differs']:4} {row['gate_differs']:4}"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
