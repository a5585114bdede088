"""How often a result's snippet shows the answer: the old snippet (the passage's first 320
characters, whitespace folded) against the new ones (the window around the best sentence or
line, by keywords or by embedding each sentence), at a similar length.

For every answerable question of a set, `ask`'s top 3 (hybrid, the index's gate) are searched;
each shown passage that holds the answer span (casefolded, whitespace folded) counts once, and
the snippet hits when it holds the whole span too.

    .venv/bin/python bench/bench_snippets.py INDEX QUESTIONS [INDEX QUESTIONS ...]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from semsearch import Collection  # noqa: E402
from semsearch.retrieve.snippets import Terms, best_snippet, question_terms  # noqa: E402


def old_snippet(text: str, limit: int = 320) -> str:
    """The snippet `ask` printed before: whitespace-folded text, cut at a word boundary."""
    folded = " ".join(text.split())
    if len(folded) <= limit:
        return folded
    cut = folded.rfind(" ", 0, limit)
    return folded[: cut if cut > limit // 2 else limit].rstrip(" ,;:") + " …"


def answers(row: dict) -> list[str]:
    answer = row["answer"]
    return [answer] if isinstance(answer, str) else list(answer)


def holds(text: str, row: dict) -> bool:
    return any(fold(answer) in fold(text) for answer in answers(row))


def fold(text: str) -> str:
    return " ".join(text.replace("…", " ").split()).casefold()


def methods(collection: Collection, question: str) -> dict[str, Terms]:
    language = collection.index.corpus_language
    keywords = collection.index.keywords
    made = {
        "keywords": question_terms(question, language),
        "keywords-idf": question_terms(question, language, keywords.idf if keywords else None),
    }
    return {name: made[name] for name in METHODS if name in made}


def measure(index: Path, questions: Path) -> dict:
    rows = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("answer")]
    counts: dict[str, list] = {}
    with Collection(index) as collection:
        for row in rows:
            answer = collection.search(row["question"], 3)
            for hit in answer.hits:
                if not holds(hit.text, row):
                    continue
                shown = {"old": old_snippet(hit.text)}
                for name, terms in methods(collection, answer.question).items():
                    start = time.perf_counter()
                    made = best_snippet(hit.text, hit.lines[0], terms, end_line=hit.lines[1])
                    counts.setdefault(f"{name} ms", []).append(time.perf_counter() - start)
                    shown[name] = made.text
                for name, text in shown.items():
                    counts.setdefault(name, []).append(holds(text, row))
                    lost = holds(shown["old"], row) and not holds(text, row)
                    if VERBOSE and name == "keywords-idf" and lost:
                        print(f"MISS {row['question']!r} answer {row['answer']!r}\n{text}\n{terms.weights}\n")
                    counts.setdefault(f"{name} chars", []).append(len(fold(text)))
    return counts


VERBOSE = "-v" in sys.argv
METHODS = ("old", "keywords", "keywords-idf")


def main() -> None:
    import os

    import semsearch.retrieve.snippets

    semsearch.retrieve.snippets.LEAD = float(os.environ.get("LEAD", semsearch.retrieve.snippets.LEAD))
    args = [a for a in sys.argv[1:] if a != "-v"]
    for index, questions in zip(args[::2], args[1::2], strict=True):
        counts = measure(Path(index), Path(questions))
        passages = len(counts.get("old", []))
        print(f"\n{questions}: {passages} shown passages hold the answer")
        for name in ("old", "keywords", "keywords-idf", "embedding", "idf+embedding"):
            if name not in counts:
                continue
            ms = counts.get(f"{name} ms")
            timing = f"   {np.median(ms) * 1000:6.1f} ms/passage" if ms else ""
            print(
                f"  {name:<14} {np.mean(counts[name]):6.1%}  "
                f"(mean {np.mean(counts[name + ' chars']):.0f} chars){timing}"
            )


if __name__ == "__main__":
    main()
