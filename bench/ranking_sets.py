"""The question sets of the ranking bench (`bench_ranking.py`), their indexes and their cached
embeddings: every index is built once under ``$RANK_WORK`` (default /work/cache/ranking, outside
the repository) and every vector the bench embeds is cached there as a .npy file keyed by the
sha256 of the model and the texts, so a rerun embeds nothing (the machine is shared).

Tuned on (candidates and their constants chosen by these alone): the team's own sets in
tests/data (`docs/`, the English guide, the cooking blog, the API reference) and PoQuAD (the
largest set, 250 questions, for statistical power). Reported on (never looked at while
choosing): DRCD (Chinese), the three real doc folders `k8s-pl`, `obsidian-tasks-docs`
and `kursownia`, and the project's own raw MDX set `bench/data/starlight-docs` (its questions
written from a topic outline before its files were read, labelled afterwards).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from semsearch.build.pipeline import build_index
from semsearch.encode.embedders import DEFAULT_MODEL, load_embedder
from semsearch.evaluation.questions import Question, load_questions
from semsearch.retrieve.index import Index
from semsearch.retrieve.opening import load_index

REPO = Path(__file__).resolve().parent.parent
WORK = Path(os.environ.get("RANK_WORK", "/work/cache/ranking"))
SHARED = Path(os.environ.get("RANK_SHARED", REPO.parent.parent / "shared" / "data"))
if not SHARED.is_dir():
    SHARED = Path("/work/shared/data")
TESTS = REPO / "tests" / "data"

TUNE, REPORT = "tuned on", "reported on"
# name -> (docs folder, question files, split)
SETS: dict[str, tuple[Path, list[Path], str]] = {
    "docs": (
        REPO / "docs",
        [TESTS / "docs_questions.jsonl", TESTS / "docs_identifier_questions.jsonl"],
        TUNE,
    ),
    "en": (
        TESTS / "en_corpus",
        [TESTS / "en_questions.jsonl", TESTS / "en_identifier_questions.jsonl"],
        TUNE,
    ),
    "cooking": (TESTS / "cooking_corpus", [TESTS / "cooking_questions.jsonl"], TUNE),
    "api": (TESTS / "api_corpus", [TESTS / "api_identifier_questions.jsonl"], TUNE),
    "poquad": (SHARED / "poquad-train/docs", [SHARED / "poquad-train/questions.jsonl"], TUNE),
    "drcd": (SHARED / "drcd-zh/docs", [SHARED / "drcd-zh/questions.jsonl"], REPORT),
    "k8s-pl": (SHARED / "k8s-pl/docs", [SHARED / "k8s-pl/questions.jsonl"], REPORT),
    "obsidian": (
        SHARED / "obsidian-tasks-docs/docs",
        [SHARED / "obsidian-tasks-docs/questions.jsonl"],
        REPORT,
    ),
    "kursownia": (SHARED / "kursownia/docs", [SHARED / "kursownia/questions.jsonl"], REPORT),
    "starlight": (
        REPO / "bench/data/starlight-docs/docs",
        [REPO / "bench/data/starlight-docs/questions.jsonl"],
        REPORT,
    ),
    "foam": (SHARED / "foam-docs/docs", [SHARED / "foam-docs/questions.jsonl"], TUNE),
    "otel-es": (SHARED / "otel-es/docs", [SHARED / "otel-es/questions.jsonl"], REPORT),
    "react-pl": (
        REPO / "bench/data/react-pl/docs",
        [REPO / "bench/data/react-pl/questions.jsonl"],
        REPORT,
    ),
}


class CachedModel:
    """The default model, loaded on first use; every embedding cached on disk."""

    def __init__(self, spec: str = DEFAULT_MODEL):
        self.spec = spec
        self._model = None

    def _embed(self, kind: str, texts: list[str]) -> np.ndarray:
        digest = hashlib.sha256("\x00".join([self.spec, kind, *texts]).encode()).hexdigest()[:24]
        path = WORK / "emb" / f"{kind}-{digest}.npy"
        if path.exists():
            return np.load(path)
        if self._model is None:
            self._model = load_embedder(self.spec)
        if kind == "q":
            vectors = self._model.embed_queries(texts)
        else:
            from semsearch.build.embedding import embed_in_batches

            vectors = embed_in_batches(self._model, texts)
        vectors = np.asarray(vectors, dtype=np.float32)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
        return vectors

    def embed_queries(self, texts) -> np.ndarray:
        return self._embed("q", list(texts))

    def embed_passages(self, texts) -> np.ndarray:
        return self._embed("p", list(texts))


@dataclass(eq=False)
class Case:
    """One set as the bench reads it: its index, questions, their vectors and cosines."""

    name: str
    split: str
    index: Index
    questions: list[Question]
    vectors: np.ndarray
    """Query vectors, one row per question."""
    cosines: np.ndarray
    """Questions x chunks."""
    docs: np.ndarray = field(init=False)
    """Each chunk's file, as an integer."""

    def __post_init__(self) -> None:
        sources = [chunk.source for chunk in self.index.chunks]
        names = {source: n for n, source in enumerate(dict.fromkeys(sources))}
        self.docs = np.array([names[source] for source in sources], dtype=np.int64)

    @property
    def answerable(self) -> list[int]:
        return [i for i, q in enumerate(self.questions) if q.answerable]


def load_case(name: str, model: CachedModel, rebuild: bool = True) -> Case:
    """The set ``name``, its index brought up to date first (a build with nothing changed
    embeds nothing)."""
    docs, files, split = SETS[name]
    folder = WORK / "idx" / name
    if rebuild or not folder.exists():
        build_index(docs, folder)
    index = load_index(folder)
    questions = [q for file in files for q in load_questions(file)]
    vectors = model.embed_queries([q.question for q in questions])
    cosines = vectors @ np.asarray(index.vectors).T
    return Case(name, split, index, questions, vectors, cosines)
