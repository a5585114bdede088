"""The off-topic question bank and its query vectors.

The bank (``data/offtopic_questions.tsv``) holds everyday questions in eleven languages
(Chinese included) that documentation does not answer, and inputs in no language (``asdf``,
``test``, lorem ipsum) that are not questions at all; the no-answer gate measures a corpus against them (see
``threshold``). Embedding the bank costs a new index seconds, so its vectors are

- shipped with the package for the default model (``data/offtopic.<model>.<bank sha>.npy``,
  checked against the model by a test), and
- for any other model, cached in the user's cache folder after the first build
  (``$XDG_CACHE_HOME/semsearch`` or ``~/.cache/semsearch``), keyed by model, dimension and bank.

Either is used only when it matches the bank byte for byte (its sha256 is in the file name).
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from semsearch.encode.embedders import Embedder

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

BANK_FILE = "offtopic_questions.tsv"
NO_LANGUAGE = "-"
"""The language of the bank's inputs in no language (keyboard mash, test words): they count as
off-topic like any row, but have no language offset (see ``calibration.language_offsets``)."""


def _bank_bytes() -> bytes:
    return _data(BANK_FILE).read_bytes()


def _data(name: str) -> Traversable:
    """A file shipped in ``semsearch/data`` (``importlib.resources`` imported here: a build
    reads these, ``ask`` does not)."""
    from importlib import resources

    return resources.files("semsearch.data").joinpath(name)


@cache
def bank_sha256() -> str:
    """Identifies the bank, so that stored vectors are reused only for the same bank."""
    import hashlib  # a build's (OpenSSL's library loads with it), not a cold ask's

    return hashlib.sha256(_bank_bytes()).hexdigest()


def offtopic_bank() -> list[tuple[str, str]]:
    """(language, question) pairs of the shipped off-topic bank."""
    rows = []
    for line in _bank_bytes().decode("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            language, question = line.split("\t", 1)
            rows.append((language, question.strip()))
    return rows


# A bank question duplicates or paraphrases another question when their query vectors (default
# model) have a cosine of at least DUPLICATE_COSINE, or a ratio margin of at least DUPLICATE_MARGIN:
# the cosine divided by the mean of both questions' DUPLICATE_NEIGHBOURS best cosines on the other
# side (Artetxe & Schwenk 2019). The margin finds translations, whose cosines (0.89) are no higher
# than those of unrelated questions in one language; the thresholds were read off the ranked pairs
# (bench/gate/bank_dedup.py).
DUPLICATE_COSINE = 0.90
DUPLICATE_MARGIN = 1.035
DUPLICATE_NEIGHBOURS = 4


def near_duplicates(bank: np.ndarray, others: np.ndarray) -> list[tuple[int, int, float, float]]:
    """(bank row, other row, cosine, margin) of every pair of near-duplicate questions, for
    unit-length query vectors ``bank`` and ``others``; best pair per bank row."""
    if len(bank) == 0 or len(others) == 0:
        return []
    cos = np.asarray(bank, dtype=np.float64) @ np.asarray(others, dtype=np.float64).T
    k = min(DUPLICATE_NEIGHBOURS, cos.shape[0], cos.shape[1])
    bank_side = np.sort(cos, axis=1)[:, -k:].mean(axis=1)
    other_side = np.sort(cos, axis=0)[-k:, :].mean(axis=0)
    margin = cos / ((bank_side[:, None] + other_side[None, :]) / 2)
    found = []
    for i in range(len(bank)):
        j = int(np.argmax(np.maximum(cos[i] / DUPLICATE_COSINE, margin[i] / DUPLICATE_MARGIN)))
        if cos[i, j] >= DUPLICATE_COSINE or margin[i, j] >= DUPLICATE_MARGIN:
            found.append((i, j, float(cos[i, j]), float(margin[i, j])))
    return found


def vectors_name(spec: str, dim: int) -> str:
    """File name of the bank's vectors for a model (the same for shipped and cached ones)."""
    import hashlib

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
    return Path(str(_data(name)))


def _save_quietly(path: Path, vectors: np.ndarray) -> None:
    """Cache write; a cache that cannot be written only costs the next build the embedding."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import secrets  # here: only a build writes the cache

        staging = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        with open(staging, "wb") as handle:
            np.save(handle, vectors)
        os.replace(staging, path)
    except OSError:
        pass


def bank_vectors(embedder: Embedder) -> np.ndarray:
    """Query vectors of every bank question for ``embedder``: shipped, cached, or embedded now
    (and then cached)."""
    found = stored_bank_vectors(embedder)
    if found is not None:
        return found
    questions = [question for _, question in offtopic_bank()]
    vectors = np.ascontiguousarray(embedder.embed_queries(questions), dtype=np.float32)
    _save_quietly(cache_folder() / vectors_name(embedder.spec, embedder.dim), vectors)
    return vectors


def stored_bank_vectors(embedder: Embedder) -> np.ndarray | None:
    """The bank's query vectors for ``embedder`` if shipped or cached (None: a build embeds them)."""
    name = vectors_name(embedder.spec, embedder.dim)
    for path in (_shipped(name), cache_folder() / name):
        found = _load(path, len(offtopic_bank()), embedder.dim)
        if found is not None:
            return found
    return None


def write_shipped_vectors(embedder: Embedder, folder: Path) -> Path:
    """Maintainers: write the bank's vectors for ``embedder`` into the package's data folder
    (``python -m semsearch.gate.bank``), after a change of the bank or of the default model."""
    for stale in folder.glob(f"offtopic.*.{embedder.dim}.*.npy"):
        if stale.name != vectors_name(embedder.spec, embedder.dim):
            stale.unlink()
    path = folder / vectors_name(embedder.spec, embedder.dim)
    vectors = embedder.embed_queries([question for _, question in offtopic_bank()])
    np.save(path, np.ascontiguousarray(vectors, dtype=np.float32))
    return path


if __name__ == "__main__":
    from semsearch.encode.embedders import DEFAULT_MODEL, load_embedder

    print(write_shipped_vectors(load_embedder(DEFAULT_MODEL), Path(__file__).parent.parent / "data"))
