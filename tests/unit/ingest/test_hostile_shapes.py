"""Chunking takes time linear in the text, whatever shape a hostile file has (issue 39: nested
inline HTML, comment openers, unclosed constructs by the thousand on one line had made it
quadratic: ``<div>``×4,000 on a line took 42 s). Each shape is chunked at two sizes, the second
four times the first, in this one test: linear work takes about 4 times as long, quadratic 16
times; the bound, 8 times, is wide of both (CPU time, the least of a few runs)."""

from __future__ import annotations

import gc
import time

import pytest

from semsearch.ingest.chunking import chunk_markdown
from semsearch.ingest.tokens import count_tokens

PROBED = ["<div>", "<span>", "<!--", "<A {"]
"""What the outside probe tried (``<A {``: a JSX tag whose end was searched 20,000 characters on)."""
UNITS = [
    *("<div>", "</div>", "<span>", "<!--", "-->", "<A {", "<X ", "{::", "[^", "^[", "[x](", "[a]"),
    *("`a` ", "``", "{{%", "{{<", "{%", "{/*", "<script>", "<style>", "&amp;", "&#x", "\\", "%%"),
    *("{#a}", ":::{", "<![CDATA[", "[[a", "*a*", "~~a", "---"),
]
"""A shape for each path made linear (an opener repeated with no closer, or closed at once),
and the probed ones; measured where many chunks are cut (a text that fits one chunk is not)."""
CHUNKS = 12
"""The least chunks of the smaller text of a shape."""
GROWTH = 8.0
"""The most the time may grow when the text grows 4 times (linear: 4; quadratic: 16)."""


def _chunks(text: str) -> list:
    return chunk_markdown(
        text, "a.mdx", max_tokens=256, count_tokens=count_tokens, fits=lambda t: count_tokens(t) <= 512
    )


def _seconds(text: str, runs: int) -> float:
    """The least CPU time of ``runs`` chunkings of ``text``, the garbage collector off meanwhile
    (in a worker that holds a whole suite's objects, one full collection costs more than the
    chunking measured)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            started = time.process_time()
            chunk_markdown(
                text,
                "a.mdx",
                max_tokens=256,
                count_tokens=count_tokens,
                fits=lambda t: count_tokens(t) <= 512,
            )
            best = min(best, time.process_time() - started)
    finally:
        gc.enable()
    return best


def _repeats(shape: str, least: int, characters: int) -> int:
    """How many times to repeat ``shape``: at least ``least`` and ``characters`` long, and for
    ``CHUNKS`` chunks or more. A text of a few chunks is hardly cut (one that fits one chunk is
    not measured at all), and would make any longer one look slow; a shape that shows nothing
    stays one chunk, whatever its length: at most 8 times ``least``."""
    repeats = max(least, -(-characters // len(shape)))
    while 0 < len(_chunks("# T\n\n" + shape * repeats + "x\n")) < CHUNKS and repeats < 8 * least:
        repeats *= 2
    return repeats


def _assert_linear(shapes: list[str], least: int, characters: int = 0) -> None:
    _seconds("# a\n\nb\n", 1)  # the tokenizer loaded
    for shape in shapes:
        repeats = _repeats(shape, least, characters)
        small = _seconds("# T\n\n" + shape * repeats + "x\n", 2)
        large = _seconds("# T\n\n" + shape * (4 * repeats) + "x\n", 2)
        assert large <= GROWTH * max(small, 0.005), (
            f"{shape!r}: {small:.3f} s, then {large:.3f} s at 4 times the size"
        )


def test_chunking_time_grows_linearly_on_the_probed_shapes():
    _assert_linear(PROBED, 1000)


@pytest.mark.slow
def test_chunking_time_grows_linearly_on_every_shape():
    _assert_linear(UNITS, 8000)
