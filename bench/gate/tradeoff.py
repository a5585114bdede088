"""What `eval --calibrate` can buy on `near` questions (in-domain, unanswerable): answered vs
rejected as the cut moves away from the build-time one, through eval's own decision.

    GATE_INDEXES=DIR PYTHONPATH=. python bench/gate/tradeoff.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.gate.common import CachedEmbedder, index_dir, questions_of  # noqa: E402
from semsearch.collection import Collection  # noqa: E402
from semsearch.evaluation.quality import evaluate  # noqa: E402
from semsearch.retrieve.opening import load_index  # noqa: E402

OFFSETS = (-0.02, -0.01, 0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06)

if __name__ == "__main__":
    embedder = CachedEmbedder()
    for name in ("poquad", "docs", "en", "cooking"):
        index = load_index(index_dir(name))
        report = evaluate(Collection.opened(index, embedder=embedder), questions_of(name), k=3)
        groups = {
            "answered": [r for r in report.results if r.question.answerable],
            "rej. near": [r for r in report.results if r.question.kind == "near"],
            "rej. offtopic": [r for r in report.results if r.question.kind == "offtopic"],
        }
        print(f"\n{name}: build cut {index.gate.margin:+.4f}; eval suggests {report.suggested_margin:+.4f}")
        print("| cut | " + " | ".join(groups) + " |")
        print("|---" * (len(groups) + 1) + "|")
        for offset in (*OFFSETS, report.suggested_margin - index.gate.margin):
            cut = index.gate.margin + offset
            cells = []
            for label, rows in groups.items():
                ok = [r.passes_at(cut) == (label == "answered") for r in rows]
                cells.append(f"{np.mean(ok):.2f}")
            print(f"| {cut:+.4f} ({offset:+.2f}) | " + " | ".join(cells) + " |")
