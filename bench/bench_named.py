"""Names the folder never mentions, per set (``retrieve.names``): what the gate refuses for names
written as code (``PAY-999``, ``ActionMailer``: ``names.all_unheld``; each answerable question
refused is a loss); which questions get the note "Not found in the searched documents" for
names written as words (``DHL``, ``Revolut Pay``: ``named.names_unmentioned``), answerable (a
note about a name the folder does cover, under a right answer) and not; and the gate's answered
and refused shares, through ``Index.judge``.

Every set of the ranking bench (``ranking_sets.py``: its indexes and cached vectors), and
``bench/data/unmentioned_names.jsonl``: questions naming products, services and tools the sets'
folders never mention, asked of the set each row names (written by the team before the rule was
measured; every row is unanswerable, a one-line rationale each):

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

from semsearch.evaluation.questions import Question  # noqa: E402
from semsearch.gate.decision import GATE_DEPTH  # noqa: E402
from semsearch.retrieve.searcher import Searcher  # noqa: E402

NAMES_FILE = Path(__file__).resolve().parent / "data" / "unmentioned_names.jsonl"


def unmentioned(name: str) -> list[Question]:
    """The rows of ``NAMES_FILE`` asked of set ``name`` (unanswerable, kind ``name``)."""
    rows = [json.loads(line) for line in NAMES_FILE.read_text("utf-8").splitlines() if line.strip()]
    chosen = [(n, r) for n, r in enumerate(rows, 1) if r["set"] == name]
    return [Question(line=n, question=r["question"], kind="name") for n, r in chosen]


def measure(case: Case, extra: list[Question], model: CachedModel) -> list[dict]:
    """Per question: its group, whether the gate answered it, refused it for names written as
    code, and the names written as words it is told the folder never mentions."""
    searcher = Searcher(case.index)
    vectors = case.vectors
    if extra:
        vectors = np.vstack([vectors, model.embed_queries([q.question for q in extra])])
    found = []
    for question, vector in zip(case.questions + extra, vectors, strict=True):
        judged = searcher.judge(question.question, vector, GATE_DEPTH)
        group = "answerable" if question.answerable else question.kind
        found.append(
            {
                "question": question.question,
                "group": group,
                "answered": judged.verdict.answered,
                "unheld": judged.unheld,
                "noted": judged.unmentioned,
            }
        )
    return found


def _count(rows: list[dict], group: str, key: str) -> str:
    chosen = [r for r in rows if r["group"] == group]
    return f"{sum(bool(r[key]) for r in chosen)} of {len(chosen)}" if chosen else "–"


def _share(rows: list[dict], group: str, answered: bool) -> str:
    """The share of ``group`` the gate answered (or refused)."""
    chosen = [r for r in rows if r["group"] == group]
    if not chosen:
        return "–"
    return f"{sum(r['answered'] == answered for r in chosen) / len(chosen):.3f} ({len(chosen)})"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", help="comma-separated set names")
    names = (parser.parse_args().only or ",".join(SETS)).split(",")
    model = CachedModel()
    print(
        "| set | answerable refused for names as code | answerable with a note | off-topic with a "
        "note | answered | off-topic refused | unmentioned names: noted, refused |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    listed = []
    for name in names:
        rows = measure(load_case(name, model, rebuild=False), unmentioned(name), model)
        print(
            f"| {name} | {_count(rows, 'answerable', 'unheld')} | {_count(rows, 'answerable', 'noted')} "
            f"| {_count(rows, 'offtopic', 'noted')} | {_share(rows, 'answerable', True)} "
            f"| {_share(rows, 'offtopic', False)} | {_count(rows, 'name', 'noted')}, "
            f"{_share(rows, 'name', False)} |"
        )
        listed += [
            f"  {name}: {r['group']}: {r['question']} -> {', '.join(r['noted'] or r['unheld'])}"
            for r in rows
            if r["noted"] or r["unheld"]
        ]
    print("\nQuestions with a note or refused for names:")
    print("\n".join(listed) or "  none")


if __name__ == "__main__":
    main()
