"""What a question names exactly, read from its text (``question.ParsedQuestion`` holds it, parsed
once): the codes it names verbatim, its legal-style references, the names as code writes them,
and whether it names anything exact (hybrid search then gives keywords more say)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from itertools import pairwise

_QUOTED = re.compile(r'"[^"]+"|„[^"”]+["”]|“[^”]+”|«[^»]+»|`[^`]+`')
_EXACT_HINT = re.compile(r"\d|§|\w[_+]\w|\w\(\)")
UNSPACED = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
"""Chinese, Japanese and Korean characters (with their punctuation and full-width forms), as a
character class's ranges: those languages write no spaces between words."""
_TOKEN = re.compile(r"[^\s\"'„”“«»()\[\]{},;:!?`]+")
"""A run of characters between spaces, quotes, brackets and punctuation (``words`` splits it
further at Chinese, Japanese and Korean characters)."""


@cache
def unspaced_runs() -> re.Pattern[str]:
    """Runs of Chinese, Japanese and Korean characters (``UNSPACED``). Compiled at first use:
    ``re`` walks every code point of a class's ranges as it compiles one, some 39,000 here
    (~3 ms of a cold ``ask``, whose question seldom holds any)."""
    return re.compile(f"[{UNSPACED}]+")


def has_unspaced(text: str) -> bool:
    """Whether ``text`` holds a Chinese, Japanese or Korean character (none below U+3000)."""
    return max(text, default="") >= "\u3000" and unspaced_runs().search(text) is not None


def words(question: str) -> list[str]:
    """The words of a question: runs between spaces, quotes, brackets and punctuation, that
    Chinese, Japanese and Korean characters end too (``iPhoneのバッテリー``: ``iPhone``)."""
    runs = _TOKEN.findall(question)
    if not has_unspaced(question):
        return runs
    split = unspaced_runs().split
    return [word for run in runs for word in split(run) if word]


_FLAG = re.compile(r"--?[^\W\d_][\w-]*(?:=\S*)?")
_DOTFILE = re.compile(r"\.[^\W\d_][\w.-]*")
_VARIABLE = re.compile(r"\$[^\W\d]\w*")


def names_something_exact(question: str, names: Sequence[str] | None = None) -> bool:
    """Whether the question names an exact string: then keywords earn a say in the ranking.

    Exact are a number, ``§``, a quoted phrase, a snake_case key or ``ERR_*`` code, a key
    combination (``Ctrl+Alt+M``), a call (``once()``), and any name as code writes it (see
    ``is_code_name``: ``events.once``, ``readFile``, ``--max-old-space-size``, ``package.json``;
    ``names``: the question's ``code_names`` when already found).
    """
    if _EXACT_HINT.search(question) or _QUOTED.search(question):
        return True
    return bool(code_names(question) if names is None else names)


def code_names(question: str) -> list[str]:
    """The names as code writes them that a question holds (see ``is_code_name``), without a
    sentence's full stop: "What does events.once() return?" → ``["events.once"]``."""
    return [token.rstrip(".") for token in words(question) if is_code_name(token)]


def is_code_name(token: str) -> bool:
    """Whether one word of a question is a name as code writes it: a dotted name (``fs.readFile``,
    ``package.json``, ``Node.js``; not ``e.g.`` or ``m.in.``: its first and last parts have two
    characters or more), camelCase (``prependOnceListener``, ``EventEmitter``), a command-line
    flag (``--max-old-space-size``, ``-g``), a hidden file (``.npmrc``) or a ``$VARIABLE``.
    A full stop ending the sentence does not count; a plain or hyphenated word (``e-mail``) is none."""
    token = token.rstrip(".")
    if not any(c.isalpha() for c in token):
        return False
    if _FLAG.fullmatch(token) or _DOTFILE.fullmatch(token) or _VARIABLE.fullmatch(token):
        return True
    parts = token.split(".")
    if len(parts) > 1 and all(parts) and len(parts[0]) >= 2 and len(parts[-1]) >= 2:
        return True
    return any(a.islower() and b.isupper() for a, b in pairwise(token))


def identifiers(question: str) -> list[str]:
    """Codes a question names verbatim: tokens mixing letters and digits or digits joined by
    separators (``PAY-517``, ``FV/2026/04/118``), long numbers (``5272981046``: not a year or
    an amount), snake_case keys and key combinations (``max_attachment_mb``, ``Ctrl+Alt+M``).
    Short numbers and plain words (even hyphenated ones, ``e-mail``) are not."""
    found = []
    for token in words(question):
        token = token.strip(".")
        inner = token.strip("-/_+")
        has_digit = any(c.isdigit() for c in token)
        has_letter = any(c.isalpha() for c in token)
        code = len(token) >= 4 and has_digit and (has_letter or any(c in "-/_" for c in inner))
        long_number = token.isdigit() and len(token) >= 5
        key = has_letter and any(c in "_+" for c in inner)
        if code or long_number or key:
            found.append(token)
    return found


_REFERENCE_PART = r"(?:§|\b[^\W\d_]{1,5}\.)\s*(?:\d+[^\W\d_]?|[^\W\d_])(?![\w-])"
_REFERENCE = re.compile(rf"{_REFERENCE_PART}(?:[\s,]+{_REFERENCE_PART})*")


def references(question: str) -> list[list[str]]:
    """Legal-style references a question names, each as its parts: ``§ 7`` → ``[["§ 7"]]``,
    ``art. 6 ust. 1 lit. a`` → ``[["art. 6", "ust. 1", "lit. a"]]``.

    A part is ``§`` or an abbreviation with its dot, then a number or a single letter. One part
    alone counts only after ``§`` or ``art.``: ``np. 5`` or ``ok. 3`` is no reference, ``art. 6``
    and ``art. 6 ust. 1`` are.
    """
    found = []
    for match in _REFERENCE.finditer(question):
        parts = [" ".join(m.group().split()) for m in re.finditer(_REFERENCE_PART, match.group())]
        if len(parts) >= 2 or parts[0].startswith("§") or parts[0].casefold().startswith("art."):
            found.append(parts)
    return found
