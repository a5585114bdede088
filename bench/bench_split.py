"""Splitting a long paragraph without sentence breaks: time against the same number of words of
ordinary prose (the sample docs, repeated), and how it grows with the paragraph's length.

Two measures, each the median of ``--repeat`` runs, the cases interleaved: the chunker alone
(``chunk_markdown`` with the model's own limit, as a build calls it) and a whole
``semsearch build --dry-run`` (what a user waits for; it also times a few embedding batches).
``--against PATH`` runs the same on another checkout side by side (e.g. the last release).

    .venv/bin/python bench/bench_split.py [--repeat 5] [--against ../main]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CHUNK_ONLY = (
    "import sys, time\n"
    "from semsearch.ingest.chunking import chunk_markdown\n"
    "from semsearch.encode.embedders import load_embedder\n"
    "from semsearch.ingest.tokens import count_tokens\n"
    "model = load_embedder()\n"
    "text = open(sys.argv[1], encoding='utf-8').read()\n"
    "count_tokens('warm up')\n"
    "started = time.perf_counter()\n"
    "chunk_markdown(text, 'o.md', max_tokens=300, count_tokens=count_tokens,\n"
    "               fits=lambda t: model.passage_tokens(t) <= model.max_input_tokens)\n"
    "print(time.perf_counter() - started)\n"
)


def make_cases(work: Path) -> dict[str, Path]:
    """Folders of one file each: a line of N words without a sentence break, and prose."""
    cases = {}
    for words in (15_000, 60_000):
        cases[f"one line of {words:,} words"] = write(
            work / f"line{words}", " ".join(["alpha", "beta"] * (words // 2))
        )
    sample = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md")))
    copies, prose = 0, []
    while sum(len(part.split()) for part in prose) < 60_000:
        prose.append(sample.replace("# ", f"# {copies} ", 1))
        copies += 1
    cases["60,000+ words of prose (baseline)"] = write(work / "prose", "\n\n".join(prose))
    return cases


def write(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "o.md").write_text(body if body.startswith("#") else f"# x\n\n{body}", encoding="utf-8")
    return folder


def timed(checkout: Path, folder: Path, dry_run: bool) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    if not dry_run:
        out = subprocess.run(
            [PYTHON, "-c", CHUNK_ONLY, str(folder / "o.md")],
            env=env,
            check=True,
            capture_output=True,
            text=True,
            cwd=checkout,
        )
        return float(out.stdout)
    command = [
        PYTHON,
        "-m",
        "semsearch",
        "build",
        str(folder),
        "--index",
        str(folder) + "-index",
        "--dry-run",
    ]
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True, cwd=checkout)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, measured side by side")
    args = parser.parse_args()
    checkouts = {"this": REPO, **({"against": args.against.resolve()} if args.against else {})}
    with tempfile.TemporaryDirectory(prefix="semsearch-split-") as work:
        cases = make_cases(Path(work))
        samples: dict[tuple[str, str, bool], list[float]] = {}
        for _ in range(args.repeat):
            for name, folder in cases.items():
                for label, checkout in checkouts.items():
                    for dry_run in (False, True):
                        samples.setdefault((label, name, dry_run), []).append(
                            timed(checkout, folder, dry_run)
                        )
    for label in checkouts:
        print(f"{label} ({checkouts[label]}), medians of {args.repeat}:")
        for dry_run in (False, True):
            what = "build --dry-run" if dry_run else "chunking alone"
            median = {name: statistics.median(samples[(label, name, dry_run)]) for name in cases}
            baseline = median["60,000+ words of prose (baseline)"]
            for name, seconds in median.items():
                print(f"  {what:<16} {name:<36} {seconds:7.2f} s  {seconds / baseline:5.2f}x prose")
            growth = median["one line of 60,000 words"] / median["one line of 15,000 words"]
            print(f"  {what:<16} 4x the words on one line: {growth:.2f}x the time (linear: ≤ 4)")


if __name__ == "__main__":
    main()
