"""Per-question latency through a running `semsearch mcp` server (warm: after its first question)
against a cold `semsearch ask` process per question and against the library in process, p50 and
p95 over the same questions, in one run (machines are shared and noisy: read the ratios).

    .venv/bin/python bench/bench_mcp.py                     # sample docs/, 30 questions (~1 min)
    .venv/bin/python bench/bench_mcp.py --rows 1000000      # also a synthetic 1M-chunk index
                                                            # (+2 min, 2 GB of temporary files)

The server is spoken to in raw JSON-RPC lines, as a client would, offering protocol version
2025-06-18: what is timed is the server and the pipe, not a client library. Needs the mcp extra.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's semsearch, here as in the processes it starts
PYTHON = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
PROTOCOL = "2025-06-18"


def line(label: str, value: str, ratio: str = "") -> None:
    print(f"  {label:<58} {value:>16} {ratio}", flush=True)


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ms = np.array(samples) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def questions(count: int) -> list[str]:
    """``count`` labelled questions about the sample docs, spread over the whole file."""
    rows = [json.loads(row) for row in (REPO / "tests/data/docs_questions.jsonl").read_text().splitlines()]
    step = max(1, len(rows) // count)
    return [row["question"] for row in rows[::step][:count]]


class Server:
    """A `semsearch mcp` process spoken to in JSON-RPC lines."""

    def __init__(self, index: Path):
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [PYTHON, "-m", "semsearch", "mcp", "--index", str(index)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=ENV,
            text=True,
        )
        self.ids = 0
        hello = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        if hello["protocolVersion"] != PROTOCOL:
            raise RuntimeError(f"the server answered protocol {hello['protocolVersion']}, not {PROTOCOL}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.ready = time.perf_counter() - started

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.ids += 1
        self.send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        reply = json.loads(self.process.stdout.readline())
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def search(self, question: str, **arguments) -> tuple[float, dict]:
        started = time.perf_counter()
        result = self.request(
            "tools/call", {"name": "search", "arguments": {"question": question, **arguments}}
        )
        seconds = time.perf_counter() - started
        if result.get("isError"):
            raise RuntimeError(result["content"][0]["text"])
        return seconds, result["structuredContent"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def ask_seconds(index: Path, question: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [PYTHON, "-m", "semsearch", "ask", question, "--index", str(index), "-k", "5"],
        capture_output=True,
        env=ENV,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr.decode()[-2000:])
    return time.perf_counter() - started


def compare(index: Path, asked: list[str]) -> None:
    """The three ways of asking, taking turns question by question (so that a change in the
    machine's load falls on all three alike)."""
    from semsearch import Collection

    server = Server(index)
    collection = Collection(index)
    warm, cold, library = [], [], []
    try:
        first, _ = server.search(asked[0], k=5)
        collection.search(asked[0], 5)
        for question in asked:
            warm.append(server.search(question, k=5)[0])
            cold.append(ask_seconds(index, question))
            started = time.perf_counter()
            collection.search(question, 5)
            library.append(time.perf_counter() - started)
    finally:
        server.close()
        collection.close()

    (warm50, warm95), (cold50, cold95), (lib50, lib95) = map(percentiles, (warm, cold, library))
    line("server start to initialized (imports mcp, no model yet)", f"{server.ready * 1000:.0f} ms")
    line("server, first question (opens the index, loads the model)", f"{first * 1000:.0f} ms")
    line(
        f"server, warm: p50 / p95 over {len(asked)} questions",
        f"{warm50:.1f} / {warm95:.1f} ms",
        f"(goal p50 ≤ 30 ms: {'met' if warm50 <= 30 else 'MISSED'})",
    )
    line(
        "semsearch ask, cold process per question: p50 / p95",
        f"{cold50:.0f} / {cold95:.0f} ms",
        f"{cold50 / warm50:.0f}x / {cold95 / warm95:.0f}x the server's",
    )
    line(
        "library in process (Collection.search): p50 / p95",
        f"{lib50:.1f} / {lib95:.1f} ms",
        f"server - library = {warm50 - lib50:+.1f} ms at p50 (protocol, pipe, JSON)",
    )


def synthetic_index(work: Path, rows: int) -> Path:
    """A ``rows``-chunk index of random unit vectors and varied text (as in bench.py's case 4)."""
    from measure import synthetic_text

    index = work / f"index-{rows}"
    index.mkdir()
    rng = np.random.default_rng(0)
    vectors = np.lib.format.open_memmap(index / "vectors.npy", "w+", np.float32, (rows, 384))
    for start in range(0, rows, 250_000):
        block = rng.standard_normal((min(250_000, rows - start), 384), dtype=np.float32)
        vectors[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    np.save(index / "offtopic.npy", np.asarray(vectors[:300]))
    vectors.flush()
    del vectors
    synthetic_text(index, rows, docs_root=work / "no-docs")
    return index


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=30, help="how many questions (default 30)")
    parser.add_argument("--index", type=Path, help="an index of docs/ to reuse (default: build one)")
    parser.add_argument("--rows", type=int, default=0, help="also a synthetic index of this many chunks")
    args = parser.parse_args()
    asked = questions(args.questions)
    work = Path(tempfile.mkdtemp(prefix="semsearch-bench-mcp-"))
    try:
        index = args.index
        if index is None:
            index = work / "index"
            subprocess.run(
                [PYTHON, "-m", "semsearch", "build", str(REPO / "docs"), "--index", str(index)],
                check=True,
                capture_output=True,
                env=ENV,
            )
        print(f"MCP server against cold ask: sample docs/, {len(asked)} questions")
        compare(index, asked)
        if args.rows:
            started = time.perf_counter()
            big = synthetic_index(work, args.rows)
            made = time.perf_counter() - started
            print(f"MCP server against cold ask: {args.rows:,} chunks (made in {made:.0f} s)")
            compare(big, asked)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
