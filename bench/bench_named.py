"""What the "names the folder never mentions" rule refuses (``Index.names_unheld``, the gate's
``names_unheld``), per set, before and after names written as words counted (``retrieve.names``:
``DHL``, ``Revolut Pay``; before: only names as code writes them, ``PAY-999``, ``ActionMailer``):
answerable questions it refuses (each one a loss) and unanswerable ones, and the gate's answered
and off-topic refused shares with the rule as it was and as it is, through ``eval``'s decision.

Every set of the ranking bench (``ranking_sets.py``: its indexes and cached vectors) and
``bench/data/unmentioned_names.jsonl``, questions naming products, services and tools that the
sets' folders never mention, asked of the set each row names (written by the team before the
rule was measured; every row is unanswerable, a one-line rationale each):

    .venv/bin/python bench/bench_named.py [--only SET,...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking_sets import SETS, CachedModel, Case, load_case  # noqa: E402

from semsearch.evaluation.quality import Question  # noqa: E402
from semsearch.gate.decision import GATE_DEPTH, read_passage  # noqa: E402
from semsearch.retrieve.names import all_unheld  # noqa: E402

NAMES_FILE = Path(__file__).resolve().parent / "data" / "unmentioned_names.jsonl"


def unmentioned(name: str) -> list[Question]:
    """The rows of ``NAMES_FILE`` asked of set ``name`` (unanswerable, kind ``name``)."""
    rows = [json.loads(line) for line in NAMES_FILE.read_text("utf-8").splitlines() if line.strip()]
    return [
        Question(line=n, question=r["question"], kind="name")
        for n, r in enumerate(rows, 1)
        if r["set"] == name
    ]


def measure(case: Case, extra: list[Question], model: CachedModel) -> dict:
    """Per question: refused by the rule before / after, and the gate's verdict before / after."""
    index = case.index
    questions = case.questions + extra
    vectors = (
        np.vstack([case.vectors, model.embed_queries([q.question for q in extra])]) if extra else case.vectors
    )
    found: dict[str, list] = {"rule_before": [], "rule_after": [], "gate_before": [], "gate_after": []}
    for question, vector in zip(questions, vectors, strict=True):
        cosine = index.cosines(vector)
        parsed = index.parse(question.question)
        ranked = index.ranked(parsed, vector, GATE_DEPTH, cosine=cosine)
        read = read_passage(ranked)
        baseline = index.gate.baseline(question.question, vector, cosine)
        before = bool(all_unheld(index.named_rows(parsed)))
        after = bool(index.names_unheld(parsed, vector, ranked))
        found["rule_before"].append(before)
        found["rule_after"].append(after)
        for key, unheld in (("gate_before", before), ("gate_after", after)):
            found[key].append(index.gate.decide(read.score, read.exact, baseline, unheld).answered)
    return {"questions": questions, **found}


def _share(flags: list[bool]) -> str:
    return f"{np.mean(flags):.3f} ({len(flags)})" if flags else "–"


def _pair(m: dict, rows: list[int], answered: bool) -> str:
    """The share of ``rows`` the gate answered (or refused), before / after."""
    shares = [[m[key][n] == answered for n in rows] for key in ("gate_before", "gate_after")]
    return f"{_share(shares[0])} / {_share(shares[1])}" if rows else "–"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", help="comma-separated set names")
    names = (parser.parse_args().only or ",".join(SETS)).split(",")
    model = CachedModel()
    print(
        "| set | answerable refused by the rule before / after | off-topic refused by the rule "
        "before / after | answered before / after | off-topic refused before / after "
        "| unmentioned names refused before / after |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    changed = []
    for name in names:
        m = measure(load_case(name, model, rebuild=False), unmentioned(name), model)
        groups = {"answerable": [], "offtopic": [], "name": []}
        for n, q in enumerate(m["questions"]):
            group = "answerable" if q.answerable else q.kind if q.kind in ("offtopic", "name") else None
            if group:
                groups[group].append(n)
            if m["gate_before"][n] != m["gate_after"][n] or m["rule_before"][n] != m["rule_after"][n]:
                changed.append(f"  {name}: {'answerable' if q.answerable else q.kind}: {q.question}")

        print(
            f"| {name} | {sum(m['rule_before'][n] for n in groups['answerable'])} / "
            f"{sum(m['rule_after'][n] for n in groups['answerable'])} | "
            f"{sum(m['rule_before'][n] for n in groups['offtopic'])} / "
            f"{sum(m['rule_after'][n] for n in groups['offtopic'])} of {len(groups['offtopic'])} | "
            f"{_pair(m, groups['answerable'], True)} | {_pair(m, groups['offtopic'], False)} | "
            f"{_pair(m, groups['name'], False)} |"
        )
    print("\nQuestions whose rule or verdict changed:")
    print("\n".join(changed) or "  none")


if __name__ == "__main__":
    main()
