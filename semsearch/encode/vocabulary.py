"""The keyword index's vocabulary on disk: its tokens sorted (UTF-8 byte order, which is code point
order), one per line, with their offsets; read memory-mapped and searched by bisection, so a
question's look-up reads a few lines, never the whole vocabulary (millions of tokens at scale)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from semsearch.errors import IndexCorruptError
from semsearch.util.regular import ARRAY_BOUND, load_array, open_regular


def vocabulary_files(prefix: str = "keywords") -> tuple[str, str]:
    """The two files of a vocabulary whose index's files start with ``prefix``."""
    return (f"{prefix}.vocab.txt", f"{prefix}.vocab.offsets.npy")


VOCABULARY_FILES = vocabulary_files()
PREFIX_SCAN = 4096
"""How many tokens sharing a prefix ``has_prefix`` reads at most before it answers yes."""


class SortedVocabulary:
    """Tokens sorted (UTF-8 byte order), one per line, found by binary search in the mapped file."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray):
        self._blob = blob
        self._offsets = offsets

    @classmethod
    def write(cls, folder: Path, tokens: Sequence[str], prefix: str = "keywords") -> None:
        encoded = [token.encode("utf-8") for token in tokens]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) + 1 for e in encoded], out=offsets[1:])
        text_file, offsets_file = vocabulary_files(prefix)
        (folder / text_file).write_bytes(b"".join(e + b"\n" for e in encoded))
        np.save(folder / offsets_file, offsets)

    @classmethod
    def open(cls, folder: Path, prefix: str = "keywords") -> SortedVocabulary:
        text_file, offsets_file = vocabulary_files(prefix)
        offsets = load_array(folder / offsets_file)
        fd = open_regular(folder / text_file, ARRAY_BOUND)
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(fd).st_size
            blob = np.memmap(handle, dtype=np.uint8, mode="r") if size else np.empty(0, np.uint8)
        if offsets.ndim != 1 or len(offsets) < 1 or int(offsets[-1]) != size:
            raise ValueError(f"{text_file} does not match {offsets_file}")
        return cls(blob, offsets)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _token(self, i: int) -> bytes:
        """The ``i``-th token, whose line must end where the offsets say (garbage passes the size check)."""
        start, end = int(self._offsets[i]), int(self._offsets[i + 1]) - 1
        if not 0 <= start <= end < len(self._blob) or self._blob[end] != 10:
            raise IndexCorruptError(
                f"the keyword index is damaged ({VOCABULARY_FILES[0]} does not match its offsets)"
            )
        return self._blob[start:end].tobytes()

    def _first_at_or_after(self, key: bytes) -> int:
        low, high = 0, len(self)
        while low < high:
            middle = (low + high) // 2
            if self._token(middle) < key:
                low = middle + 1
            else:
                high = middle
        return low

    def get(self, token: str) -> int | None:
        """The column of ``token`` (None when no chunk holds it)."""
        key = token.encode("utf-8")
        found = self._first_at_or_after(key)
        return found if found < len(self) and self._token(found) == key else None

    def tokens(self) -> list[str]:
        """Every token, in column order (the whole vocabulary: a store copying the index reads it)."""
        found = bytes(self._blob).decode("utf-8").split("\n")[:-1] if len(self) else []
        if len(found) != len(self):
            raise IndexCorruptError(
                f"the keyword index is damaged ({VOCABULARY_FILES[0]} does not match its offsets)"
            )
        return found

    def has_prefix(self, prefix: str, longest: int | None = None) -> bool:
        """Whether some token starts with ``prefix`` (and is at most ``longest`` characters
        long): the tokens with a prefix lie together, read from the first; past
        ``PREFIX_SCAN`` of them, True."""
        key = prefix.encode("utf-8")
        start = self._first_at_or_after(key)
        for i in range(start, min(len(self), start + PREFIX_SCAN)):
            token = self._token(i)
            if not token.startswith(key):
                return False
            if longest is None or len(token.decode("utf-8", "replace")) <= longest:
                return True
        return start + PREFIX_SCAN < len(self)


Vocabulary = SortedVocabulary | dict[str, int]
"""A keyword index's vocabulary: the sorted file of a stored index, or a fresh build's dict (a
store holding the index elsewhere gives an object with ``get``, ``has_prefix`` and ``tokens``)."""


def has_prefix(vocabulary: Vocabulary, prefix: str, longest: int | None = None) -> bool:
    """Whether some token of ``vocabulary`` starts with ``prefix`` and is at most ``longest``
    characters long (a fresh build's dict is scanned: it lives only in the process that built it)."""
    if not isinstance(vocabulary, dict):
        return vocabulary.has_prefix(prefix, longest)
    return any(t.startswith(prefix) and (longest is None or len(t) <= longest) for t in vocabulary)


def column_tokens(vocabulary: Vocabulary) -> list[str]:
    """Each column's token, in column order."""
    if isinstance(vocabulary, dict):
        return sorted(vocabulary, key=vocabulary.__getitem__)
    return vocabulary.tokens()
