"""What a build hands a store to keep (see ``stores``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from semsearch.encode.keywords import KeywordIndex
from semsearch.encode.pages import PageIndex
from semsearch.ingest.chunk import Chunk


class Built(NamedTuple):
    """What a build hands a store to keep (``write_index``'s arguments after the folder)."""

    vectors: np.ndarray
    chunks: list[Chunk]
    meta: dict
    offtopic: np.ndarray
    keywords: KeywordIndex
    pages: PageIndex | None = None
