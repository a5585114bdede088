"""The order of the passages holding what a question names (see ``Searcher.identifier_rows``).

They all hold the name, so the name no longer tells them apart: among them the rest of the
question does. "What does events.once() return?" finds seven chunks under the section
events.once(…); the code examples score highest on "events" and "once", the chunk stating
what it returns on "return".
"""

from __future__ import annotations

import numpy as np

from semsearch.encode.keywords import KeywordIndex, tokenize
from semsearch.retrieve.question import ParsedQuestion
from semsearch.retrieve.search import fuse, rescale
from semsearch.util.sorted_lookup import find_sorted


def rest_tokens(keywords: KeywordIndex, question: ParsedQuestion) -> list[str]:
    """The question's keyword tokens without those of what it names exactly (``named_strings``)."""
    said = {token for name in question.named_strings for token in tokenize(name, keywords.language)}
    return [token for token in question.tokens_in(keywords.language) if token not in said]


def exact_scores(keywords: KeywordIndex, question: ParsedQuestion, cosine: np.ndarray) -> np.ndarray:
    """Hybrid scores ranking the rows that hold what ``question`` names among themselves: cosine
    fused with BM25 over the rest of the question (see ``fuse``, ``rest_tokens``)."""
    return fuse(cosine, keywords.token_scores(rest_tokens(keywords, question)))


def exact_scores_of(
    keywords: KeywordIndex,
    question: ParsedQuestion,
    cosine: np.ndarray,
    rows: np.ndarray,
    median: float,
    best: float,
) -> np.ndarray:
    """``exact_scores`` of ``rows`` alone, from their ``cosine`` and the ``median`` and ``best``
    cosine over every row (an engine's candidates: ``retrieve.engine``): the BM25 over the rest
    of the question is read from its tokens' columns, not summed over every row."""
    held, scores = keywords.sparse_token_scores(rest_tokens(keywords, question))
    top = float(scores.max()) if len(scores) else 0.0
    at, found = find_sorted(held, rows)
    keyword = np.zeros(len(rows), dtype=scores.dtype)
    keyword[found] = scores[at[found]]
    return rescale(np.asarray(cosine), median, best) + (keyword / top if top > 0 else 0.0)
