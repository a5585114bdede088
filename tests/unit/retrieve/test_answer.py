"""What a refusal says (``retrieve.answer.Answer.reason``)."""

from __future__ import annotations

import pytest

from semsearch.retrieve.answer import Answer


@pytest.mark.parametrize(
    ("best", "needed", "said"),
    [
        (0.80512, 0.83777, "best similarity 0.805, needed 0.838"),
        (
            0.84271,
            0.84305,
            "best similarity 0.8427, needed 0.8430",
        ),  # three decimals would print two equal numbers
        (0.8430001, 0.8430004, "best similarity 0.8430001, needed 0.8430004"),
        (0.8430000001, 0.8430000004, "best similarity 0.843000000, needed 0.843000000"),  # nine at most
    ],
)
def test_a_refusal_shows_the_best_cosine_below_the_one_needed(best, needed, said):
    answer = Answer("q", [], needed, 0.6, "hybrid", best_score=best)
    assert f"({said})" in answer.reason
