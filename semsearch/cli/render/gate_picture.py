"""``eval``'s picture of the no-answer gate (``evaluation.picture``): plain text that reads the
same on a terminal, in a log and through ``| cat`` (no colour needed, every line under 80
columns, nothing to wrap), and the same figures for ``--json``."""

from __future__ import annotations

import math

from semsearch.cli.render.output import _say
from semsearch.evaluation.picture import GatePicture, Tradeoff

BAR = 15
"""Characters of the longest bar; a longer count is scaled down (each mark then stands for more)."""
COLUMN = BAR + 6
WIDTH = 78
ANSWERABLE, UNANSWERABLE = "#", "o"


def picture_json(picture: GatePicture) -> dict:
    return {
        "scale": "first passage's cosine less the question's threshold, plus the margin",
        "margin": round(picture.margin, 6),
        "suggested": None if picture.suggested is None else round(picture.suggested, 6),
        "bin_width": picture.width,
        "bins": [
            {
                "low": round(b.low, 6),
                "high": round(b.high, 6),
                "answerable": b.answerable,
                "unanswerable": b.unanswerable,
            }
            for b in picture.bins
        ],
        "decided_apart": picture.apart,
        "tradeoff": [
            {
                "margin": round(row.margin, 6),
                "answered": row.answered,
                "answered_right": row.answered_right,
                "rejected": row.rejected,
                "in_force": row.margin == picture.margin,
                "suggested": row.margin == picture.suggested,
            }
            for row in picture.tradeoff
        ],
    }


def print_picture(picture: GatePicture, legacy: bool = False) -> None:
    """The two groups' first passages bin by bin, the gate's line between the bins, then the
    trade-off of margins around it."""
    name = "cosine floor" if legacy else "margin"
    scale_words = "cosine" if legacy else "score over its question's baseline"
    most = max([1, *(max(b.answerable, b.unanswerable) for b in picture.bins)])
    per_mark = max(1, math.ceil(most / BAR))
    _say(f"The gate, by each first passage's {scale_words}:")
    if per_mark > 1:
        _say(f"  (a mark per {per_mark} questions)")
    _say(f"  {'score':<17} {f'{ANSWERABLE} answerable':<{COLUMN}}  {UNANSWERABLE} unanswerable")
    line = _rule(f" gate: {name} {picture.margin:+.3f}, answered above, refused below ")
    for row in picture.bins:
        if math.isclose(row.high, picture.margin, abs_tol=1e-9):
            _say(line)
        label = f"{row.low:+.3f} to {row.high:+.3f}"
        left = f"{_bar(row.answerable, per_mark, ANSWERABLE)} {row.answerable}".lstrip()
        right = f"{_bar(row.unanswerable, per_mark, UNANSWERABLE)} {row.unanswerable}".lstrip()
        hint = _suggested_here(picture, row.low, row.high)
        _say(f"  {label:<17} {left:<{COLUMN}}  {right:<{COLUMN}}{hint}".rstrip())
    if picture.bins and math.isclose(picture.bins[-1].low, picture.margin, abs_tol=1e-9):
        _say(line)
    if apart := _apart_words(picture.apart):
        _say(f"  Not by the line: {apart}.")
    _print_tradeoff(picture, "floor" if legacy else "margin")


def _rule(words: str) -> str:
    return f"  {'-' * 8}{words}".ljust(WIDTH, "-")


def _bar(count: int, per_mark: int, mark: str) -> str:
    return mark * math.ceil(count / per_mark)


def _suggested_here(picture: GatePicture, low: float, high: float) -> str:
    suggested = picture.suggested
    if suggested is None or suggested == picture.margin:
        return ""
    return " <- suggested" if low <= suggested < high else ""


def _apart_words(apart: dict[str, int]) -> str:
    words = []
    if apart.get("exact"):
        words.append(f"{apart['exact']} answered below it (a code they name, verbatim)")
    if apart.get("names_unheld"):
        words.append(f"{apart['names_unheld']} refused above it (naming what no file holds)")
    if apart.get("no_passage"):
        words.append(f"{apart['no_passage']} with no passage (not drawn)")
    return "; ".join(words)


def _print_tradeoff(picture: GatePicture, name: str) -> None:
    _say(f"  Moving the line: of {picture.answerable:,} answerable, of {picture.unanswerable:,} unanswerable")
    _say(f"    {name:<8} {'answered':<11} {'right first':<11} refused")
    for row in picture.tradeoff:
        answered = f"{row.answered:,} {_share(row.answered, picture.answerable)}"
        right = f"{row.answered_right:,} {_share(row.answered_right, picture.answerable)}"
        refused = f"{row.rejected:,} {_share(row.rejected, picture.unanswerable)}"
        _say(
            f"    {row.margin:<+8.3f} {answered:<11} {right:<11} {refused:<11}{_which(row, picture)}".rstrip()
        )


def _share(count: int, total: int) -> str:
    return f"({count / total:.0%})" if total else ""


def _which(row: Tradeoff, picture: GatePicture) -> str:
    if row.margin == picture.margin:
        return " <- in force"
    if row.margin == picture.suggested:
        return " <- suggested by --calibrate"
    return ""
