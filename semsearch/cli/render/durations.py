"""Durations as a person reads them, the one rule for every time semsearch prints: a build's
summary, its time left, a dry run's estimate.

Under 10 s: seconds with one decimal (``1.3 s``: a short build's tenths matter); under a minute:
whole seconds (``42 s``); under an hour: minutes and seconds (``25 min 21 s``); beyond: hours
and minutes (``2 h 5 min``). Each is rounded once, to the unit shown last, so 59.7 s is
``1 min 0 s``, never ``60 s``.
"""

from __future__ import annotations

import math


def duration(seconds: float) -> str:
    """``seconds`` in the largest units that keep it readable (see the module's rule); a
    negative or unknown time is 0."""
    if not math.isfinite(seconds) or seconds < 0:
        seconds = 0.0
    if round(seconds, 1) < 10:
        return f"{round(seconds, 1):.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min"
