"""Looking values up in an ascending array: which of them it holds, and where."""

from __future__ import annotations

import numpy as np


def find_sorted(ascending: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(at, found)``: ``found[i]`` tells whether ``values[i]`` is in ``ascending``, and then
    ``ascending[at[i]] == values[i]`` (``at`` is 0 where it is not, and ``ascending`` empty)."""
    values = np.asarray(values)
    if not len(ascending):
        return np.zeros(len(values), dtype=np.intp), np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(ascending, values), len(ascending) - 1)
    return at, ascending[at] == values
