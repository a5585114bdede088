"""`ask --context --expand`: sources grown to their section or file within the budget."""

from __future__ import annotations

import random

import pytest

from semsearch.context.expand import Block
from semsearch.context.prompt import CUT, _assemble, _block_text, build_prompt
from semsearch.ingest.chunking import Chunk
from semsearch.retrieve.search import Hit


def count(text: str) -> int:
    return len(text.split())


def document(sections: list[int]) -> list[Chunk]:
    """Chunks of one file: ``sections[i]`` chunks in section i, each on its own lines."""
    chunks, line = [], 3
    for number, size in enumerate(sections):
        for part in range(size):
            text = f"sekcja{number} część{part} " + " ".join(f"słowo{number}x{part}x{w}" for w in range(8))
            chunks.append(Chunk(f"f.md#{len(chunks)}", "f.md", ("Tytuł", f"S{number}"), text, line, line, 10))
            line += 2
        line += 2  # the next section's heading
    return chunks


def hits_at(chunks: list[Chunk], rows: list[int]) -> list[Hit]:
    return [Hit(rank=n, score=0.9, chunk=chunks[row], row=row) for n, row in enumerate(rows, 1)]


def section_scope(chunks: list[Chunk]):
    def scope(hit: Hit):
        return [(row, c) for row, c in enumerate(chunks) if c.headings == hit.chunk.headings]

    return scope


def file_scope(chunks: list[Chunk]):
    return lambda hit: list(enumerate(chunks))


def included_rows(prompt) -> set[int]:
    return {row for block in prompt.blocks for row in block.rows}


def test_hits_sharing_a_section_become_one_source_holding_the_whole_section():
    chunks = document([4, 3])
    prompt = build_prompt("pytanie", hits_at(chunks, [1, 3, 5]), 10_000, count, section_scope(chunks))
    assert [[hit.rank for hit in block.hits] for block in prompt.blocks] == [[1, 2], [3]]
    assert [sorted(block.rows) for block in prompt.blocks] == [[0, 1, 2, 3], [4, 5, 6]]
    assert prompt.text.count("[1] f.md › Tytuł › S0 (lines 3–9)") == 1
    assert prompt.left_out == 0
    assert all(chunk.text in prompt.text for chunk in chunks)


def test_a_whole_file_writes_each_section_heading_once():
    chunks = document([2, 2])
    prompt = build_prompt("pytanie", hits_at(chunks, [0]), 10_000, count, file_scope(chunks), whole_file=True)
    assert "[1] f.md (lines 3–11)" in prompt.text
    assert prompt.text.count("## S0") == 1 and prompt.text.count("## S1") == 1


def test_left_out_rows_between_included_ones_are_marked():
    chunks = document([6])
    block = Block(hits_at(chunks, [0]), list(enumerate(chunks)), rows={0, 1, 4})
    assert block.text.count("…") == 1
    assert block.text.index(chunks[1].text) < block.text.index("…") < block.text.index(chunks[4].text)


@pytest.mark.parametrize("seed", range(25))
def test_expansion_holds_what_the_default_holds_fits_and_grows_nearest_first(seed):
    rng = random.Random(seed)
    chunks = document([rng.randint(1, 5) for _ in range(rng.randint(1, 4))])
    rows = rng.sample(range(len(chunks)), rng.randint(1, min(3, len(chunks))))
    hits = hits_at(chunks, rows)
    budget = rng.randint(count(_assemble("pytanie", [CUT])), 400)  # from the least that holds a source
    default = build_prompt("pytanie", hits, budget, count)
    for scope in (section_scope(chunks), file_scope(chunks)):
        expanded = build_prompt("pytanie", hits, budget, count, scope)
        assert expanded.tokens <= budget
        if expanded.blocks is None:  # even the best hit alone is over the budget: cut, as by default
            assert expanded.text == default.text
            continue
        # Brute force: every hit the default holds is held, as its own chunk, and no more left out.
        assert {hit.row for hit in default.sources} <= included_rows(expanded)
        assert expanded.left_out <= default.left_out
        for block in expanded.blocks:
            scope_rows = [row for row, _ in scope(block.hits[0])]
            assert block.rows <= set(scope_rows)
            assert all(scope(hit) == scope(block.hits[0]) for hit in block.hits)
        # Every row left out of a scope is one that would not fit the final prompt.
        for block in expanded.blocks:
            for row in {row for row, _ in block.scope} - block.rows:
                block.rows.add(row)
                texts = [_block_text(n, b) for n, b in enumerate(expanded.blocks, 1)]
                assert count(_assemble("pytanie", texts)) > budget
                block.rows.discard(row)
        keys = [tuple(r for r, _ in block.scope) for block in expanded.blocks]
        assert len(keys) == len(set(keys)), "two sources for one scope"
