"""``find_sorted`` against a brute-force search of each value."""

from __future__ import annotations

import numpy as np
import pytest

from semsearch.util.sorted_lookup import find_sorted


@pytest.mark.parametrize("size", [0, 1, 2, 7, 300])
def test_it_finds_what_a_scan_of_each_value_finds(size):
    generator = np.random.default_rng(size)
    ascending = np.unique(generator.integers(0, 2 * size + 1, size))
    values = generator.integers(-2, 2 * size + 3, 50)
    at, found = find_sorted(ascending, values)
    expected = np.array([value in ascending.tolist() for value in values], dtype=bool)
    assert np.array_equal(found, expected)
    assert expected.any() or size < 2  # the case is not all misses
    assert np.array_equal(ascending[at[found]], values[found])
    assert at.shape == found.shape == values.shape
