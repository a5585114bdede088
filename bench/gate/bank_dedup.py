"""Bank questions that duplicate or paraphrase an evaluation question (issue 14).

    PYTHONPATH=. python bench/gate/bank_dedup.py [--write]

Compares every bank question with every question of every eval set (tests/data/*.jsonl and the
shared sets) by query-vector similarity (``bank.near_duplicates``: cosine >= 0.90 or ratio margin
>= 1.035) and prints the pairs; ``--write`` removes those bank rows from the TSV. Also lists the
pairs nearest the thresholds, so the cut can be judged by eye.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.gate.common import ROOT, SHARED, CachedEmbedder  # noqa: E402
from semsearch.evaluation.questions import load_questions  # noqa: E402
from semsearch.gate.bank import BANK_FILE, near_duplicates, offtopic_bank  # noqa: E402


def eval_questions() -> list[tuple[str, str, str]]:
    files = sorted((ROOT / "tests/data").glob("*.jsonl")) + sorted(SHARED.glob("*/questions.jsonl"))
    return [
        (f.parent.name if f.name == "questions.jsonl" else f.stem, q.kind or "", q.question)
        for f in files
        for q in load_questions(f)
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    embedder = CachedEmbedder()
    bank = offtopic_bank()
    others = eval_questions()
    bv = embedder.embed_queries([q for _, q in bank])
    ov = embedder.embed_queries([q for *_, q in others])
    pairs = near_duplicates(bv, ov)
    print(f"{len(pairs)} bank questions are near-duplicates of eval questions:")
    for i, j, cos, margin in sorted(pairs, key=lambda p: -p[3]):
        print(f"  cos {cos:.3f} margin {margin:.3f}  [{bank[i][0]}] {bank[i][1]}  ~  {others[j]}")
    offtopic_copies = [(i, j) for i, j, *_ in pairs if others[j][1] == "offtopic"]
    print(f"{len(offtopic_copies)} eval off-topic questions are near-copies of a bank row (listed above).")
    if args.write:
        drop = {bank[i][1] for i, *_ in pairs}
        path = ROOT / "semsearch/data" / BANK_FILE
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if line.startswith("#") or line.split("\t", 1)[-1].strip() not in drop]
        path.write_text("".join(kept), encoding="utf-8")
        print(f"removed {len(lines) - len(kept)} rows from {path}")
    # The nearest pairs below the thresholds, for judging the cut.
    cos = bv @ ov.T
    best = cos.max(1)
    flagged = {i for i, *_ in pairs}
    print("nearest pairs kept:")
    for i in [i for i in np.argsort(-best) if i not in flagged][:10]:
        print(f"  cos {best[i]:.3f}  [{bank[i][0]}] {bank[i][1]}  ~  {others[int(cos[i].argmax())]}")
