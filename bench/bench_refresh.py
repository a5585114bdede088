"""What `ask --refresh` costs beside a plain `ask`, in the same run (issue 25, point 8).

Cases: `cold` (fresh processes, as a user types them: `ask` and `ask --refresh` alternated on the
sample docs with nothing changed), `warm` (the library and MCP path: `Collection.search` with
and without `refresh=True` in one process, model loaded), `changed` (`ask --refresh` after one
file changed: the incremental build it runs), `watch` (`semsearch watch` running: its CPU while
nothing changes, and the time from a file's change to its rebuild's summary, beside a
`semsearch build` of the same change). Medians; the load average before and after.

    .venv/bin/python bench/bench_refresh.py [--quick] [--only cold,warm,changed,watch]
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import PYTHON, QUESTION, REPO, chosen_cases, line, median_seconds, run, work_folder  # noqa: E402

sys.path.insert(0, str(REPO))

from semsearch import Collection  # noqa: E402
from semsearch.build.pipeline import build_index  # noqa: E402


def load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def cold(index: Path, repeat: int) -> None:
    ask = [PYTHON, "-m", "semsearch", "ask", QUESTION, "--index", str(index)]
    run(ask)  # warm the page cache
    plain, refreshed = [], []
    for _ in range(repeat):  # alternated: a change in the machine's load hits both alike
        plain.append(run(ask)[0])
        refreshed.append(run([*ask, "--refresh"])[0])
    a, b = statistics.median(plain), statistics.median(refreshed)
    line(f"cold `ask` ({repeat} runs)", f"{a:.3f} s")
    line("cold `ask --refresh`, nothing changed", f"{b:.3f} s", f"(+{b - a:.3f} s, {b / a:.2f}x)")


def warm(index: Path, repeat: int) -> None:
    with Collection(index) as collection:
        a = median_seconds(lambda: collection.search(QUESTION), repeat)
        b = median_seconds(lambda: collection.search(QUESTION, refresh=True), repeat)
    line(f"warm `Collection.search` ({repeat} calls)", f"{a * 1000:.1f} ms")
    line("warm `search(refresh=True)`, nothing changed", f"{b * 1000:.1f} ms", f"(+{(b - a) * 1000:.1f} ms)")


def changed(docs: Path, index: Path, repeat: int) -> None:
    ask = [PYTHON, "-m", "semsearch", "ask", QUESTION, "--index", str(index), "--refresh", "-q"]
    target = docs / "dostawa.md"
    original = target.read_text(encoding="utf-8")
    seconds = []
    for n in range(repeat):
        target.write_text(original + f"\nDopisek numer {n}.\n", encoding="utf-8")
        started = time.perf_counter()
        run(ask)
        seconds.append(time.perf_counter() - started)
    target.write_text(original, encoding="utf-8")
    median = statistics.median(seconds)
    line(f"cold `ask --refresh`, one file of 10 changed ({repeat} runs)", f"{median:.3f} s")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def watching(docs: Path, index: Path, repeat: int) -> None:
    target = docs / "dostawa.md"
    original = target.read_text(encoding="utf-8")
    watcher = subprocess.Popen(
        [PYTHON, "-m", "semsearch", "watch", str(docs), "--index", str(index), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        watcher.stdout.readline()  # its first build: up to date
        time.sleep(2)
        before = cpu_seconds(watcher.pid)
        time.sleep(10)
        idle = cpu_seconds(watcher.pid) - before
        seen, built = [], []
        for n in range(repeat):
            target.write_text(original + f"\nDopisek {n}.\n", encoding="utf-8")
            started = time.perf_counter()
            watcher.stdout.readline()
            seen.append(time.perf_counter() - started)
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=60)
        for n in range(repeat):  # the same change, built by a fresh `semsearch build`
            target.write_text(original + f"\nDopisek drugi {n}.\n", encoding="utf-8")
            built.append(run([PYTHON, "-m", "semsearch", "build", str(docs), "--index", str(index), "-q"])[0])
    finally:
        watcher.kill()
        target.write_text(original, encoding="utf-8")
    line("`watch` idle, CPU over 10 s", f"{idle:.2f} s")
    a, b = statistics.median(seen), statistics.median(built)
    line(f"`watch`: one file changed -> rebuilt ({repeat} changes)", f"{a:.3f} s")
    line("`build` of the same change, fresh process", f"{b:.3f} s", f"(watch {a / b:.2f}x)")


def main() -> None:
    cases, quick, repeat = chosen_cases(__doc__, "cold,warm,changed,watch")
    print(f"load average before: {load()} ({os.cpu_count()} cores)")
    with work_folder() as work:
        docs, index = work / "docs", work / "index"
        shutil.copytree(REPO / "docs", docs)
        build_index(docs, index)
        if "cold" in cases:
            cold(index, repeat)
        if "warm" in cases:
            warm(index, repeat)
        if "changed" in cases:
            changed(docs, index, 3 if quick else 5)
        if "watch" in cases:
            watching(docs, index, 3 if quick else 5)
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
