"""Today's gate on every set, through `semsearch eval`'s own code path (``evaluate``).

    PYTHONPATH=. python bench/gate/baseline.py [--json OUT]

Per set: answered (answerable questions whose first result passes the gate), rejected
off-topic, rejected near (in-domain unanswerable), top-1, top-3, the build-time threshold.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.gate.common import REPORTED_ON, TUNED_ON, CachedEmbedder, index_dir, questions_of  # noqa: E402
from semsearch.collection import Collection  # noqa: E402
from semsearch.evaluation.quality import _metrics, evaluate  # noqa: E402
from semsearch.retrieve.opening import load_index  # noqa: E402


def measure(name: str, embedder: CachedEmbedder) -> dict:
    index = load_index(index_dir(name))
    report = evaluate(Collection.opened(index, embedder=embedder), questions_of(name), k=3)
    results = report.results
    off = [r for r in results if r.question.kind == "offtopic"]
    near = [r for r in results if r.question.kind == "near"]
    m = report.metrics
    return {
        "set": name,
        "split": "tuned-on" if name in TUNED_ON else "reported-on",
        "answerable": m["answerable"],
        "answered": m["answered"],
        "rejected_offtopic": _metrics(off, 3)["rejected"] if off else None,
        "rejected_near": _metrics(near, 3)["rejected"] if near else None,
        "n_offtopic": len(off),
        "n_near": len(near),
        "top1": m["top1"],
        "top3": m["top3"],
        "min_score": round(index.gate.margin, 4),
    }


def table(rows: list[dict]) -> str:
    head = "| set | split | answered | rej. offtopic | rej. near | top-1 | top-3 | min_score |"
    lines = [head, "|" + "---|" * 8]
    for r in rows:

        def f(v):
            return "–" if v is None else f"{v:.3f}"

        lines.append(
            f"| {r['set']} | {r['split']} | {f(r['answered'])} ({r['answerable']}) | "
            f"{f(r['rejected_offtopic'])} ({r['n_offtopic']}) | {f(r['rejected_near'])} ({r['n_near']}) | "
            f"{f(r['top1'])} | {f(r['top3'])} | {r['min_score']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()
    embedder = CachedEmbedder()
    rows = [measure(name, embedder) for name in (*TUNED_ON, *REPORTED_ON)]
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
