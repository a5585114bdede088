"""Finding constructs in time linear in the text, however many unclosed openers a file holds.

A rule that looks for an opener and then its closer (``{% … %}``, ``<!-- … -->``) costs, done
by a regular expression alone, the distance to the closer (or to its bound) for every opener:
20,000 ``<!--`` and no ``-->`` read the rest of the line 20,000 times (issue 39: a 22 KB line
took 10 s). Here the next closer is searched once and kept while the openers before it are
tried, and an opener whose nearest closer lies beyond the longest match is passed over
without running the expression at all. What is found is exactly what ``finditer`` finds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator


class NextMatch:
    """The first match of ``pattern`` at or after a position, for positions asked in
    increasing order: each stretch of the text is searched once (a position asked before the
    last one searches again)."""

    def __init__(self, pattern: re.Pattern[str], text: str, end: int):
        self.pattern, self.text, self.end = pattern, text, end
        self._asked = -1
        self._found: re.Match[str] | None = None

    def at_or_after(self, position: int) -> re.Match[str] | None:
        stale = position < self._asked or (self._found is not None and self._found.start() < position)
        if self._asked < 0 or stale:
            self._found = self.pattern.search(self.text, position, self.end)
        self._asked = position
        return self._found


def closed_matches(
    pattern: re.Pattern[str], opener: str, closer: str, longest: int, text: str, start: int, end: int
) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text, start, end)`` for a pattern whose every match starts with
    ``opener``, holds ``closer`` after it and is at most ``longest`` characters long."""
    closers = NextMatch(re.compile(re.escape(closer)), text, end)
    position = start
    while (found := text.find(opener, position, end)) >= 0:
        close = closers.at_or_after(found + len(opener))
        if close is None:
            return  # no closer after this opener, so none after any later one
        match = pattern.match(text, found, end) if close.end() - found <= longest else None
        if match is None:
            position = found + 1
            continue
        yield match
        position = max(match.end(), found + 1)
