"""Index locations: a folder path as before, or a qdrant: URL (local mode or a server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from semsearch.errors import UsageError
from semsearch.store.location import QdrantLocation, parse_location


def test_a_path_stays_a_path():
    assert parse_location("index") == Path("index")
    assert parse_location(Path("/a/qdrant:b")) == Path("/a/qdrant:b")
    assert parse_location("") == Path("")


def test_local_mode_and_server_urls():
    local = parse_location("qdrant:///srv/semsearch/../store")
    assert isinstance(local, QdrantLocation) and local.local
    assert local.directory == Path("/srv/store") and local.collection == "semsearch"
    server = parse_location("qdrant://search.example:7000/team-docs?tls=1")
    assert (server.host, server.port, server.collection, server.tls) == (
        "search.example",
        7000,
        "team-docs",
        True,
    )
    assert not server.local and str(server) == "qdrant://search.example:7000/team-docs?tls=1"
    assert parse_location("QDRANT://h/c").port == 6333
    assert parse_location(server) is server


@pytest.mark.parametrize(
    "given",
    [
        "qdrant://h",
        "qdrant://h/",
        "qdrant://h/a/b",
        "qdrant:///",
        "qdrant://h:0x/c",
        "qdrant:x",
        "qdrant://h/c#f",
    ],
)
def test_malformed_urls_are_usage_errors(given):
    with pytest.raises(UsageError):
        parse_location(given)
