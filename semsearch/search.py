"""Exact top-k search over normalized vectors: one matrix product, one partial selection."""

from __future__ import annotations

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


def search_vectors(
    vectors: np.ndarray, query: np.ndarray, k: int, min_score: float | None = None
) -> list[tuple[int, float]]:
    """Best ``k`` rows of ``vectors`` by dot product with ``query``, dropping those under ``min_score``."""
    scores = vectors @ np.asarray(query, dtype=vectors.dtype).reshape(-1)
    found = [(int(i), float(scores[i])) for i in top_k(scores, k)]
    if min_score is not None:
        found = [(i, s) for i, s in found if s >= min_score]
    return found
