"""Chunking takes time linear in the text, whatever shape a hostile file has (issue 39: nested
inline HTML, comment openers, unclosed constructs by the thousand on one line had made it
quadratic: ``<div>``×4,000 on a line took 42 s). Each shape is chunked at two sizes, the second
four times the first, in this one test: linear work takes about 4 times as long, quadratic 16
times; the bound, 8 times, is wide of both (CPU time, the least of a few runs)."""

from __future__ import annotations

import random
import time

import pytest

from semsearch.ingest.chunking import chunk_markdown
from semsearch.ingest.tokens import count_tokens

PROBED = ["<div>", "<span>", "<!--", "<A {"]
"""What the outside probe tried (``<A {``: a JSX tag whose end was searched 20,000 characters on)."""
UNITS = [
    *("<div>", "</div>", "<span>", "<!--", "-->", "<A {", "<X ", "{::", "{:", "[^", "^[", "[x](", "[a]"),
    *("`", "``", "`a` ", "```", "{{", "{{%", "{{<", "{%", "{/*", "<script>", "<style>", "&amp;", "&#x"),
    *("**", "==", "~~a", "*a*", "_a_ ", "\\", "\\[", "%%", "{#a}", "{.a}", ":::{", "<http://", "http://a.b/"),
    *("[[a", "![[", '<img alt="', " ", "\t", "---", "<a href='", "<![CDATA[", ":x:", "$a", "+ "),
]
GROWTH = 8.0
"""The most the time may grow when the text grows 4 times (linear: 4; quadratic: 16)."""


def _seconds(text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        chunk_markdown(
            text, "a.mdx", max_tokens=256, count_tokens=count_tokens, fits=lambda t: count_tokens(t) <= 512
        )
        best = min(best, time.process_time() - started)
    return best


def _shapes(seed: int, count: int) -> list[str]:
    """``count`` random shapes: one to three units, maybe a line break, repeated."""
    rng = random.Random(seed)
    shapes = []
    for _ in range(count):
        parts = rng.sample(UNITS, rng.randint(1, 3))
        shapes.append("".join(parts) + rng.choice(["", "", " ", "\n", "x"]))
    return shapes


def _assert_linear(shapes: list[str], repeats: int) -> None:
    _seconds("# a\n\nb\n", 1)  # the tokenizer loaded
    for shape in shapes:
        small = _seconds("# T\n\n" + shape * repeats + "x\n", 2)
        large = _seconds("# T\n\n" + shape * (4 * repeats) + "x\n", 1)
        assert large <= GROWTH * max(small, 0.005), (
            f"{shape!r}: {small:.3f} s, then {large:.3f} s at 4 times the size"
        )


def test_chunking_time_grows_linearly_on_the_probed_shapes_and_random_ones():
    _assert_linear(PROBED + _shapes(39, 2), 1000)


@pytest.mark.slow
def test_chunking_time_grows_linearly_on_every_shape():
    _assert_linear(UNITS + _shapes(40, 40), 4000)
