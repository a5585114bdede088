"""How often the snippet `ask` prints shows the answer.

For every answerable question of a set that has a labelled ``answer``, `ask`'s results are
searched (hybrid, the index's gate, top 3); when the right passage ranks first (as ``eval``
judges it: the labelled ``source`` and ``answer``), its snippet hits when it holds the whole
answer text too (casefolded, whitespace folded, Markdown's emphasis and link targets aside: the
snippet shows the lines as written, the answer is labelled on the text). The figure is the
share of those questions whose snippet hits; with ``-v`` each miss is printed.

    .venv/bin/python bench/bench_snippets.py [-v] [--room CHARS,LINES] INDEX QUESTIONS [INDEX QUESTIONS ...]

``--room`` gives the first result's snippet that room instead of its own (``snippets.FIRST_CHARS``,
``FIRST_LINES``): ``--room 320,6`` measures the choice of lines at the other results' room.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from semsearch import Collection  # noqa: E402
from semsearch.evaluation.questions import Question, is_hit  # noqa: E402

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_EMPHASIS = re.compile(r"[*_`~]")


def fold(text: str) -> str:
    """Text as compared: links as their text, emphasis marks and "…" gone, spaces folded."""
    text = _LINK.sub(lambda m: m.group(1) or m.group(2) or "", text.replace("…", " "))
    return " ".join(_EMPHASIS.sub("", text).split()).casefold()


def questions(path: Path) -> list[Question]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    listed = lambda value: tuple([value] if isinstance(value, str) else value or ())  # noqa: E731
    return [
        Question(n, row["question"], listed(row.get("answer")), listed(row.get("source")))
        for n, row in enumerate(rows, 1)
        if row.get("answer")
    ]


def measure(index: Path, path: Path) -> dict:
    """The questions whose right passage ranks first, how many of their snippets show the
    answer, the snippets' length and the time each took."""
    first, shown, chars, seconds = 0, 0, [], []
    with Collection(index) as collection:
        for question in questions(path):
            answer = collection.search(question.question, 3)
            if not answer.hits or not is_hit(question, answer.hits[0].chunk):
                continue
            first += 1
            start = time.perf_counter()
            snippet = answer.hits[0].snippet(answer.question, *ROOM)
            seconds.append(time.perf_counter() - start)
            chars.append(len(fold(snippet.text)))
            if any(fold(text) in fold(snippet.text) for text in question.answers):
                shown += 1
            elif VERBOSE:
                print(f"MISS {question.question!r}\n  answer {question.answers[0]!r}\n{snippet.text}\n")
    return {"first": first, "shown": shown, "chars": chars, "seconds": seconds}


VERBOSE = "-v" in sys.argv
ROOM: tuple[int, ...] = ()


def main() -> None:
    global ROOM
    args = [a for a in sys.argv[1:] if a != "-v"]
    if args[:1] == ["--room"]:
        ROOM, args = tuple(int(n) for n in args[1].split(",")), args[2:]
    for index, path in zip(args[::2], args[1::2], strict=True):
        found = measure(Path(index), Path(path))
        share = found["shown"] / found["first"] if found["first"] else float("nan")
        chars = statistics.mean(found["chars"] or [0])
        milliseconds = 1000 * statistics.median(found["seconds"] or [0])
        print(
            f"{path}: {found['shown']}/{found['first']} = {share:.1%} of the questions whose right "
            f"passage ranks first show the answer in its snippet (mean {chars:.0f} chars, "
            f"median {milliseconds:.2f} ms a snippet)"
        )


if __name__ == "__main__":
    main()
