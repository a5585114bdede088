"""How often the answer lands in the `ask --context` prompt, by --expand and token budget.

For every answerable question of a set: `ask`'s top k (hybrid, the index's gate), the prompt
built at each budget with `--expand chunk` (the default), `section` and `file`, and whether
the answer span (casefolded, whitespace folded) is in its sources. A question the gate refuses
counts as a miss for all.

    .venv/bin/python bench/bench_context.py INDEX QUESTIONS [INDEX QUESTIONS ...] [-k 3]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from semsearch import Collection  # noqa: E402

BUDGETS = (500, 1000, 2000, 3000)
EXPANSIONS = ("chunk", "section", "file")


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def answers(row: dict) -> list[str]:
    answer = row["answer"]
    return [answer] if isinstance(answer, str) else list(answer)


def measure(index: Path, questions: Path, k: int) -> dict[tuple[str, int], list[bool]]:
    rows = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("answer")]
    found: dict[tuple[str, int], list[bool]] = {}
    with Collection(index) as collection:
        for row, answer in zip(rows, collection.search_many([r["question"] for r in rows], k), strict=True):
            for expand in EXPANSIONS:
                for budget in BUDGETS:
                    held = False
                    if answer.hits:
                        prompt = collection.context_prompt(answer, budget, expand)
                        sources = fold(prompt.text.rsplit("Question:", 1)[0])
                        held = any(fold(a) in sources for a in answers(row))
                    found.setdefault((expand, budget), []).append(held)
    return found


def main() -> None:
    args = sys.argv[1:]
    k = 3
    if "-k" in args:
        at = args.index("-k")
        k = int(args[at + 1])
        del args[at : at + 2]
    for index, questions in zip(args[::2], args[1::2], strict=True):
        found = measure(Path(index), Path(questions), k)
        count = len(found[(EXPANSIONS[0], BUDGETS[0])])
        print(f"\n{questions} (top {k}, {count} answerable questions): answer in the context")
        print("  | --expand | " + " | ".join(f"{b} tokens" for b in BUDGETS) + " |")
        print("  | --- | " + " | ".join("---:" for _ in BUDGETS) + " |")
        for expand in EXPANSIONS:
            cells = [f"{sum(found[(expand, b)]) / count:.1%}" for b in BUDGETS]
            print(f"  | {expand} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
