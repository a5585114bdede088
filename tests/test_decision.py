"""The one decision rule (gate.decision.decide) against a brute-force reading of it."""

from __future__ import annotations

import itertools

import numpy as np

from semsearch.gate.decision import decide
from semsearch.retrieve.index import all_unheld, is_salient


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
