"""How far splitting one file is, as a build's progress: a file near the size cap (32 MiB of
one line, a million headings) takes minutes to split, which the file count alone never showed."""

from __future__ import annotations

import time
from collections.abc import Callable

from semsearch.build.embedding import Progress, Step

SPLIT_PROGRESS_SECONDS = 0.2
"""How often splitting one file says how far it is (a file near the size cap takes minutes)."""


def progress_within_file(progress: Progress, split: int, to_split: int, before: int) -> Callable[[int], None]:
    """How far splitting one file is, as a build's progress (chunks so far), at most every
    ``SPLIT_PROGRESS_SECONDS``."""
    last = time.monotonic()

    def tell(chunks: int) -> None:
        nonlocal last
        if (now := time.monotonic()) - last >= SPLIT_PROGRESS_SECONDS:
            last = now
            progress(Step("splitting", split, to_split, "files", chunks=before + chunks))

    return tell
