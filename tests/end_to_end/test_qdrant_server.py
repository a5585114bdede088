"""The commands against a real Qdrant server, run only when ``SEMSEARCH_QDRANT_URL`` names one
(``qdrant://HOST:PORT``, ``?tls=1`` for HTTPS; its API key in ``QDRANT_API_KEY``). Start one with
the official image: ``docker run -p 6333:6333 qdrant/qdrant``, then
``SEMSEARCH_QDRANT_URL=qdrant://localhost:6333 pytest -m qdrant_server``."""

from __future__ import annotations

import json
import os
import secrets
from urllib.parse import urlsplit, urlunsplit

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from tests.helpers import FAKE_MODEL, SAMPLE_DOCS, write

SERVER = os.environ.get("SEMSEARCH_QDRANT_URL", "")
pytestmark = [
    pytest.mark.qdrant_server,
    pytest.mark.skipif(not SERVER, reason="SEMSEARCH_QDRANT_URL names no Qdrant server"),
]
runner = CliRunner()


def run(*args: object, env: dict | None = None):
    return runner.invoke(app, [str(a) for a in args], env=env)


@pytest.fixture
def collection():
    """A fresh collection name on the server, and its URL; every collection it led to is dropped."""
    from semsearch.store.location import parse_location
    from semsearch.store.qdrant.client import connected

    name = f"semsearch-test-{secrets.token_hex(4)}"
    parts = urlsplit(SERVER)
    where = urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))
    yield where
    with connected(parse_location(where)) as client:
        for found in client.get_collections().collections:
            if found.name.startswith(name):
                client.delete_collection(found.name)


def test_build_ask_eval_info_on_a_server_as_on_a_folder(collection, fake_sample_index):
    built = run("build", SAMPLE_DOCS, "--index", collection, "--model", FAKE_MODEL)
    assert built.exit_code == 0, built.output
    for question in ("Ile kosztuje dostawa do paczkomatu?", "Jaka jest pogoda w Krakowie?"):
        folder = run("ask", question, "--index", fake_sample_index, "--json")
        server = run("ask", question, "--index", collection, "--json")
        assert folder.exit_code == server.exit_code and json.loads(folder.stdout) == json.loads(server.stdout)
    info = run("info", "--index", collection, "--json")
    assert info.exit_code == 0 and json.loads(info.stdout)["chunks"] > 100


def test_incremental_build_and_lock_on_a_server(collection, tmp_path):
    from qdrant_client import models

    from semsearch.store.location import parse_location
    from semsearch.store.qdrant.client import connected

    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nDostawa paczek.\n")
    write(docs / "b.md", "# B\n\nZwroty towaru.\n")
    assert run("build", docs, "--index", collection, "--model", FAKE_MODEL).exit_code == 0
    write(docs / "a.md", "# A\n\nDostawa paczek kurierem.\n")
    again = run("build", "--index", collection, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["embedded"] == 1, again.output
    location = parse_location(collection)
    with connected(location) as client:
        lock = models.VectorParams(size=1, distance=models.Distance.DOT)
        client.create_collection(f"{location.collection}-semsearch-lock", vectors_config=lock)
    busy = run("build", "--index", collection)
    assert busy.exit_code == 2 and "another semsearch build" in busy.stderr


@pytest.mark.skipif(not os.environ.get("QDRANT_API_KEY"), reason="the server has no API key to get wrong")
def test_a_wrong_api_key_is_one_line(collection):
    result = run("ask", "dostawa", "--index", collection, env={"QDRANT_API_KEY": "not-the-key"})
    assert result.exit_code == 2 and "QDRANT_API_KEY" in result.stderr, result.output


def test_the_mcp_server_on_a_server_follows_a_calibration_and_a_rebuild(collection, tmp_path):
    pytest.importorskip("mcp.server.mcpserver")
    from semsearch.build.pipeline import build_index
    from semsearch.mcp.server import Library
    from semsearch.store.stores import open_store

    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nDostawa paczek kurierem.\n")
    build_index(docs, collection, model=FAKE_MODEL)
    library = Library(collection)
    try:
        assert library.index_info()["files"] == 1 and library.index_info()["index"] == collection
        first = library._collection
        assert library.search("dostawa paczek", mode="dense")["hits"] and library._collection is first
        store = open_store(collection)
        store.replace_meta(store.peek_meta())  # the record rewritten: its stamp changes
        library.index_info()
        assert library._collection is not first
        write(docs / "b.md", "# B\n\nZwroty towaru w 30 dni.\n")
        build_index(docs, collection, model=FAKE_MODEL, full=True)  # a new collection, the alias moved
        assert library.index_info()["files"] == 2
    finally:
        library.close()
