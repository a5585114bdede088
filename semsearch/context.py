"""A prompt for a language model built from what `ask` found (``ask --context``).

Sources are numbered by relevance ([1] is the best) and printed in reverse order, so the most
relevant one sits last, next to the question: models read the end of a long prompt most
attentively ("lost in the middle", Liu et al. 2023). The whole prompt fits a token budget
counted with tiktoken; sources that do not fit are left out, least relevant first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import UsageError
from .search import Hit

INSTRUCTIONS = (
    "Answer the question using only the numbered sources below. "
    "Cite the sources you use by their numbers, like [1]. "
    "If the sources do not contain the answer, say that they do not, and do not guess. "
    "Answer in the language of the question."
)


@dataclass(frozen=True)
class Prompt:
    text: str
    sources: list[Hit]
    """The hits included, best first (source [n] is ``sources[n - 1]``)."""
    tokens: int
    left_out: int
    """Hits that did not fit the budget."""


def _source_block(number: int, hit: Hit) -> str:
    return f"[{number}] {hit.chunk.location}\n{hit.chunk.text.strip()}"


def _assemble(question: str, blocks: list[str]) -> str:
    return "\n\n".join([INSTRUCTIONS, "Sources:", *reversed(blocks), f"Question: {question}"]) + "\n"


def build_prompt(
    question: str, hits: list[Hit], max_tokens: int, count_tokens: Callable[[str], int]
) -> Prompt:
    """The prompt for ``question`` with as many of ``hits`` (best first) as fit ``max_tokens``.

    The best hit is cut at a word boundary when even it alone does not fit.
    """
    if count_tokens(_assemble(question, [])) > max_tokens:
        raise UsageError(
            f"--max-context-tokens {max_tokens} leaves no room for the instructions and the question"
        )
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
        if count_tokens(_assemble(question, [" ".join(words[:middle]) + " …"])) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low]) + " …"
