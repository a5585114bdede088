"""Index locations: a folder path as before, or a postgresql: URL (its password never shown)."""

from __future__ import annotations

from pathlib import Path

import pytest

from semsearch.errors import UsageError
from semsearch.store.location import PostgresLocation, parse_location


def test_a_path_stays_a_path():
    assert parse_location("index") == Path("index")
    assert parse_location(Path("/a/postgresql:b")) == Path("/a/postgresql:b")
    assert parse_location("") == Path("")


def test_a_url_names_a_schema_and_keeps_the_rest_for_libpq():
    found = parse_location("postgresql://bob:s3cr%40t@db.example:5433/docs?sslmode=require&schema=team_docs")
    assert isinstance(found, PostgresLocation) and found.schema == "team_docs"
    assert found.conninfo == "postgresql://bob:s3cr%40t@db.example:5433/docs?sslmode=require"
    assert str(found) == "postgresql://bob@db.example:5433/docs?sslmode=require&schema=team_docs"
    assert found.server == "db.example:5433/docs"
    assert parse_location(found) is found
    plain = parse_location("POSTGRES:///docs?host=/run/pg")
    assert plain.schema == "semsearch" and plain.conninfo == "postgres:///docs?host=/run/pg"
    assert str(plain) == "postgres:///docs?host=/run/pg&schema=semsearch"
    assert plain.server == "/run/pg/docs"  # a socket's folder, as libpq reads host=
    several = parse_location("postgresql://u@h1:5432,h2:5433/db?service=team&schema=x")
    assert several.conninfo == "postgresql://u@h1:5432,h2:5433/db?service=team"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://reader:hunter2@db/docs",
        "postgresql://reader:hunter2@db/docs?schema=x",
        "postgresql://db/docs?password=hunter2&schema=x",
        "postgresql://reader:hunter%32@db/docs",
    ],
)
def test_the_password_is_used_and_never_shown(url):
    found = parse_location(url)
    assert "hunter" not in str(found) and "hunter" not in repr(found)
    assert "hunter2" in found.conninfo or "hunter%32" in found.conninfo
    assert found.redact("FATAL: password hunter2 refused") == "FATAL: password *** refused"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("postgresql:relative", "not a PostgreSQL URL"),
        ("postgresql://h/db?schema=Team-Docs", "not a plain name"),
        ("postgresql://h/db?schema=", "not a plain name"),
        ("postgresql://u:hunter2@h/db#part", "no #fragment"),
        ("qdrant://host:6333/docs", "no longer supported"),
    ],
)
def test_malformed_urls_are_usage_errors_without_the_password(given, said):
    with pytest.raises(UsageError) as raised:
        parse_location(given)
    assert said in str(raised.value) and "hunter2" not in str(raised.value)


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (
            "connection failed: Connection refused",
            "the PostgreSQL server at db/docs cannot be reached (connection failed",
        ),
        (
            "consuming input failed: server closed the connection unexpectedly",
            "the PostgreSQL server at db/docs closed the connection while working (consuming input failed",
        ),
    ],
)
def test_a_connection_never_made_and_one_lost_while_working_are_told_apart(said, expected):
    psycopg = pytest.importorskip("psycopg")
    from semsearch.errors import StoreUnavailableError
    from semsearch.store.postgres.connection import failures

    with (
        pytest.raises(StoreUnavailableError) as raised,
        failures(parse_location("postgresql://u:pw@db/docs")),
    ):
        raise psycopg.OperationalError(said)
    assert str(raised.value).startswith(expected)
