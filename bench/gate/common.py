"""Shared helpers of the no-answer gate measurements (issue 14).

Indexes are built once under ``$GATE_WORK`` (default /tmp/gate-work) with the default model:

    PYTHONPATH=. python -m semsearch build docs --index /tmp/gate-work/docs-idx
    (likewise en, cooking: tests/data/*_corpus; drcd, poquad: ../shared/data/*/docs)

and query embeddings are cached there as .npy files keyed by the texts' sha256.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from semsearch.encode.embedders import DEFAULT_MODEL, load_embedder
from semsearch.evaluation.questions import load_questions

WORK = Path(os.environ.get("GATE_WORK", "/tmp/gate-work"))
ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GATE_SHARED", "/work/shared/data"))

# name -> (docs folder, question files, split)
SETS = {
    "docs": (
        ROOT / "docs",
        ["tests/data/docs_questions.jsonl", "tests/data/docs_identifier_questions.jsonl"],
    ),
    "en": (
        ROOT / "tests/data/en_corpus",
        ["tests/data/en_questions.jsonl", "tests/data/en_identifier_questions.jsonl"],
    ),
    "cooking": (ROOT / "tests/data/cooking_corpus", ["tests/data/cooking_questions.jsonl"]),
    "poquad": (SHARED / "poquad-train/docs", [str(SHARED / "poquad-train/questions.jsonl")]),
    "drcd": (SHARED / "drcd-zh/docs", [str(SHARED / "drcd-zh/questions.jsonl")]),
}
TUNED_ON = ("docs", "en", "cooking")
REPORTED_ON = ("poquad", "drcd")


def index_dir(name: str) -> Path:
    """$GATE_INDEXES/<name>-idx (default: $GATE_WORK)."""
    return Path(os.environ.get("GATE_INDEXES", WORK)) / f"{name}-idx"


def questions_of(name: str):
    found = []
    for file in SETS[name][1]:
        path = Path(file) if Path(file).is_absolute() else ROOT / file
        found += load_questions(path)
    return found


class CachedEmbedder:
    """The default embedder, with query vectors cached on disk (the machine is shared)."""

    def __init__(self, spec: str = DEFAULT_MODEL):
        self._spec = spec
        self._inner = None

    def _model(self):
        if self._inner is None:
            self._inner = load_embedder(self._spec)
        return self._inner

    @property
    def spec(self) -> str:
        return self._model().spec

    @property
    def dim(self) -> int:
        return self._model().dim

    def embed_queries(self, texts):
        texts = list(texts)
        digest = hashlib.sha256(("\x00".join([self._spec, *texts])).encode()).hexdigest()[:24]
        path = WORK / "emb" / f"q-{digest}.npy"
        if path.exists():
            return np.load(path)
        vectors = np.asarray(self._model().embed_queries(texts), dtype=np.float32)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
        return vectors

    def embed_passages(self, texts):
        return self._model().embed_passages(texts)

    def passage_tokens(self, text):
        return self._model().passage_tokens(text)
