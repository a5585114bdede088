"""The one decision rule (gate.decision.decide) and the passage it reads (read_passage) against
brute-force readings of them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from semsearch.gate.decision import GATE_DEPTH, decide, read_passage
from semsearch.retrieve.answer import Ranked
from semsearch.retrieve.names import all_unheld, is_salient


def test_decide_matches_its_definition_on_a_grid():
    scores = [None, 0.2, 0.5, 0.8, 0.81]
    for score, exact, baseline, margin, legacy, unheld in itertools.product(
        scores, (False, True), (0.0, 0.3, 0.6), (0.1, 0.2), (False, True), (False, True)
    ):
        verdict = decide(score, exact, baseline, margin, legacy, unheld)
        threshold = max(margin, baseline) if legacy else margin + baseline
        assert verdict.threshold == threshold
        expected = score is not None and (exact or score >= threshold) and not unheld
        assert verdict.answered == expected


def brute_force_read(ranked: list[Ranked]) -> int | None:
    """The position the gate reads, by its definition: among the first three, the first exact
    passage, else the first of those with the highest cosine."""
    top = list(range(min(3, len(ranked))))
    if not top:
        return None
    exact = [n for n in top if ranked[n].exact]
    if exact:
        return exact[0]
    best = max(ranked[n].score for n in top)
    return [n for n in top if ranked[n].score == best][0]


@pytest.mark.parametrize("seed", range(40))
def test_read_passage_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 8))
    scores = rng.choice([0.80, 0.81, 0.82, 0.83], size=n)  # ties, as cosines rounded by a 4-bit model
    exact = rng.random(n) < rng.choice([0.0, 0.2, 0.5])
    ranked = [
        Ranked(row, float(s), bool(e)) for row, s, e in zip(rng.permutation(n), scores, exact, strict=True)
    ]
    position = brute_force_read(ranked)
    read = read_passage(ranked)
    assert (read is None) == (position is None)
    if read is not None:
        assert read is ranked[position]


def test_read_passage_reads_no_deeper_than_the_gate_depth():
    assert GATE_DEPTH == 3
    ranked = [Ranked(0, 0.80, False), Ranked(1, 0.82, False), Ranked(2, 0.81, False), Ranked(3, 0.9, True)]
    assert read_passage(ranked) is ranked[1]  # the best cosine of the first three
    assert read_passage(ranked[:1]) is ranked[0]
    assert read_passage([*ranked[:2], Ranked(5, 0.1, True)]).row == 5  # exact answers at any cosine
    assert read_passage([]) is None


def test_all_unheld_only_when_nothing_named_is_held():
    none, some = np.empty(0, dtype=np.int64), np.array([3])
    assert all_unheld([]) == ()
    assert all_unheld([("PAY-999", none)]) == ("PAY-999",)
    assert all_unheld([("PAY-999", none), ("PAY-517", some)]) == ()
    assert all_unheld([("x.y", none), ("x.y", none), ("§ 9", none)]) == ("x.y", "§ 9")
    assert all_unheld([("1920-1925", none)]) == ()  # named, but no evidence: a sentence writes it


def test_salient_names_are_the_ones_no_sentence_writes():
    for name in (
        "PAY-999",
        "FV/2026/04/118",
        "v2",
        "events.twice",
        "emitter.offAll",
        "max_size",
        "ActionMailer",
        "§ 99",
        "art. 6",
    ):
        assert is_salient(name), name
    for name in ("1920-1925", "2014/2015", "iPadzie", "1886年初成立時稱為", "e-mail", "130-metrowy"):
        assert not is_salient(name), name
