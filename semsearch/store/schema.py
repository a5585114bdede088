"""The index format: its version, marker and files (meta.json's fields: ``meta``)."""

from __future__ import annotations

from pathlib import Path

from semsearch.encode.keywords import FILES as KEYWORD_FILES
from semsearch.encode.pages import FILES as PAGE_FILES
from semsearch.store.chunkfile import CHECKSUMS_FILE, CHUNKS_FILE, OFFSETS_FILE

INDEX_FORMAT = 1
INDEX_KIND = "semsearch-index"
META_FILE = "meta.json"
STAGING_MARKER = ".semsearch-staging"
"""Written first into every folder a build stages: only such folders are ever removed as leftovers."""
CHUNKS_DIGEST = "chunks_sha256"
"""The meta.json field holding the sha256 of chunks.json (absent in indexes written before it)."""
INDEX_FILES = (
    "vectors.npy",
    "offtopic.npy",
    CHUNKS_FILE,
    OFFSETS_FILE,
    CHECKSUMS_FILE,
    *KEYWORD_FILES,
    *PAGE_FILES,
    META_FILE,
)


def journal_folder(index_dir: Path) -> Path:
    """Where a build of ``index_dir`` keeps the vectors it embedded until it finishes (a hidden
    folder beside the index: ``store.journal``), so that a build interrupted resumes."""
    return index_dir.parent / f".{index_dir.name}.partial"
