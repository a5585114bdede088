"""The no-answer gate seen on a labelled question set (``semsearch eval``): where each group's
first passages land beside the gate's line, and what moving the line would answer and refuse.

Each question has its own threshold (the index's margin plus the question's baseline, see
``gate.threshold``), so raw cosines of different questions do not share one line. On the scale
of the margin they do: a question's *position* is its first passage's cosine less its threshold,
plus the margin (for the relevance rule, the cosine less the baseline), and the gate answers
exactly the positions at or above the margin, whatever the question. A few questions are decided
apart from the line (``apart``): an answer holding a code the question names verbatim passes at
any score, and a question naming what no indexed file holds is refused at any.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from semsearch.evaluation.quality import QuestionResult

MAX_BINS = 16
"""Rows of the picture at most: it must read on a screen and in a log."""
BIN_WIDTHS = (0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0)
"""Round widths only (a bin reads ``+0.150 to +0.200``), the narrowest that fits ``MAX_BINS``."""
TRADEOFF_STEPS = 3
"""Margins shown on each side of the one in force, a bin's width apart."""


@dataclass(frozen=True)
class Bin:
    low: float
    """Positions from ``low`` (included) to ``high`` (excluded)."""
    high: float
    answerable: int
    unanswerable: int


@dataclass(frozen=True)
class Tradeoff:
    margin: float
    answered: int
    """Answerable questions answered with this margin."""
    answered_right: int
    """... of which with the right passage first."""
    rejected: int
    """Unanswerable questions refused with this margin."""


@dataclass
class GatePicture:
    margin: float
    suggested: float | None
    width: float
    bins: list[Bin]
    """From the highest positions to the lowest; ``margin`` is an edge between two of them."""
    tradeoff: list[Tradeoff]
    """From the lowest margin (answers most) to the highest."""
    answerable: int
    unanswerable: int
    apart: dict[str, int] = field(default_factory=dict)
    """Questions decided apart from the line: ``exact`` (answered, below it), ``names_unheld``
    (refused, above it); ``no_passage``: nothing ranked (not drawn)."""


def position(result: QuestionResult) -> float:
    """Where the passage the gate read lands on the margin's scale (see the module)."""
    return result.read_score - result.threshold + result.margin


def gate_picture(results: Sequence[QuestionResult], margin: float, suggested: float | None) -> GatePicture:
    drawn = [r for r in results if r.first is not None and math.isfinite(r.read_score)]
    positions = [position(r) for r in drawn]
    width, edges = _edges(positions, margin)
    bins = []
    for low, high in zip(edges[1:], edges, strict=False):  # highest first
        inside = [r for r, p in zip(drawn, positions, strict=True) if low <= p < high]
        answerable = sum(r.question.answerable for r in inside)
        bins.append(Bin(low, high, answerable, len(inside) - answerable))
    on_line = [r.passes == (p >= margin) for r, p in zip(drawn, positions, strict=True)]
    apart = {
        "exact": sum(r.passes and not same for r, same in zip(drawn, on_line, strict=True)),
        "names_unheld": sum(not r.passes and not same for r, same in zip(drawn, on_line, strict=True)),
        "no_passage": len(results) - len(drawn),
    }
    answerable = sum(r.question.answerable for r in results)
    return GatePicture(
        margin=margin,
        suggested=suggested,
        width=width,
        bins=bins,
        tradeoff=tradeoffs(results, _margins(margin, width, suggested)),
        answerable=answerable,
        unanswerable=len(results) - answerable,
        apart=apart,
    )


def _edges(positions: Sequence[float], margin: float) -> tuple[float, list[float]]:
    """A round bin width and the bins' edges from the highest down, ``margin`` one of them (the
    gate's line falls between two rows); the highest position lies below the top edge."""
    low, high = min([margin, *positions]), max([margin, *positions])
    for width in BIN_WIDTHS:
        below = math.ceil((margin - low) / width - 1e-9)
        above = math.floor((high - margin) / width + 1e-9) + 1
        if below + above <= MAX_BINS:
            break
    return width, [margin + step * width for step in range(above, -below - 1, -1)]


def _margins(margin: float, width: float, suggested: float | None) -> list[float]:
    around = [margin + step * width for step in range(-TRADEOFF_STEPS, TRADEOFF_STEPS + 1)]
    return sorted({*around, *([suggested] if suggested is not None else [])})


def tradeoffs(results: Sequence[QuestionResult], margins: Sequence[float]) -> list[Tradeoff]:
    """What each margin would answer and refuse: the gate's own decision (``verdict_at``)."""
    answerable = [r for r in results if r.question.answerable]
    unanswerable = [r for r in results if not r.question.answerable]
    rows = []
    for margin in margins:
        answered = [r for r in answerable if r.passes_at(margin)]
        rows.append(
            Tradeoff(
                margin=margin,
                answered=len(answered),
                answered_right=sum(r.rank == 1 for r in answered),
                rejected=sum(not r.passes_at(margin) for r in unanswerable),
            )
        )
    return rows
