"""``.gitignore``-style patterns (``--path``, ``--exclude``, ``.semsearchignore``, MCP ``paths``)
matched in time linear in the path and the pattern, whatever either holds.

pathspec reads each line (what it means, negation, which lines are errors or no-ops) but matches
a path by one backtracking regular expression per pattern: ``*a*a*a*a*a*a*a*a*a*a*a*a*z`` against
a name of 40 a's runs for hours, each star multiplying the time (issue 39). Here a pattern is
matched the way Git's wildmatch reads it: the path's segments against the pattern's segment
globs, ``**`` taking any number of whole segments, and within a segment each ``*`` taking the
shortest stretch after which the next fixed piece is found (leftmost-first is always right for
globs, so no choice is ever tried twice). The results are pathspec's ``GitIgnoreSpec``'s
(``tests/unit/ingest/test_gitignore.py`` compares the two on thousands of random patterns).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

_ANY = "**"
"""A token taking any number (zero included) of whole segments."""
_ONE = "*any*"
"""A token taking exactly one segment, whatever it is (empty included)."""


@dataclass(frozen=True)
class _Glob:
    """One segment's glob, as the fixed-width pieces between its stars (one piece: no star)."""

    pieces: tuple[re.Pattern[str], ...]
    widths: tuple[int, ...]
    nonempty: bool = False
    """A segment that is ``*`` alone takes at least one character (as in pathspec)."""
    literal: str | None = None
    """The segment's name, when the glob has no wildcard."""

    def matches(self, name: str) -> bool:
        if self.literal is not None:
            return name == self.literal
        if self.nonempty and not name:
            return False
        pieces, widths = self.pieces, self.widths
        if len(pieces) == 1:
            return len(name) == widths[0] and pieces[0].match(name) is not None
        tail = len(name) - widths[-1]
        if tail < widths[0] or pieces[0].match(name) is None or pieces[-1].match(name, tail) is None:
            return False
        position = widths[0]
        for piece, width in zip(pieces[1:-1], widths[1:-1], strict=True):
            if width == 0:
                continue
            found = piece.search(name, position, tail)
            if found is None:
                return False
            position = found.end()
        return True


@lru_cache(maxsize=4096)
def _glob(segment: str) -> _Glob:
    """A segment glob translated as pathspec translates it (``*``, ``?``, ``[...]``, ``\\``
    escapes), cut at its stars."""
    pieces: list[list[str]] = [[]]
    i, end = 0, len(segment)
    while i < end:
        char = segment[i]
        i += 1
        if char == "\\" and i < end:
            pieces[-1].append(re.escape(segment[i]))
            i += 1
        elif char == "*":
            pieces.append([])
        elif char == "?":
            pieces[-1].append("[^/]")
        elif char == "[" and (close := _class_end(segment, i)) is not None:
            negated = segment[i] in "!^"
            pieces[-1].append(
                "[" + ("^" if negated else "") + segment[i + negated : close].replace("\\", "\\\\")
            )
            i = close
        else:
            pieces[-1].append(re.escape(char))
    with _quietly():
        compiled = tuple(re.compile("".join(piece)) for piece in pieces)
    literal = None
    if len(pieces) == 1 and all(atom[0] != "[" for atom in pieces[0]):
        literal = "".join(atom[-1] for atom in pieces[0])  # re.escape adds one backslash at most
    return _Glob(compiled, tuple(len(piece) for piece in pieces), segment == "*", literal)


def _class_end(segment: str, start: int) -> int | None:
    """The offset after the ``]`` closing a bracket expression whose content starts at
    ``start`` (a ``]`` first in it is literal); None when none closes it."""
    j = start + (start < len(segment) and segment[start] in "!^")
    j += j < len(segment) and segment[j] == "]"
    close = segment.find("]", j)
    return None if close < 0 else close + 1


def _sequence_matches(tokens: Sequence[_Glob | str], names: Sequence[str]) -> bool:
    """Whether ``tokens`` take ``names`` whole: a glob one name, ``_ONE`` any one name, ``_ANY``
    any run of them; the classic wildcard walk, going back only to the last ``_ANY``. A glob
    is tried on a name once (the same segment glob is one object, see ``_glob``): at worst
    names × tokens steps of the walk, each a look-up."""
    known: dict[tuple[int, int], bool] = {}

    def takes(token: _Glob | str, n: int) -> bool:
        if token is _ONE:
            return True
        key = (id(token), n)
        if key not in known:
            known[key] = token.matches(names[n])
        return known[key]

    t = n = 0
    star, resume = -1, 0
    while n < len(names):
        token = tokens[t] if t < len(tokens) else None
        if token is _ANY:
            star, resume, t = t, n, t + 1
        elif token is not None and takes(token, n):
            t, n = t + 1, n + 1
        elif star >= 0:
            resume += 1
            t, n = star + 1, resume
        else:
            return False
    return all(token is _ANY for token in tokens[t:])


_SPECIAL = {
    ((_ANY,), False): "any",
    ((_ANY,), True): "nested-folder",
    ((_ANY, "*"), False): "any",
    ((_ANY, "*", _ANY), False): "nested",
    ((_ANY, "*", _ANY), True): "nested-folder",
}
"""The patterns pathspec matches by a plain expression (``**``, ``*/``...): their ``ending``."""


@dataclass(frozen=True)
class _Pattern:
    include: bool
    tokens: tuple[_Glob | str, ...]
    ending: str
    """``name``: the last token is a glob, matching a file or a folder above it; ``beneath``:
    the pattern ended in ``/**`` (what is under it); ``folder``: ended in ``/`` (what is under
    a folder it names); ``any``/``nested``/``nested-folder``: ``**``, ``*/**``, ``*/``."""

    def priority(self, path: str, names: Sequence[str]) -> int:
        """0: no match; 1: a folder above ``path`` matches; 2: ``path`` itself does (pathspec's
        directory mark: a pattern matching both counts as matching the path)."""
        if self.ending in ("any", "nested", "nested-folder"):
            matched = bool(path) if self.ending == "any" else "/" in path
            return 0 if not matched else 1 if self.ending == "nested-folder" else 2
        if self.ending == "name" and _sequence_matches(self.tokens, names):
            return 2
        if not _sequence_matches((*self.tokens, _ONE, _ANY), names):
            return 0
        return 2 if self.ending == "beneath" else 1


def _parse(line: str) -> _Pattern | None:
    """A line as pathspec reads it (its no-ops: None), as tokens; pathspec has checked it."""
    text = line if line.endswith("\\ ") else line.rstrip()
    if not text or text.startswith("#") or text == "/":
        return None
    include = not text.startswith("!")
    segments = text[0 if include else 1 :].split("/")
    folder = not segments[-1]
    if not segments[0]:
        del segments[0]
    elif (len(segments) == 1 or (len(segments) == 2 and folder)) and segments[0] != _ANY:
        segments.insert(0, _ANY)
    if not segments[-1]:
        segments[-1] = _ANY
    segments = [s for i, s in enumerate(segments) if not (s == _ANY and i and segments[i - 1] == _ANY)]
    ending = _SPECIAL.get((tuple(segments), folder))
    if ending is not None:
        return _Pattern(include, (), ending)
    ending = "name"
    if len(segments) > 1 and segments[-1] == _ANY:
        segments.pop()
        ending = "folder" if folder else "beneath"
    tokens = tuple(_ANY if s == _ANY else _glob(s) for s in segments)
    return _Pattern(include, tokens, ending)


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not .gitignore syntax (``""`` when pathspec gives no reason; None:
    it is)."""
    import pathspec
    from pathspec.patterns.gitignore import GitIgnorePatternError

    try:
        with _quietly():
            pathspec.GitIgnoreSpec.from_lines([pattern])
    except GitIgnorePatternError:
        return _why(pattern)
    except re.error as exc:  # a range backwards: [z-a]
        return f" ({exc.msg})"
    return None


def _why(pattern: str) -> str:
    if pattern.strip() == "!":
        return ' ("!" negates the pattern after it, and none follows; "\\!" matches a "!")'
    if pattern.endswith("\\"):
        return ' (it ends in "\\", which escapes nothing)'
    return ""


@contextmanager
def _quietly() -> Iterator[None]:
    """Python's "possible nested set" warning for ``[[:alpha:]]`` (as pathspec reads it) is no
    user's concern, and is not printed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        yield


class BadPattern(ValueError):
    """A line that is not a .gitignore-style pattern: ``number`` (from 1) and the ``line``."""

    def __init__(self, number: int, line: str):
        super().__init__(f"line {number} is not a .gitignore-style pattern")
        self.number, self.line = number, line


class PathPatterns:
    """``.gitignore``-style patterns, the last that matches deciding (a ``!`` pattern keeps what
    an earlier one left out), matched as pathspec's ``GitIgnoreSpec`` does but in linear time.

    The lines must have passed pathspec (``patterns.check_patterns``, or the spec built from
    them): its errors are the user's, reported there."""

    def __init__(self, lines: Sequence[str]):
        """Raises ``BadPattern`` for the first of ``lines`` that is not a pattern."""
        import pathspec

        numbered = [(number, line) for number, line in enumerate(lines, 1) if line]  # as pathspec reads
        try:
            with _quietly():
                spec = pathspec.GitIgnoreSpec.from_lines([line for _, line in numbered])
        except (ValueError, re.error):  # GitIgnorePatternError is a ValueError
            number, line = next((n, line) for n, line in numbered if pattern_problem(line) is not None)
            raise BadPattern(number, line) from None
        kept = [
            line
            for (_, line), pattern in zip(numbered, spec.patterns, strict=True)
            if pattern.include is not None
        ]
        self._patterns = [parsed for line in kept if (parsed := _parse(line)) is not None]

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def match_file(self, path: str) -> bool:
        """Whether ``path`` (relative, POSIX; a folder's with a trailing ``/``) is matched."""
        path = path[1:] if path.startswith("/") else path[2:] if path.startswith("./") else path
        names = path.split("/")
        folder_decision = None
        for pattern in reversed(self._patterns):
            priority = pattern.priority(path, names)
            if priority == 2:
                return pattern.include
            if priority == 1 and folder_decision is None:
                folder_decision = pattern.include
        return bool(folder_decision)
