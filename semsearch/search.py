"""Exact top-k search over normalized vectors: one matrix product, one partial selection."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .chunking import Chunk


@dataclass(frozen=True)
class Hit:
    rank: int
    score: float
    chunk: Chunk


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first; ties go to the lower index.

    Equals ``np.argsort(-scores, kind="stable")[:k]`` but costs O(n + k log k): ``argpartition``
    finds the k-th best score, then only the candidates at or above it are sorted.
    """
    n = scores.shape[0]
    k = max(0, min(k, n))
    if k == 0:
        return np.empty(0, dtype=np.int64)
    if k < n:
        kth_best = scores[np.argpartition(scores, n - k)[n - k]]
        above = np.flatnonzero(scores > kth_best)
        tied = np.flatnonzero(scores == kth_best)[: k - above.size]
        candidates = np.concatenate([above, tied])
    else:
        candidates = np.arange(n)
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order]


def rank(
    vectors: np.ndarray, query: np.ndarray, k: int, first: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """Best ``k`` rows of ``vectors`` by dot product with ``query``, as (row, score).

    Rows listed in ``first`` rank above all others (by their own scores among themselves).
    """
    scores = vectors @ np.asarray(query, dtype=vectors.dtype).reshape(-1)
    ranking = scores
    if first is not None and len(first):
        ranking = scores.copy()
        ranking[first] += 2.0  # above any cosine
    return [(int(i), float(scores[i])) for i in top_k(ranking, k)]


def search_vectors(
    vectors: np.ndarray, query: np.ndarray, k: int, min_score: float | None = None
) -> list[tuple[int, float]]:
    """Best ``k`` rows of ``vectors`` by dot product with ``query``, dropping those under ``min_score``."""
    found = rank(vectors, query, k)
    if min_score is not None:
        found = [(i, s) for i, s in found if s >= min_score]
    return found


_TOKEN = re.compile(r"[^\s\"'„”“«»()\[\]{},;:!?]+")


def identifiers(question: str) -> list[str]:
    """Codes a question names verbatim: tokens mixing letters and digits, or digits joined by
    separators (``PAY-517``, ``FV/2026/04/118``, ``E-4021``). Plain numbers and words are not."""
    found = []
    for token in _TOKEN.findall(question):
        token = token.strip(".")
        has_digit = any(c.isdigit() for c in token)
        has_letter = any(c.isalpha() for c in token)
        joined = any(c in "-/_" for c in token.strip("-/_"))
        if len(token) >= 4 and has_digit and (has_letter or joined):
            found.append(token)
    return found
