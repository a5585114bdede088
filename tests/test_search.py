from __future__ import annotations

import numpy as np
import pytest

from semsearch.search import identifiers, rank, search_vectors, top_k


def brute_force(scores: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-scores, kind="stable")[:k]


@pytest.mark.parametrize("seed", range(20))
def test_top_k_equals_argsort_on_random_vectors(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    vectors = rng.normal(size=(n, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = vectors @ vectors[0]
    for k in (1, 3, 10, n - 1, n, n + 5):
        np.testing.assert_array_equal(top_k(scores, k), brute_force(scores, k))


@pytest.mark.parametrize("seed", range(20))
def test_ties_go_to_the_lower_index(seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, size=int(rng.integers(1, 60))).astype(np.float32)
    for k in range(0, scores.size + 2):
        np.testing.assert_array_equal(top_k(scores, k), brute_force(scores, k))


def test_k_zero_and_empty_index():
    assert top_k(np.array([0.5, 0.2], dtype=np.float32), 0).size == 0
    assert top_k(np.array([], dtype=np.float32), 3).size == 0


def test_search_vectors_scores_are_cosines_and_threshold_drops_low_ones():
    vectors = np.eye(4, dtype=np.float32)
    query = np.array([0.8, 0.6, 0, 0], dtype=np.float32)
    assert search_vectors(vectors, query, k=3) == [(0, pytest.approx(0.8)), (1, pytest.approx(0.6)), (2, 0.0)]
    assert search_vectors(vectors, query, k=3, min_score=0.7) == [(0, pytest.approx(0.8))]
    assert search_vectors(vectors, query, k=3, min_score=0.9) == []


@pytest.mark.parametrize(
    "question, codes",
    [
        ("Co oznacza błąd PAY-517?", ["PAY-517"]),
        ("faktura FV/2026/04/118", ["FV/2026/04/118"]),
        ("status RK-2026-004512.", ["RK-2026-004512"]),
        ("E-4021 i BLIK-09", ["E-4021", "BLIK-09"]),
        ("Czy mam 14 dni na zwrot w 2026?", []),
        ("art. 556 Kodeksu cywilnego", []),
        ("mój e-mail", []),
    ],
)
def test_identifiers_are_codes_not_numbers_or_words(question, codes):
    assert identifiers(question) == codes


def test_rank_puts_the_given_rows_first_in_score_order():
    vectors = np.eye(4, dtype=np.float32)
    query = np.array([0.8, 0.5, 0.3, 0.1], dtype=np.float32)
    assert [i for i, _ in rank(vectors, query, 4)] == [0, 1, 2, 3]
    assert [i for i, _ in rank(vectors, query, 4, first=np.array([3, 2]))] == [2, 3, 0, 1]
    assert rank(vectors, query, 2, first=np.array([3]))[0] == (3, pytest.approx(0.1))  # real score kept
