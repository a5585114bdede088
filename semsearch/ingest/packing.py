"""Packing consecutive spans of a section into chunks: the chunker's greedy rule, found fast.

The rule (unchanged since the first chunker): a chunk starts with a span and takes the next one
while that span's own tokens on top of the chunk's, plus one, stay within the budget, and the
merged slice fits (the budget, and the model's own limit). Trying each span in turn counts the
whole chunk again for every span: a paragraph without a sentence break, packed word by word,
counted each ~300-token chunk 300 times over (a 60,000-word line: 30 s of counting).

Here each chunk's end is guessed from the spans' own token counts, then bracketed by galloping
and bisection, and the spans before it are checked against counts of a few merged slices
(``_Run.first_refused``). This relies on token counts growing as spans are appended (true of
both tokenizers: a span after whitespace adds its own tokens), and then gives exactly the chunks
of the span-by-span rule (tests/test_packing.py compares them), with a few counts a chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

Span = tuple[int, int]


def last_accepted(good: int, bad: int, probe: int, accepted: Callable[[int], bool]) -> int:
    """The last of ``good..bad-1`` that ``accepted`` takes, where it takes ``good`` and every
    number below one it takes: galloping out from ``probe``, then bisecting."""
    probe = min(probe, bad - 1)
    if probe <= good:
        return good
    step = 1
    if accepted(probe):
        good = probe
        while good + step < bad and accepted(good + step):
            good, step = good + step, step * 2
        bad = min(bad, good + step)
    else:
        bad = probe
        while bad - step > good and not accepted(bad - step):
            bad, step = bad - step, step * 2
        good = max(good, bad - step)
    while bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if accepted(middle) else (good, middle)
    return good


class _Ahead:
    """Spans pulled from a stream as far as asked for, with their own token counts; those
    before a chunk's first span dropped, so that memory holds a chunk's worth (a 50 MB line,
    cut into 8 million words, held them all: 47 times the file)."""

    def __init__(self, spans: Iterable[Span], size: Callable[[Span], int]):
        self._stream = iter(spans)
        self._size = size
        self._spans: list[Span] = []
        self._sizes: list[int] = []
        self._offset = 0
        """The index, in the whole stream, of ``_spans[0]``."""

    def has(self, k: int) -> bool:
        """Whether the stream holds a span at index ``k``."""
        while k - self._offset >= len(self._spans):
            span = next(self._stream, None)
            if span is None:
                return False
            self._spans.append(span)
            self._sizes.append(self._size(span))
        return True

    def span(self, k: int) -> Span:
        self.has(k)
        return self._spans[k - self._offset]

    def size(self, k: int) -> int:
        """Span ``k``'s tokens, as embedded, less the heading path's."""
        self.has(k)
        return self._sizes[k - self._offset]

    def drop_before(self, k: int) -> None:
        del self._spans[: k - self._offset], self._sizes[: k - self._offset]
        self._offset = k


BEYOND = 1 << 62
"""An end for ``last_accepted`` past any stream: indices with no span are never accepted."""


class _Run:
    """One chunk being packed from span ``first`` on, with the token counts of its merged
    slices (heading path included) counted once each."""

    def __init__(self, packer: Packer, spans: _Ahead, first: int):
        self.packer = packer
        self.spans = spans
        self.first = first
        self.counted = {first: packer.prefix_tokens + spans.size(first)}

    def tokens(self, last: int) -> int:
        """Tokens of the slice from span ``first`` through span ``last``, as embedded."""
        if last not in self.counted:
            start, end = self.spans.span(self.first)[0], self.spans.span(last)[1]
            self.counted[last] = self.packer.tokens_of(start, end)
        return self.counted[last]

    def has_room(self, k: int) -> bool:
        """The rule's first test for taking span ``k``: its tokens on the chunk's, plus one."""
        return self.tokens(k - 1) + self.spans.size(k) + 1 <= self.packer.max_tokens

    def takes(self, k: int) -> bool:
        """Whether the chunk through span ``k - 1`` takes span ``k`` (both tests)."""
        if not self.spans.has(k) or not self.has_room(k) or self.tokens(k) > self.packer.max_tokens:
            return False
        return self.packer.extra_fits(self.spans.span(self.first)[0], self.spans.span(k)[1])

    def guess(self) -> int:
        """Where the chunk would end if token counts simply added up."""
        last, total = self.first, self.tokens(self.first)
        budget = self.packer.max_tokens
        while self.spans.has(last + 1) and total + self.spans.size(last + 1) + 1 <= budget:
            last += 1
            total += self.spans.size(last)
        return last

    def last(self) -> int:
        """Index of the chunk's last span."""
        good = last_accepted(self.first, BEYOND, max(self.guess(), self.first + 1), self.takes)
        refused = self.first_refused(self.first, good)
        return good if refused is None else refused - 1

    def first_refused(self, low: int, high: int) -> int | None:
        """The first span in ``low+1..high`` that fails the room test, or None; the slices
        through ``low`` and ``high`` are counted. A slice through any span before ``high`` has
        at most the tokens of the one through ``high``: counting more is needed only where
        that bound leaves a span no room."""
        if high <= low:
            return None
        bound = self.tokens(high) + max(self.spans.size(k) for k in range(low + 1, high + 1)) + 1
        if bound <= self.packer.max_tokens:
            return None
        if high == low + 1:
            return None if self.has_room(high) else high
        middle = (low + high) // 2
        refused = self.first_refused(low, middle)
        return refused if refused is not None else self.first_refused(middle, high)


class Packer:
    """Packs spans of the source into chunks; ``tokens_of(start, end)`` counts a slice as
    embedded (heading path included), ``extra_fits(start, end)`` is the model's own limit.

    Both take spans as a stream and yield as they go, holding about a chunk's worth."""

    def __init__(
        self,
        max_tokens: int,
        prefix_tokens: int,
        tokens_of: Callable[[int, int], int],
        extra_fits: Callable[[int, int], bool],
    ):
        self.max_tokens = max_tokens
        self.prefix_tokens = prefix_tokens
        self.tokens_of = tokens_of
        self.extra_fits = extra_fits

    def fits(self, start: int, end: int) -> bool:
        return self.tokens_of(start, end) <= self.max_tokens and self.extra_fits(start, end)

    def glue_lead_ins(self, spans: Iterable[Span], lead_in: Callable[[Span], bool]) -> Iterator[Span]:
        """Each span that introduces the next (``lead_in``: it ends with a colon) joined to
        it, while the joined slice fits: a run of lead-ins grows one span at a time until the
        slice no longer fits or a span introduces nothing (found by galloping, as in ``pack``).

        Otherwise packing can end a chunk on "on this basis we:" and start the next with the
        list it introduces, leaving each half without the other's meaning.
        """
        ahead = _Ahead(spans, lambda span: 0)
        first = 0
        while ahead.has(first):
            run = [first]  # the last span known to belong to the run of lead-ins from ``first``

            def joined(last: int, first: int = first, run: list[int] = run) -> bool:
                while run[0] < last and lead_in(ahead.span(run[0])) and ahead.has(run[0] + 1):
                    run[0] += 1
                if last > run[0]:
                    return False
                return self.fits(ahead.span(first)[0], ahead.span(last)[1])

            last = last_accepted(first, BEYOND, first + 1, joined)
            yield (ahead.span(first)[0], ahead.span(last)[1])
            first = last + 1
            ahead.drop_before(first)

    def pack(self, spans: Iterable[Span]) -> Iterator[Span]:
        """Consecutive ``spans`` merged into chunks by the greedy rule (module docstring)."""
        ahead = _Ahead(spans, lambda span: self.tokens_of(*span) - self.prefix_tokens)
        first = 0
        while ahead.has(first):
            last = _Run(self, ahead, first).last()
            yield (ahead.span(first)[0], ahead.span(last)[1])
            first = last + 1
            ahead.drop_before(first)
