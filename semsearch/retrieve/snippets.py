"""Snippets: the lines of a passage that answer the question.

A passage is cut into units: each line, and each sentence of a long prose line. Every unit is
scored by the question's keywords it holds (BM25 tokens, stemmed as the index stems them, each
weighted by how rare it is in the corpus), and the snippet is the window of consecutive units
that fits a character budget and a few lines and holds the most keyword weight, the first words
of the next unit filling what room is left. The question's words that the passage's own heading
holds weigh nothing there: the whole section is about them, they do not say where in it the
answer is, and a section whose heading is the question shows its opening (``LEAD``). A window
starting at a line of code takes the comment lines just above it, which say what it does. Lines
keep their breaks, indentation and list markers; a window inside a code fence shows the fence's
opening and closing lines; what is left out is marked with "…".

The first result, the one read, gets twice the room of the others (``FIRST_CHARS``,
``FIRST_LINES``). Measured with ``bench/bench_snippets.py`` (bench/RESULTS.md): of the
questions whose right passage ranks first, the share whose labelled answer the snippet shows,
on every dev set. Embedding each sentence with the index's model was measured and not kept: one
sentence costs about as much CPU as embedding the question (three sentences, more than a cold
``ask``'s whole margin over its floor), and it chose no better than the keywords at the same
room; keywords cost ~1 ms.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from semsearch.encode.keywords import tokenize

SNIPPET_CHARS = 320
"""Characters of the passage a snippet shows at most (its "…" marks aside)."""
SNIPPET_LINES = 6
"""Lines of the passage a snippet shows at most."""
FIRST_CHARS = 640
"""Characters the first result's snippet shows at most: the answer a reader reads first. At
``SNIPPET_CHARS`` it showed the labelled answer for 72–90% of the questions whose right passage
ranks first on the dev sets; at this room, 89–100% (bench/RESULTS.md)."""
FIRST_LINES = 10
"""Lines the first result's snippet shows at most."""
ELLIPSIS = "…"

_SENTENCE_END = re.compile(r"[.!?…][\"'”»)\]]*\s+")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"\s*(?:#|//|--|;|/\*|\*|<!--)")
"""A line of code that is a comment (shell, Python, TOML and YAML; C-like; SQL; INI; HTML)."""
LEAD = 2.0
"""Weight given to a window that starts the passage, as if its first sentence held a keyword
of that weight (about a word in one chunk of five): a topic sentence often answers a question
in other words. Chosen on the team's question sets (``bench/bench_snippets.py``)."""
_MIN_TAIL = 40
"""Room left in the budget worth showing the first words of the unit that follows."""
_LONG_LINE = 120
"""A line longer than this is prose to cut into sentences; shorter lines are units whole."""


@dataclass(frozen=True)
class Snippet:
    """The lines of a passage shown for a hit."""

    text: str
    """Lines of the passage as written; "…" marks what is left out."""
    start_line: int
    """First line of the file the snippet shows (1-based)."""
    end_line: int
    """Last line of the file the snippet shows (inclusive)."""


@dataclass(frozen=True)
class Unit:
    """A line, or a sentence of a long line, of a passage: ``text[start:end]``."""

    line: int
    """Its line in the passage (0-based)."""
    start: int
    end: int
    fence: int | None = None
    """The line opening the code fence it is in (None: not in code)."""
    closes: bool = False
    """It is the line closing its code fence."""


Weigh = Callable[[Sequence[str]], Sequence[float]]
"""The weight of each of a question's distinct tokens (how rare it is in the corpus)."""


def units(text: str) -> list[Unit]:
    """The units of ``text`` in order: non-blank lines, long prose lines cut into sentences;
    every line of a code fence is a unit, blank or not."""
    found: list[Unit] = []
    offset, fence, marker = 0, None, ""
    for number, line in enumerate(text.split("\n")):
        end = offset + len(line)
        opener = _FENCE.match(line)
        if fence is None and opener:
            fence, marker = number, opener.group(1)
            found.append(Unit(number, offset, end, fence))
        elif fence is not None:
            closes = line.strip().startswith(marker) and not line.strip().strip(marker[0])
            found.append(Unit(number, offset, end, fence, closes))
            fence = None if closes else fence
        elif line.strip():
            found += [Unit(number, offset + s, offset + e) for s, e in _sentences(line)]
        offset = end + 1
    return found


def _sentences(line: str) -> list[tuple[int, int]]:
    """Spans of the sentences of a long prose line (the whole line when short or a table row)."""
    if len(line) <= _LONG_LINE or line.lstrip().startswith("|"):
        return [(0, len(line))]
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(line):
        following = line[match.end() : match.end() + 2].lstrip("\"'„“«(")
        if following[:1].isupper() and match.start() - start >= 10:
            spans.append((start, match.start() + len(match.group().rstrip())))
            start = match.end()
    return [*spans, (start, len(line))] if start < len(line) else spans


@dataclass(frozen=True)
class Terms:
    """A question's keywords: its BM25 tokens, each with its weight."""

    weights: dict[str, float]
    language: str | None = None
    """The corpus language, whose stemmer the tokens use."""

    def matched(self, text: str) -> frozenset[str]:
        """The question's tokens that ``text`` holds."""
        return frozenset(token for token in tokenize(text, self.language) if token in self.weights)

    def without(self, text: str) -> Terms:
        """These keywords, those ``text`` holds weighing nothing."""
        held = self.matched(text)
        return Terms({token: 0.0 if token in held else w for token, w in self.weights.items()}, self.language)

    def weight(self, tokens: frozenset[str]) -> float:
        """Summed in a fixed order: a set's order follows the hash seed, and float sums that
        differ in the last bit would break ties between windows differently from run to run."""
        return math.fsum(self.weights[token] for token in sorted(tokens))


def question_terms(
    question: str | Sequence[str], language: str | None = None, weigh: Weigh | None = None
) -> Terms:
    """The keywords of ``question`` (its text, or its tokens in ``language`` when already
    parsed), weighted by ``weigh`` (each 1 without it)."""
    tokens = tokenize(question, language) if isinstance(question, str) else question
    wanted = [token for token in dict.fromkeys(tokens) if _meaningful(token)]
    weights = list(weigh(wanted)) if weigh else [1.0] * len(wanted)
    return Terms(dict(zip(wanted, weights, strict=True)), language)


def _meaningful(token: str) -> bool:
    """Not a lone letter (``i``, ``w``, ``a``) nor a word joined to one (``do_i``, ``si_w``):
    those tie a letter to its word for references (``lit. a``), and say nothing in a sentence."""
    last = token.rsplit("_", 1)[-1]
    return not (len(last) == 1 and last.isalpha())


def best_snippet(
    text: str,
    start_line: int,
    terms: Terms,
    *,
    end_line: int | None = None,
    chars: int = SNIPPET_CHARS,
    max_lines: int = SNIPPET_LINES,
) -> Snippet:
    """The snippet of the passage ``text`` (lines ``start_line``..``end_line`` of its file):
    the window of units that holds the most of the question's keywords by weight.

    When the passage lost lines to removed HTML comments (fewer lines than ``end_line`` says),
    the line range is widened to one that surely holds the snippet.
    """
    found = units(text)
    if not found:
        return Snippet(text, start_line, end_line or start_line)
    matched = [terms.matched(text[u.start : u.end]) for u in found]
    first, last = _window(text, found, matched, terms, chars, max_lines)
    first, last = _with_comments(text, found, first, last, chars, max_lines)
    end, last = _end(text, found, first, last, chars, max_lines)
    if end == found[last].end:
        first, last = _with_fence_lines(found, first, last)
        end = found[last].end
    shown = _render(text, found, first, last, end)
    lost = 0 if end_line is None else max(0, end_line - start_line - text.count("\n"))
    return Snippet(shown, start_line + found[first].line, start_line + found[last].line + lost)


def _window(
    text: str, found: list[Unit], matched: list[frozenset[str]], terms: Terms, chars: int, max_lines: int
) -> tuple[int, int]:
    """The units ``first..last`` of the window that fits and holds the most keyword weight.

    Each possible start is grown as far as it fits; among windows holding as much, the one
    whose first unit holds the most wins, then the earliest (so a passage with no keyword of
    the question shows its beginning). A window never starts inside a list item.
    """
    best, best_key = (0, 0), None
    for first in range(len(found)):
        if not _may_start(text, found, first):
            continue
        last = _grown(found, first, chars, max_lines)
        held = terms.weight(frozenset().union(*matched[first : last + 1])) + (LEAD if first == 0 else 0.0)
        key = (held, terms.weight(matched[first]), -first)
        if best_key is None or key > best_key:
            best, best_key = (first, last), key
    return best


def _grown(found: list[Unit], first: int, chars: int, max_lines: int) -> int:
    """The last unit of the window from ``first`` on that fits ``chars`` and ``max_lines``."""
    last, size, lines = first, found[first].end - found[first].start, 1
    while last + 1 < len(found):
        following = found[last + 1]
        more = int(following.line != found[last].line)
        if size + following.end - found[last].end > chars or lines + more > max_lines:
            break
        last, size, lines = last + 1, size + following.end - found[last].end, lines + more
    return last


def _with_comments(
    text: str, found: list[Unit], first: int, last: int, chars: int, max_lines: int
) -> tuple[int, int]:
    """A window starting at a line of code that is no comment, widened to the comment lines just
    above it (``# Skip attachments larger than this`` over ``max_attachment_mb = 50``) as far as
    they fit with that line, its end drawn in as far as the budget then needs."""
    start, fence = first, found[first].fence
    if fence is None or found[first].line == fence or _is_comment(text, found[first]):
        return first, last
    while first > 0 and found[first - 1].fence == fence and found[first - 1].line != fence:
        if not _is_comment(text, found[first - 1]) or not _fits(found, first - 1, start, chars, max_lines):
            break
        first -= 1
    while last > start and not _fits(found, first, last, chars, max_lines):
        last -= 1
    return first, last


def _fits(found: list[Unit], first: int, last: int, chars: int, max_lines: int) -> bool:
    """Whether units ``first..last`` fit ``chars`` and ``max_lines``."""
    lines = len({unit.line for unit in found[first : last + 1]})
    return found[last].end - found[first].start <= chars and lines <= max_lines


def _is_comment(text: str, unit: Unit) -> bool:
    return bool(_COMMENT.match(text, unit.start, unit.end))


def _end(text: str, found: list[Unit], first: int, last: int, chars: int, max_lines: int) -> tuple[int, int]:
    """Where the window's text ends, and its last unit: after ``last``, or inside the unit that
    follows when that leaves room for a few words, or inside ``first`` when even it is longer
    than ``chars`` (at a word boundary)."""
    room = chars - (found[last].end - found[first].start)
    if room < 0:
        return _word_end(text, found[first].start, chars), first
    following = found[last + 1] if last + 1 < len(found) else None
    if following is None or following.fence is not None:
        return found[last].end, last
    room -= following.start - found[last].end
    if room < _MIN_TAIL or len({u.line for u in found[first : last + 2]}) > max_lines:
        return found[last].end, last
    return _word_end(text, following.start, room), last + 1


def _with_fence_lines(found: list[Unit], first: int, last: int) -> tuple[int, int]:
    """The window widened to the opening or closing line of the code fence it starts or ends
    in, when that line is the unit just before or after it: shown as itself, it counts in the
    snippet's lines, and no "…" claims that something was left out there."""
    if first > 0 and found[first].fence is not None and found[first - 1].line == found[first].fence:
        first -= 1
    if last + 1 < len(found) and found[last].fence is not None and found[last + 1].closes:
        last += 1
    return first, last


def _word_end(text: str, start: int, width: int) -> int:
    """The end of the last whole word of ``text[start:start + width]``."""
    space = text.rfind(" ", start, start + width + 1)
    return (space if space > start + width // 2 else start + width) if space >= 0 else start + width


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")


def _may_start(text: str, found: list[Unit], i: int) -> bool:
    """Whether a window may start at unit ``i``: at a line's start, or mid-line in prose."""
    if i == 0 or found[i - 1].line != found[i].line:
        return True
    line_start = text.rfind("\n", 0, found[i].start) + 1
    return not _LIST_ITEM.match(text, line_start)


def _render(text: str, found: list[Unit], first: int, last: int, end: int) -> str:
    """``text`` from unit ``first`` to ``end`` (in unit ``last``) as written, with "…" where the
    passage goes on before or after it."""
    start = found[first].start
    cut = end < found[last].end
    body = text[start:end].rstrip(" ,;:") + " " + ELLIPSIS if cut else text[start:end]
    body = _fenced(text.split("\n"), found, first, last, body)
    line_start = text.rfind("\n", 0, start) + 1
    before = (ELLIPSIS + " ") if start > line_start else (ELLIPSIS + "\n") if first > 0 else ""
    line_end = text.find("\n", end)
    after = ""
    if not cut and end < (len(text) if line_end < 0 else line_end):
        after = " " + ELLIPSIS
    elif not cut and last < len(found) - 1:
        after = "\n" + ELLIPSIS
    return before + body + after


def _fenced(lines: list[str], found: list[Unit], first: int, last: int, body: str) -> str:
    """``body`` inside its code fence's opening and closing lines when it starts or ends inside
    a fence without them."""
    opening = found[first].fence
    if opening is not None and opening < found[first].line:
        gap = f"\n{ELLIPSIS}" if opening + 1 < found[first].line else ""
        body = f"{lines[opening]}{gap}\n{body}"
    closing = found[last].fence
    if closing is not None and not found[last].closes:
        marker = _FENCE.match(lines[closing])
        body = f"{body}\n{marker.group(1) if marker else '```'}"
    return body
