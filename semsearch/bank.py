"""The off-topic question bank and its query vectors.

The bank (``data/offtopic_questions.tsv``) holds everyday questions in ten languages that
documentation does not answer; the no-answer gate measures a corpus against them (see
``threshold``). Embedding the bank costs a new index seconds, so its vectors are

- shipped with the package for the default model (``data/offtopic.<model>.<bank sha>.npy``,
  checked against the model by a test), and
- for any other model, cached in the user's cache folder after the first build
  (``$XDG_CACHE_HOME/semsearch`` or ``~/.cache/semsearch``), keyed by model, dimension and bank.

Either is used only when it matches the bank byte for byte (its sha256 is in the file name).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from .embedders import Embedder

BANK_FILE = "offtopic_questions.tsv"


def _bank_bytes() -> bytes:
    return resources.files("semsearch.data").joinpath(BANK_FILE).read_bytes()


@cache
def bank_sha256() -> str:
    """Identifies the bank, so that stored vectors are reused only for the same bank."""
    return hashlib.sha256(_bank_bytes()).hexdigest()


def offtopic_bank() -> list[tuple[str, str]]:
    """(language, question) pairs of the shipped off-topic bank."""
    rows = []
    for line in _bank_bytes().decode("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            language, question = line.split("\t", 1)
            rows.append((language, question.strip()))
    return rows


def vectors_name(spec: str, dim: int) -> str:
    """File name of the bank's vectors for a model (the same for shipped and cached ones)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-")[:80]
    digest = hashlib.sha256(spec.encode("utf-8")).hexdigest()[:8]
    return f"offtopic.{slug}.{digest}.{dim}.{bank_sha256()[:16]}.npy"


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "semsearch"


def _load(path: Path, rows: int, dim: int) -> np.ndarray | None:
    try:
        vectors = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if vectors.dtype != np.float32 or vectors.shape != (rows, dim):
        return None
    norms = np.linalg.norm(vectors, axis=1)
    return vectors if np.all(np.abs(norms - 1) < 1e-3) else None


def _shipped(name: str) -> Path:
    return Path(str(resources.files("semsearch.data").joinpath(name)))


def _save_quietly(path: Path, vectors: np.ndarray) -> None:
    """Cache write; a cache that cannot be written only costs the next build the embedding."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        with open(staging, "wb") as handle:
            np.save(handle, vectors)
        os.replace(staging, path)
    except OSError:
        pass


def bank_vectors(embedder: Embedder) -> np.ndarray:
    """Query vectors of every bank question for ``embedder``: shipped, cached, or embedded now
    (and then cached)."""
    questions = [question for _, question in offtopic_bank()]
    name = vectors_name(embedder.spec, embedder.dim)
    for path in (_shipped(name), cache_folder() / name):
        found = _load(path, len(questions), embedder.dim)
        if found is not None:
            return found
    vectors = np.ascontiguousarray(embedder.embed_queries(questions), dtype=np.float32)
    _save_quietly(cache_folder() / name, vectors)
    return vectors


def write_shipped_vectors(embedder: Embedder, folder: Path) -> Path:
    """Maintainers: write the bank's vectors for ``embedder`` into the package's data folder
    (``python -m semsearch.bank``), after a change of the bank or of the default model."""
    for stale in folder.glob(f"offtopic.*.{embedder.dim}.*.npy"):
        if stale.name != vectors_name(embedder.spec, embedder.dim):
            stale.unlink()
    path = folder / vectors_name(embedder.spec, embedder.dim)
    vectors = embedder.embed_queries([question for _, question in offtopic_bank()])
    np.save(path, np.ascontiguousarray(vectors, dtype=np.float32))
    return path


if __name__ == "__main__":
    from .embedders import DEFAULT_MODEL, load_embedder

    print(write_shipped_vectors(load_embedder(DEFAULT_MODEL), Path(__file__).parent / "data"))
