"""The test session's memo of what the real models embedded (installed by tests/conftest.py).

A real model embeds each distinct text once per test session; a later test that embeds the same
text (another build of docs/, the README's examples, the front door's build) gets the vector that
model gave for it earlier in the same session, from a folder of ``.npy`` files that the session's
workers share. The vectors are the model's own, for the same text on the same machine (the
default model's engine gives a text the same vector alone or in any batch, on one thread or
two), so what a test asserts of them holds as it would without the memo; what the memo saves is
the model's time (a real build of docs/ is ~50 s on two idle cores, and the suite made a dozen).
One process embeds at a time, under a lock in the folder.

The folder is made for one run and removed after it: nothing is kept across runs, so a changed
model or engine cannot answer from a stale vector. Each process reads ``MEMO_ENV`` when it
embeds; a test that must measure the model itself (its speed, its determinism) runs without the
memo (``pytest.mark.model_time``) and gets every vector from the model. A process a test starts
embeds through the memo when the test puts ``tests/end_to_end/memo_model`` on its PYTHONPATH
(``tests.helpers.memo_env``), else with the model alone.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from filelock import FileLock

MEMO_ENV = "SEMSEARCH_TEST_EMBEDDING_MEMO"
"""The folder of the session's memo (set by the controller, inherited by the workers)."""


def _entry(folder: Path, spec: str, kind: str, text: str) -> Path:
    digest = hashlib.sha256(f"{spec}\0{kind}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return folder / re.sub(r"[^\w.-]+", "_", spec)[:80] / f"{kind}-{digest}.npy"


def _read(path: Path) -> np.ndarray | None:
    try:
        return np.load(path)
    except (OSError, ValueError):
        return None


def _write(path: Path, vector: np.ndarray) -> None:
    """Atomically: a worker reading at the same moment sees the whole vector or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(handle, "wb") as out:
        np.save(out, vector)
    os.replace(temporary, path)


def memoized(embed: Callable, kind: str) -> Callable:
    """``embed`` (an embedder's ``embed_queries`` or ``embed_passages``) through the memo: only
    the texts the session has not embedded yet go to the model, in their order."""

    @functools.wraps(embed)
    def through_memo(self, texts: Sequence[str]) -> np.ndarray:
        folder = os.environ.get(MEMO_ENV)
        if not folder or len(texts) == 0:
            return embed(self, texts)
        paths = [_entry(Path(folder), self.spec, kind, text) for text in texts]
        vectors = [_read(path) for path in paths]
        if any(vector is None for vector in vectors):
            # One process embeds at a time: two workers building the same folder at once then
            # embed each batch once (the second finds the first's), and the two cores go to one
            # model's threads instead of two models' contending.
            with FileLock(Path(folder) / ".lock"):
                vectors = [_read(path) if v is None else v for v, path in zip(vectors, paths, strict=True)]
                missing = [i for i, vector in enumerate(vectors) if vector is None]
                if missing:
                    fresh = embed(self, [texts[i] for i in missing])
                    for i, vector in zip(missing, fresh, strict=True):
                        vectors[i] = np.asarray(vector)
                        _write(paths[i], vectors[i])
        return np.stack(vectors).astype(np.float32, copy=False)

    return through_memo


def install(*classes: type) -> None:
    """Put the memo in front of each class's ``embed_queries`` and ``embed_passages``."""
    for cls in classes:
        cls.embed_queries = memoized(cls.embed_queries, "query")
        cls.embed_passages = memoized(cls.embed_passages, "passage")
