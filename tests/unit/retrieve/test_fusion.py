"""Hybrid fusion in ``Index.ranked`` against brute force: for every question, the order is cosine
rescaled within the question (median 0, best 1) plus BM25 by its best, at ``KEYWORD_WEIGHT`` for
a question naming something exact and ``PLAIN_KEYWORD_WEIGHT`` for one in plain words, computed
here by hand from bm25s itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semsearch.encode.keywords import build_keyword_index, tokenize
from semsearch.ingest.chunking import Chunk
from semsearch.retrieve.index import Index
from semsearch.retrieve.question import ParsedQuestion
from semsearch.retrieve.search import KEYWORD_WEIGHT, PLAIN_KEYWORD_WEIGHT, fuse
from semsearch.retrieve.searcher import Searcher, fuses

WORDS = ["zwrot", "14", "dni", "paczka", "kurier", "faktura", "2024", "blik", "karta", "konto"]


def in_memory_index(texts: list[str], vectors: np.ndarray) -> Index:
    chunks = [Chunk(f"f{i}.md#0", f"f{i}.md", ("Tytuł",), text, 1, 1, 5) for i, text in enumerate(texts)]
    keywords = build_keyword_index([f"Tytuł\n\n{t}" for t in texts], "pl", [c.headings for c in chunks])
    empty = np.empty((0, vectors.shape[1]), dtype=np.float32)
    return Index(Path("in-memory"), {}, chunks, vectors, empty, empty, keywords)


QUESTIONS = [
    ("Ile dni na zwrot, 14 czy 30?", True, KEYWORD_WEIGHT),  # it names numbers
    ("Ile dni mam na zwrot paczki kurierem?", False, PLAIN_KEYWORD_WEIGHT),  # plain words
]


@pytest.mark.parametrize(("text", "names_exact", "weight"), QUESTIONS)
@pytest.mark.parametrize("seed", range(12))
def test_fused_order_equals_brute_force(seed, text, names_exact, weight):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 60))
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 12)))) for _ in range(n)]
    vectors = rng.normal(size=(n, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = rng.normal(size=8).astype(np.float32)
    query /= np.linalg.norm(query)
    question = ParsedQuestion.parse(text, "pl")
    assert question.names_exact is names_exact
    assert fuses("hybrid")  # keywords have a say in every question
    index = in_memory_index(texts, vectors)

    cosine = vectors @ query
    import bm25s  # the reference, and scipy with it: imported by a build, not by collecting the suite

    reference = bm25s.BM25()
    reference.index([tokenize(f"Tytuł\n\n{t}", "pl") for t in texts], show_progress=False)
    kept = [token for token in tokenize(text, "pl") if token in reference.vocab_dict]
    bm25 = reference.get_scores(kept) if kept else np.zeros(n)
    median, best = np.median(cosine), cosine.max()
    keyword = weight * bm25 / bm25.max() if bm25.max() > 0 else 0.0
    expected_scores = (cosine - median) / (best - median) + keyword
    k = min(5, n)
    expected = np.argsort(-expected_scores, kind="stable")[:k]

    ranked = Searcher(index).ranked(question, query, k, mode="hybrid")
    assert [r.row for r in ranked] == expected.tolist()
    np.testing.assert_allclose([r.score for r in ranked], cosine[expected], rtol=1e-6)


def test_half_weight_lets_the_cosine_outvote_a_keyword_tie_breaker():
    """A chunk best by cosine and one holding the question's rarest words: at equal weights the
    keyword side wins a close call; at half weight a clear cosine lead stands."""
    cosine = np.array([1.0, 0.4, 0.0, 0.0, 0.0])
    keyword = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    assert np.argmax(fuse(cosine, keyword)) == 1
    assert np.argmax(fuse(cosine, keyword, KEYWORD_WEIGHT)) == 0


def test_plain_questions_give_keywords_less_say_than_exact_ones():
    """A question in plain words weighs BM25 less than one naming something exact (whose words
    embeddings blur): a cosine lead the keyword side overturns for the one stands for the other."""
    assert 0 < PLAIN_KEYWORD_WEIGHT < KEYWORD_WEIGHT < 1
    cosine = np.array([1.0, 0.55, 0.0, 0.0, 0.0])
    keyword = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    assert np.argmax(fuse(cosine, keyword, KEYWORD_WEIGHT)) == 1
    assert np.argmax(fuse(cosine, keyword, PLAIN_KEYWORD_WEIGHT)) == 0


@pytest.mark.parametrize("seed", range(10))
def test_scores_of_some_rows_fuse_and_map_as_the_whole_arrays(seed):
    """``QuestionScores`` over some rows (an engine's candidates), with the figures over every
    row, fuses them as ``fuse`` does the whole arrays, and maps rows to places and back as a
    search through the whole list would."""
    from semsearch.retrieve.search import median
    from semsearch.retrieve.searcher import QuestionScores

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    cosine = rng.uniform(0.5, 0.9, n).astype(np.float32)
    keyword = np.where(rng.random(n) < 0.3, rng.uniform(0, 8, n), 0).astype(np.float32)
    rows = np.flatnonzero(rng.random(n) < 0.4)
    some = QuestionScores(
        cosine[rows], None, keyword[rows], rows=rows, median=median(cosine), best=float(cosine.max()),
        keyword_best=float(keyword.max()),
    )  # fmt: skip
    weight = float(rng.uniform(0.2, 1.5))
    np.testing.assert_allclose(some.fused(weight), fuse(cosine, keyword, weight)[rows], rtol=1e-6, atol=1e-7)
    asked = np.unique(rng.integers(0, n, size=int(rng.integers(0, 20))))
    scored = [r for r in asked.tolist() if r in set(rows.tolist())]
    assert some.positions(asked).tolist() == [rows.tolist().index(r) for r in scored]
    assert some.row_of(some.positions(asked)).tolist() == scored
    whole = QuestionScores(cosine, None, keyword)
    assert whole.positions(asked).tolist() == asked.tolist() == whole.row_of(asked).tolist()
    np.testing.assert_array_equal(whole.fused(weight), fuse(cosine, keyword, weight))
