from __future__ import annotations

import numpy as np
import pytest

from semsearch.retrieve.lexing import identifiers, is_code_name, names_something_exact, references
from semsearch.retrieve.search import fuse, median, rank, search_vectors, top_k


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


def test_the_median_fusion_takes_is_numpys_to_the_last_bit():
    """``median`` replaces ``np.median`` in ``fuse`` (whose NaN check imports ``numpy.ma``): the
    same value for odd and even lengths, ties, both float widths, and NaN when one is."""
    rng = np.random.default_rng(1)
    for n in [*range(1, 40), 155, 156, 4097]:
        for dtype in (np.float32, np.float64):
            values = rng.normal(size=n).astype(dtype)
            assert median(values) == float(np.median(values)), (n, dtype)
            rounded = np.round(values, 1)  # ties
            assert median(rounded) == float(np.median(rounded)), (n, dtype)
    assert np.isnan(median(np.array([0.5, np.nan, 0.2], dtype=np.float32)))


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
        ("Do jakiej firmy należy NIP 5272981046?", ["5272981046"]),
        ("What is `max_attachment_mb` for?", ["max_attachment_mb"]),
        ("What does Ctrl+Alt+M do?", ["Ctrl+Alt+M"]),
        ("end-to-end i Wi-Fi", []),
    ],
)
def test_identifiers_are_codes_not_numbers_or_words(question, codes):
    assert identifiers(question) == codes


@pytest.mark.parametrize(
    "question, chains",
    [
        ("Co mówi § 7 regulaminu?", [["§ 7"]]),
        ("zgoda z art. 6 ust. 1 lit. a RODO?", [["art. 6", "ust. 1", "lit. a"]]),
        ("§5 ust. 2, a potem § 7", [["§5", "ust. 2"], ["§ 7"]]),
        ("Czy art. 556 dotyczy mnie?", [["art. 556"]]),  # an article alone too (a probe: "art. 99")
        ("Czy ust. 2 dotyczy mnie?", []),  # any other part alone is no reference
        ("Ile to np. 5 dni?", []),
        ("Przyjdzie ok. 13:00", []),
        ("no references in 2026", []),
    ],
)
def test_references_are_chains_of_abbreviated_parts(question, chains):
    assert references(question) == chains


def test_rank_puts_the_given_rows_first_in_score_order():
    scores = np.array([0.8, 0.5, 0.3, 0.1], dtype=np.float32)
    assert rank(scores, 4).tolist() == [0, 1, 2, 3]
    assert rank(scores, 4, first=np.array([3, 2])).tolist() == [2, 3, 0, 1]
    assert rank(scores, 1, first=np.array([3])).tolist() == [3]


@pytest.mark.parametrize("seed", range(20))
def test_a_filter_applies_before_the_top_k(seed):
    """Filtered ranking equals brute force over the allowed rows alone: a filter never empties
    a result that exists, however low the allowed rows score."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    scores = rng.normal(size=n).astype(np.float32)
    allowed = rng.random(n) < rng.choice([0.02, 0.3, 1.0])
    rows = np.flatnonzero(allowed)
    for k in (1, 3, 10, n + 1):
        expected = rows[brute_force(scores[rows], k)]
        np.testing.assert_array_equal(rank(scores, k, allowed=allowed), expected)


def test_fuse_is_scale_free_and_keeps_dense_order_without_keywords():
    rng = np.random.default_rng(0)
    cosine = rng.uniform(0.7, 0.9, size=50).astype(np.float32)
    keyword = np.where(rng.random(50) < 0.2, rng.uniform(0, 12, size=50), 0).astype(np.float32)
    fused = fuse(cosine, keyword)
    # An affine change of either scale (another model, another corpus) changes nothing.
    np.testing.assert_allclose(fuse(cosine * 4 - 3, keyword * 0.1), fused, atol=1e-5)
    np.testing.assert_array_equal(np.argsort(-fuse(cosine, np.zeros(50))), np.argsort(-cosine))
    best_keyword = int(np.argmax(keyword))  # the best of both worlds wins
    both = fuse(np.where(np.arange(50) == best_keyword, cosine.max(), cosine), keyword)
    assert int(np.argmax(both)) == best_keyword


@pytest.mark.parametrize(
    "question, exact",
    [
        ("Co mówi § 7 regulaminu?", True),
        ("Co oznacza błąd PAY-517?", True),
        ("Czy mam 14 dni na zwrot?", True),
        ('Gdzie jest "numer przesyłki"?', True),
        ("What is max_attachment_mb for?", True),
        ("Chcę odzyskać to, co zapłaciłem", False),
        ("Why doesn't sync work on my phone?", False),
        ("What does events.once() return?", True),
        ("what does once() return", True),  # a call, even without a dotted name
        ("How do I read a file with fs.readFile", True),
        ("what is --max-old-space-size for", True),
        ("when is ERR_INVALID_ARG_TYPE thrown", True),
        ("Where does npm look for package.json.", True),  # the sentence's full stop is no part
        ("how is prependOnceListener different from once", True),
        ("Does .npmignore override the files field?", True),
        ("How do I reset my password.", False),  # a full stop ends a sentence, not a name
        ("Do you ship to the U.S. or e.g. Canada?", False),  # abbreviations are no dotted names
        ("Zwrot m.in. kurierem, tj. za darmo.", False),
        ("Can I change my e-mail address - and my name?", False),
        ("Is it end-to-end encrypted?", False),
        ("What is the returns policy (for gifts)?", False),
    ],
)
def test_questions_naming_something_exact(question, exact):
    assert names_something_exact(question) is exact


@pytest.mark.parametrize(
    "token, code",
    [
        ("events.once", True),
        ("fs.readFile", True),
        ("process.env.NODE_ENV", True),
        ("package.json", True),
        ("index.d.ts", True),
        ("Node.js", True),
        ("readFile", True),
        ("EventEmitter", True),
        ("--max-old-space-size", True),
        ("--omit=peer", True),
        ("-g", True),
        (".npmrc", True),
        ("$HOME", True),
        ("password.", False),
        ("e.g.", False),
        ("i.e", False),
        ("m.in.", False),
        ("Ph.D.", False),
        ("U.S.A.", False),
        ("e-mail", False),
        ("end-to-end", False),
        ("-", False),
        ("...", False),
        ("4.2", False),  # a number: exact through its digit, not as a name
        ("HTTP", False),
        ("Zwrot", False),
        ("zapłaciłem", False),
    ],
)
def test_code_names(token, code):
    assert is_code_name(token) is code
