"""A cold ``semsearch ask`` against the floor of any cold search: CPU and wall, side by side.

The floor is a bare process that imports numpy, loads the index's model through the same
embedder code path as ``ask`` (``load_embedder``) and embeds the question, on one thread as
``ask`` does. Each round runs the two one after the other (so both meet the same machine load);
the figures are medians over the rounds: CPU is the child's user + system time (``wait4``),
wall its elapsed time. The machine's load average is printed before and after: on a shared
machine the ratio is the figure to read, not the seconds.

    .venv/bin/python bench/bench_cold.py [--runs 9] [--index INDEX]

Without ``--index``, ``docs/`` is first indexed with the default model in a temporary folder.
The target (issue 23): the cold ``ask`` costs at most 1.3x the floor's CPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import PYTHON, QUESTION, REPO, line, work_folder  # noqa: E402

TARGET = 1.3
"""The cold ``ask``'s CPU may be at most this many times the floor's."""


def floor_code(model: str, question: str) -> str:
    """The bare process: numpy, the model loaded as ``ask`` loads it, one question embedded."""
    return (
        "import numpy\n"
        "from semsearch.encode.embedders import load_embedder\n"
        f"load_embedder({model!r}, local_only=True).embed_queries([{question!r}])\n"
    )


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """CPU seconds (user + system) and wall seconds of one child process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: no answer, still a full ask
        raise RuntimeError(f"{command[:4]} failed: {process.stderr.read().decode()[-2000:]}")
    process.stderr.close()
    return usage.ru_utime + usage.ru_stime, wall


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores)"


def compare(index: Path, question: str, runs: int, work: Path) -> dict[str, float]:
    """Medians of ``runs`` rounds of a cold ask and the floor, each round both, in turn. Both
    read compiled bytecode, as an installed semsearch does (cached under ``work``: with
    ``PYTHONDONTWRITEBYTECODE`` set, every run would compile semsearch's modules anew)."""
    from semsearch.store.folder import peek_meta

    meta = peek_meta(index)
    if meta is None:
        raise SystemExit(f"no readable index at {index}")
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONPYCACHEPREFIX": str(work / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ask = [PYTHON, "-m", "semsearch", "ask", question, "--index", str(index), "--quiet"]
    floor = [PYTHON, "-c", floor_code(meta["model"]["spec"], question)]
    timed(ask, env), timed(floor, env)  # warm the page cache: the model file, the index
    samples: dict[str, list[float]] = {"ask_cpu": [], "ask_wall": [], "floor_cpu": [], "floor_wall": []}
    for _ in range(runs):
        for name, command in (("ask", ask), ("floor", floor)):
            cpu, wall = timed(command, env)
            samples[f"{name}_cpu"].append(cpu)
            samples[f"{name}_wall"].append(wall)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--runs", type=int, default=9, help="rounds (each: one ask, one floor)")
    parser.add_argument("--index", type=Path, help="an index of docs/ (default: built now)")
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args()
    with work_folder() as work:
        index = args.index
        if index is None:
            index = work / "index"
            subprocess.run(
                [PYTHON, "-m", "semsearch", "build", str(REPO / "docs"), "--index", str(index), "-q"],
                check=True,
                env={**os.environ, "PYTHONPATH": str(REPO)},
            )
        print(f"cold ask against the floor, {args.runs} rounds; before: {load()}", flush=True)
        found = compare(index, args.question, args.runs, work)
    cpu, wall = found["ask_cpu"] / found["floor_cpu"], found["ask_wall"] / found["floor_wall"]
    line("ask, CPU (user + sys)", f"{found['ask_cpu']:.3f} s", f"{cpu:.2f}x the floor (target <= {TARGET})")
    line("floor, CPU: numpy + load the model + embed the question", f"{found['floor_cpu']:.3f} s")
    line("ask, wall", f"{found['ask_wall']:.3f} s", f"{wall:.2f}x the floor")
    line("floor, wall", f"{found['floor_wall']:.3f} s")
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
