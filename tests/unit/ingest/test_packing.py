"""Packing spans into chunks: the same chunks as the span-by-span greedy rule, found with a few
token counts a chunk (a long paragraph without sentence breaks took minutes)."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest

from semsearch.ingest import chunking
from semsearch.ingest.chunking import chunk_markdown
from semsearch.ingest.packing import last_accepted
from semsearch.ingest.tokens import LONGEST_TOKEN_BYTES, _parse_ranks, _rank_file_bytes, count_tokens
from tests.helpers import SAMPLE_DOCS


def reference_pack(self, spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The chunker's packing as it was first written: every span tried in turn."""
    glued: list[tuple[int, int]] = []
    for span in spans:
        if glued and self.text[glued[-1][1] - 1] == ":" and self.fits(glued[-1][0], span[1]):
            glued[-1] = (glued[-1][0], span[1])
        else:
            glued.append(span)
    current: tuple[int, int] | None = None
    estimate = 0
    for span in glued:
        span_tokens = self.tokens_of(*span) - self.prefix_tokens
        if current is None:
            current, estimate = span, self.prefix_tokens + span_tokens
            continue
        if estimate + span_tokens + 1 <= self.max_tokens and self.fits(current[0], span[1]):
            current = (current[0], span[1])
            estimate = self.tokens_of(*current)
        else:
            yield current
            current, estimate = span, self.prefix_tokens + span_tokens
    if current is not None:
        yield current


def prose(share: int = 1) -> str:
    """The sample docs' files (the first 1/share of them) joined."""
    files = sorted(SAMPLE_DOCS.glob("*.md"))
    return "\n\n".join(path.read_text(encoding="utf-8") for path in files[: max(1, len(files) // share)])


def texts(share: int = 1) -> dict[str, str]:
    """The cases the rule is compared on; ``share`` > 1 keeps 1/share of each (and of the sample
    docs' files): the fast lane's sizes, every case still many chunks long at each budget."""
    words = re.sub(r"[#\n.!?;:…]", " ", prose()).split()
    rng = random.Random(7)
    urls = [
        f"https://example.com/{'x' * rng.randrange(60)}/{i}" if i % 9 == 0 else w for i, w in enumerate(words)
    ]
    return {
        "sample docs": prose(share),
        "one paragraph, no sentence breaks": "# Tytuł\n\n" + " ".join(words[: 2500 // share]),
        "long words near every cut": "# Linki\n\n" + " ".join(urls[: 2000 // share]),
        "lead-ins in a row": "# C\n\n" + " ".join(f"krok {i}:" for i in range(600 // share)),
        "a list introduced by a colon": "# L\n\nOto lista:\n\n"
        + "\n".join(f"- punkt {w}" for w in words[: 400 // share]),
    }


def assert_packing_as_span_by_span(monkeypatch, max_tokens: int, share: int) -> None:
    def model_limit(text: str) -> bool:  # a second limit that binds before the budget sometimes
        return len(text) <= 900

    def chunks(text: str) -> list[dict]:
        found = chunk_markdown(
            text, "a.md", max_tokens=max_tokens, count_tokens=count_tokens, fits=model_limit
        )
        return [chunk.to_dict() for chunk in found]

    cases = texts(share)
    fast = {name: chunks(text) for name, text in cases.items()}
    monkeypatch.setattr(chunking._Splitter, "pack", reference_pack)
    assert fast == {name: chunks(text) for name, text in cases.items()}
    assert all(chunk["tokens"] <= max_tokens for found in fast.values() for chunk in found)
    assert all(len(found) >= 3 for found in fast.values())  # each case is cut, at each budget


@pytest.mark.parametrize("max_tokens", [40, 120, 300])
def test_chunks_equal_those_of_the_span_by_span_rule(monkeypatch, max_tokens):
    """On a quarter of each case (the whole cases in the slow twin)."""
    assert_packing_as_span_by_span(monkeypatch, max_tokens, share=4)


@pytest.mark.slow
@pytest.mark.parametrize("max_tokens", [40, 120, 300])
def test_chunks_equal_those_of_the_span_by_span_rule_on_whole_cases(monkeypatch, max_tokens):
    assert_packing_as_span_by_span(monkeypatch, max_tokens, share=1)


def test_a_long_paragraph_is_counted_a_few_times_over_not_once_per_word():
    text = "# x\n\n" + " ".join(["alpha", "beta"] * 5000)
    counted = 0

    def counting(part: str) -> int:
        nonlocal counted
        counted += len(part)
        return count_tokens(part)

    found = chunk_markdown(text, "o.md", max_tokens=300, count_tokens=counting)
    assert counted < 40 * len(text)  # was 450x: the whole chunk counted again for every word
    assert all(chunk.tokens <= 300 for chunk in found)
    assert " ".join(chunk.text for chunk in found) == text.removeprefix("# x\n\n")


def test_no_cl100k_token_is_longer_than_the_bound_the_chunker_relies_on():
    ranks = _parse_ranks(_rank_file_bytes())  # every token count_tokens can produce
    assert max(len(token) for token in ranks) <= LONGEST_TOKEN_BYTES


@pytest.mark.parametrize(
    "repeats", [2_000, pytest.param(10_000, marks=pytest.mark.slow)], ids=["10k chars", "50k chars"]
)
def test_an_unbroken_run_of_characters_is_cut_to_the_budget(repeats):
    run = "ab1cd" * repeats  # base64-like, no space, no sentence end: 60 chunks, 300 in the slow lane
    found = chunk_markdown(f"# Blob\n\n{run}\n", "b.md", max_tokens=100, count_tokens=count_tokens)
    assert "".join(chunk.text for chunk in found) == run
    assert all(chunk.tokens <= 100 for chunk in found)


def test_last_accepted_finds_the_edge_from_any_starting_probe():
    for edge in range(0, 40):
        for probe in range(1, 45):
            assert last_accepted(0, 40, probe, lambda k, edge=edge: k <= edge) == edge
