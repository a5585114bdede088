"""A prompt for a language model built from what `ask` found (``ask --context``).

Sources are numbered by relevance ([1] is the best) and printed in reverse order, so the most
relevant one sits last, next to the question: models read the end of a long prompt most
attentively ("lost in the middle", Liu et al. 2023); the prompt's first line says so, for the model
and for a reader who opens it. The whole prompt fits a token budget
counted with tiktoken; sources that do not fit are left out, least relevant first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from semsearch.context.expand import Block, Scope, gather, grow, scope_in
from semsearch.errors import UsageError
from semsearch.retrieve.search import Hit

if TYPE_CHECKING:
    from semsearch.retrieve.answer import Answer
    from semsearch.retrieve.index import Index

INSTRUCTIONS = (
    "Answer the question using only the numbered sources below, numbered by relevance: [1] is "
    "the most relevant and is listed last, just above the question. "
    "Cite the sources you use by their numbers, like [1]. "
    "If the sources do not contain the answer, say that they do not, and do not guess. "
    "Answer in the language of the question."
)

CUT = " …"
"""Ends a source cut to fit the budget."""


@dataclass(frozen=True)
class Prompt:
    text: str
    sources: list[Hit]
    """The hits included, best first (source [n] is ``sources[n - 1]``)."""
    tokens: int
    left_out: int
    """Hits that did not fit the budget."""
    blocks: list[Block] | None = None
    """With ``--expand``: what each numbered source holds (its hits, best first, and its
    chunks); ``sources`` then has each block's best hit."""


def _source_block(number: int, hit: Hit) -> str:
    return f"[{number}] {hit.chunk.location}\n{hit.chunk.text.strip()}"


def _assemble(question: str, blocks: list[str]) -> str:
    return "\n\n".join([INSTRUCTIONS, "Sources:", *reversed(blocks), f"Question: {question}"]) + "\n"


def context_prompt(index: Index, answer: Answer, max_tokens: int, expand: str = "chunk") -> Prompt:
    """``ask --context``: the prompt for what ``answer`` found in ``index``, each result given
    as its chunk (``expand="chunk"``) or as much of its "section" or "file" as fits."""
    from semsearch.ingest.tokens import count_tokens

    scope = None if expand == "chunk" else scope_in(index, expand)
    return build_prompt(answer.question, answer.hits, max_tokens, count_tokens, scope, expand == "file")


def build_prompt(
    question: str,
    hits: list[Hit],
    max_tokens: int,
    count_tokens: Callable[[str], int],
    scope: Scope | None = None,
    whole_file: bool = False,
) -> Prompt:
    """The prompt for ``question`` with as many of ``hits`` (best first) as fit ``max_tokens``.

    The best hit is cut at a word boundary when even it alone does not fit. With ``scope``
    (``--expand``), each hit's source grows to the chunks around it (see ``expand``).
    """
    if count_tokens(_assemble(question, [CUT])) > max_tokens:  # a source cut to nothing, at least
        raise UsageError(
            f"--max-context-tokens {max_tokens} leaves no room for the instructions, the question "
            "and a source"
        )
    if scope is not None:
        return _expanded(question, hits, max_tokens, count_tokens, scope, whole_file)
    blocks: list[str] = []
    for number, hit in enumerate(hits, 1):
        block = _source_block(number, hit)
        if count_tokens(_assemble(question, [*blocks, block])) > max_tokens:
            if not blocks:
                blocks.append(_cut_to_fit(question, block, max_tokens, count_tokens))
            break
        blocks.append(block)
    text = _assemble(question, blocks)
    return Prompt(
        text=text, sources=hits[: len(blocks)], tokens=count_tokens(text), left_out=len(hits) - len(blocks)
    )


def _cut_to_fit(question: str, block: str, max_tokens: int, count_tokens: Callable[[str], int]) -> str:
    """The longest word-boundary prefix of ``block`` (ending in " …") that fits the budget."""
    words = block.split(" ")
    low, high = 0, len(words)  # words[:low] fits; binary search on the number of words kept
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(_assemble(question, [" ".join(words[:middle]) + CUT])) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low]) + CUT


def _block_text(number: int, block: Block) -> str:
    return f"[{number}] {block.location}\n{block.text}"


def _expanded(
    question: str,
    hits: list[Hit],
    max_tokens: int,
    count_tokens: Callable[[str], int],
    scope: Scope,
    whole_file: bool,
) -> Prompt:
    """The prompt with as many hits as fit as their own chunks (as without expansion), hits
    sharing a scope in one source; then each source grown around its hits, best first, while
    the prompt fits."""

    def measure(blocks: list[Block]) -> int:
        texts = [_block_text(n, block) for n, block in enumerate(blocks, 1)]
        return count_tokens(_assemble(question, texts))

    included = gather(hits, scope, lambda blocks: measure(blocks) <= max_tokens, whole_file)
    if not included:  # the best hit alone is over the budget: cut, as without expansion
        return replace(build_prompt(question, hits[:1], max_tokens, count_tokens), left_out=len(hits) - 1)
    grow(included, lambda: measure(included), max_tokens, count_tokens)
    text = _assemble(question, [_block_text(n, block) for n, block in enumerate(included, 1)])
    held = sum(len(block.hits) for block in included)
    return Prompt(
        text=text,
        sources=[block.hits[0] for block in included],
        tokens=count_tokens(text),
        left_out=len(hits) - held,
        blocks=included,
    )
