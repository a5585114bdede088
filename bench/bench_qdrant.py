"""The index in a folder against the same index in Qdrant's local mode (``qdrant:///DIR``), side
by side in one run: writing and reading a synthetic index (100,000 chunks × 384, or 10,000 with
``--quick``), one question searched in memory on each, and a cold ``ask`` process on the sample
docs/ built with the default model.

    .venv/bin/python bench/bench_qdrant.py           # 100 k chunks
    .venv/bin/python bench/bench_qdrant.py --quick   # 10 k chunks
    .venv/bin/python bench/bench_qdrant.py --only synthetic
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from measure import PYTHON, QUESTION, REPO, chosen_cases, line, median_of, median_seconds, work_folder


def _synthetic(rows: int) -> tuple:
    from semsearch.encode.keywords import build_keyword_index
    from semsearch.encode.keywords import settings as keyword_settings
    from semsearch.gate.bank import bank_sha256
    from semsearch.ingest.chunking import Chunk
    from semsearch.store.meta import IndexMeta

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((rows, 384), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    per_file = 20
    chunks, files = [], {}
    for i in range(rows):
        source = f"f{i // per_file}.md"
        text = f"Sekcja {i % 5000} opisuje temat {i % 997} i kod ZK-{i}."
        chunks.append(Chunk(f"{source}#{i % per_file}", source, ("A", "B"), text, 1, 2, 20))
        files.setdefault(
            source, {"sha256": f"{i // per_file:064x}", "size": 1, "mtime_ns": 1, "rows": [i, i]}
        )
        files[source]["rows"][1] = i + 1
    keywords = build_keyword_index([c.text for c in chunks], "pl")
    meta = {
        "format": 1,
        "semsearch_version": "bench",
        "built_at": "2026-01-01T00:00:00+00:00",
        "docs_root": "/nonexistent",
        "model": {"spec": "bench:random", "dim": 384, "max_input_tokens": 512},
        "chunking": {"max_tokens": 300},
        "chunks": rows,
        "files": files,
        "skipped": {},
        "corpus_language": "pl",
        "min_score": {"value": 0.05},
        "keywords": keyword_settings("pl"),
        "offtopic": {"bank_sha256": bank_sha256(), "questions": 300, "background_rows": list(range(300))},
    }
    return vectors, chunks, IndexMeta.from_json(meta, "the synthetic index"), vectors[:300].copy(), keywords


def case_synthetic(work: Path, rows: int, repeat: int) -> None:
    from semsearch.retrieve.opening import load_index
    from semsearch.retrieve.searcher import Searcher
    from semsearch.store.stores import open_store

    print(f"1. a synthetic index of {rows:,} chunks × 384: write, read, one question in memory")
    from semsearch.store.built import Built

    vectors, chunks, meta, offtopic, keywords = _synthetic(rows)
    query = vectors[123] + 0.1 * np.random.default_rng(1).standard_normal(384, dtype=np.float32)
    query /= np.linalg.norm(query)
    places = {"folder": work / "folder-index", "qdrant": f"qdrant://{work / 'qdrant-store'}"}
    found = {}
    for name, where in places.items():
        store = open_store(where)
        started = time.perf_counter()
        with store.lock():
            store.write(Built(vectors, chunks, meta, offtopic, keywords))
        line(f"{name}: write", f"{time.perf_counter() - started:.2f} s")
        # opened at most 3 times: local mode takes about a minute per open at 100 k chunks
        line(
            f"{name}: open (read and check)",
            f"{median_seconds(lambda w=where: load_index(w), min(repeat, 3)):.3f} s",
        )
        searcher = Searcher(load_index(where))
        question = searcher.parse("temat 5")
        seconds = median_seconds(lambda s=searcher, q=question: s.ranked(q, query, 10, mode="dense"), repeat)
        line(f"{name}: one dense question, top 10, in memory", f"{seconds * 1000:.1f} ms")
        found[name] = [r.row for r in searcher.ranked(question, query, 10, mode="dense")]
    line("the same top 10 on both", str(found["folder"] == found["qdrant"]))


def case_sample(work: Path, repeat: int) -> None:
    from semsearch.build.pipeline import build_index

    print("2. the sample docs/ with the default model: build, then a cold `ask` process")
    places = {"folder": work / "sample-index", "qdrant": f"qdrant://{work / 'sample-store'}"}
    for name, where in places.items():
        started = time.perf_counter()
        build_index(REPO / "docs", where)
        line(f"{name}: build", f"{time.perf_counter() - started:.1f} s")
    for name, where in places.items():
        seconds, peak = median_of(repeat, [PYTHON, "-m", "semsearch", "ask", QUESTION, "--index", str(where)])
        line(f"{name}: cold ask", f"{seconds:.2f} s", f"peak {peak} MB")
    seconds, _ = median_of(repeat, [PYTHON, "-c", "import qdrant_client"])
    line("a process that only imports qdrant_client", f"{seconds:.2f} s")


def main() -> None:
    cases, quick, repeat = chosen_cases(__doc__, "synthetic,sample")
    with work_folder() as work:
        if "synthetic" in cases:
            case_synthetic(work, 10_000 if quick else 100_000, repeat)
        if "sample" in cases:
            case_sample(work, repeat)


if __name__ == "__main__":
    main()
