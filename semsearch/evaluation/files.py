"""File-level figures of an evaluation, as other tools publish them: whether the right *file*
comes first, whatever passage of it was ranked (Hit@k, MRR, nDCG@k with graded relevance).

A ranking of passages becomes a ranking of files by each file's first appearance; a question's
``source`` files are relevant (gain 1) and its ``partial`` files answer in part (gain 0.5, as
peers' golden sets grade "partially relevant" notes). Only questions with a ``source`` count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

FILE_DEPTH = 10
"""Files a ranking is read to: MRR and nDCG look no deeper."""
PARTIAL_GAIN = 0.5
NDCG_AT = 5


def ranked_files(sources: Iterable[str], depth: int = FILE_DEPTH) -> tuple[str, ...]:
    """The distinct files of a passage ranking (their sources, best first), at most ``depth``."""
    files: dict[str, None] = {}
    for source in sources:
        files.setdefault(source)
        if len(files) >= depth:
            break
    return tuple(files)


def first_relevant(files: Sequence[str], relevant: Sequence[str]) -> int | None:
    """1-based rank of the first of ``files`` in ``relevant`` (None: none is)."""
    return next((n for n, name in enumerate(files, 1) if name in relevant), None)


def ndcg(
    files: Sequence[str], relevant: Sequence[str], partial: Sequence[str] = (), at: int = NDCG_AT
) -> float:
    """Normalized discounted cumulative gain of the first ``at`` files: relevant ones gain 1,
    ``partial`` ones ``PARTIAL_GAIN``, divided by the gain of the best possible order."""

    def gain(name: str) -> float:
        return 1.0 if name in relevant else PARTIAL_GAIN if name in partial else 0.0

    found = sum(gain(name) / math.log2(n + 1) for n, name in enumerate(files[:at], 1))
    ideal_gains = sorted([1.0] * len(set(relevant)) + [PARTIAL_GAIN] * len(set(partial) - set(relevant)))
    ideal = sum(g / math.log2(n + 1) for n, g in enumerate(reversed(ideal_gains[-at:]), 1))
    return found / ideal if ideal else 0.0
