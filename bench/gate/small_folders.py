"""The gate on folders of one file: each file of `docs/` indexed alone (its own cut, derived from
its own few sections), asked its own questions from `docs_questions.jsonl` and the set's
off-topic ones, through eval's own decision.

    PYTHONPATH=. python bench/gate/small_folders.py [WORK_DIR]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.gate.common import ROOT, CachedEmbedder  # noqa: E402
from semsearch.build.pipeline import build_index  # noqa: E402
from semsearch.evaluation.quality import evaluate, load_questions  # noqa: E402
from semsearch.retrieve.opening import load_index  # noqa: E402


def one_file_index(source: Path, work: Path) -> Path:
    """``source`` alone in a docs folder of its own, indexed (reused when already built)."""
    docs, index = work / source.stem / "docs", work / source.stem / "index"
    if not index.exists():
        docs.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, docs / source.name)
        build_index(docs, index)
    return index


def main(work: Path) -> None:
    embedder = CachedEmbedder()
    questions = load_questions(ROOT / "tests/data/docs_questions.jsonl")
    totals = {"answered": [0, 0], "off-topic refused": [0, 0]}
    print("| file | chunks | cut | answered | off-topic refused |\n|---|---|---|---|---|")
    for source in sorted((ROOT / "docs").glob("*.md")):
        index = load_index(one_file_index(source, work))
        asked = [q for q in questions if source.name in (q.sources or ()) or q.kind == "offtopic"]
        results = evaluate(index, embedder, asked, k=3).results
        answerable = [r.passes_at(index.gate.margin) for r in results if r.question.answerable]
        refused = [not r.passes_at(index.gate.margin) for r in results if r.question.kind == "offtopic"]
        for label, outcomes in zip(totals, (answerable, refused), strict=True):
            totals[label][0] += sum(outcomes)
            totals[label][1] += len(outcomes)
        print(
            f"| {source.name} | {len(index.chunks)} | {index.gate.margin:+.3f} "
            f"| {sum(answerable)}/{len(answerable)} | {sum(refused)}/{len(refused)} |"
        )
    print(" ".join(f"{label} {done}/{count} ({done / count:.2f})" for label, (done, count) in totals.items()))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="semsearch-small-")))
