"""File-level figures (evaluation/files.py) against figures worked out by hand and by brute force."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from semsearch.errors import QuestionsError
from semsearch.evaluation.files import first_relevant, ndcg, ranked_files
from semsearch.evaluation.questions import load_questions


def test_files_in_order_of_first_passage_and_cut_at_depth():
    sources = ["b.md", "b.md", "a.md", "c.md", "a.md", "d.md"]
    assert ranked_files(sources) == ("b.md", "a.md", "c.md", "d.md")
    assert ranked_files(sources, depth=2) == ("b.md", "a.md")
    assert ranked_files([]) == ()


def test_first_relevant_is_the_rank_of_the_first_right_file():
    assert first_relevant(("x.md", "a.md", "b.md"), ("b.md", "a.md")) == 2
    assert first_relevant(("x.md",), ("a.md",)) is None


def test_ndcg_by_hand():
    # relevant a (1), partial p (0.5): ranked p, x, a -> DCG 0.5 + 0 + 1/log2(4) = 1.0;
    # ideal 1 + 0.5/log2(3)
    found = ndcg(("p.md", "x.md", "a.md"), ("a.md",), ("p.md",))
    assert found == pytest.approx(1.0 / (1 + 0.5 / math.log2(3)))
    assert ndcg(("a.md", "p.md"), ("a.md",), ("p.md",)) == pytest.approx(1.0)
    assert ndcg(("x.md",), ("a.md",)) == 0.0
    assert ndcg(("x.md", "y.md", "z.md", "w.md", "v.md", "a.md"), ("a.md",)) == 0.0  # beyond @5


def test_ndcg_against_brute_force_best_order():
    """The ideal gain is the best of every order of the graded files: no ranking scores above 1,
    and the best ranking scores exactly 1."""
    rng = random.Random(7)
    names = [f"{c}.md" for c in "abcdefg"]
    for _ in range(60):
        relevant = rng.sample(names, rng.randint(1, 3))
        partial = rng.sample([n for n in names if n not in relevant], rng.randint(0, 3))
        orders = list(itertools.permutations(names, 5))
        scores = [ndcg(order, relevant, partial) for order in rng.sample(orders, 200)]
        best = max(ndcg(order, relevant, partial) for order in orders[:: max(1, len(orders) // 400)])
        assert max(scores) <= 1 + 1e-12
        graded = sorted(relevant) + sorted(partial)
        assert ndcg(tuple(graded[:5]), relevant, partial) == pytest.approx(1.0)
        assert best <= 1 + 1e-12


def test_partial_is_read_and_needs_a_source(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "q", "source": "a.md", "partial": ["p.md", "r.md"]}\n')
    [question] = load_questions(path)
    assert question.partial == ("p.md", "r.md")
    path.write_text('{"question": "q", "partial": "p.md"}\n')
    with pytest.raises(QuestionsError, match="'partial' needs a 'source'"):
        load_questions(path)
    path.write_text('{"question": "q", "source": "a.md", "partial": 3}\n')
    with pytest.raises(QuestionsError, match="'partial' must be a path"):
        load_questions(path)
