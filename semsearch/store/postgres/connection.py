"""Connecting to PostgreSQL: psycopg loaded on first use (the optional ``postgres`` extra), the
pgvector type registered, the index's schema first on the search path, and every failure of the
driver or the server said in semsearch's words (one line, never a traceback, never a password)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

from semsearch.errors import IndexChangedError, IndexCorruptError, SemsearchError, StoreUnavailableError
from semsearch.store.location import PostgresLocation

CONNECT_SECONDS = int(os.environ.get("SEMSEARCH_PG_CONNECT_TIMEOUT", "10"))
"""How long connecting may take (libpq's ``connect_timeout``; the URL's own wins)."""
APPLICATION = "semsearch"
T = TypeVar("T")


def psycopg() -> Any:
    """The ``psycopg`` package with pgvector's adapter, or a one-line error saying how to install them."""
    try:
        import pgvector.psycopg  # noqa: F401
        import psycopg
    except ImportError as exc:
        raise StoreUnavailableError(
            "a postgresql:// index needs psycopg and pgvector, which are not installed: "
            "pip install 'semsearch[postgres]'"
        ) from exc
    return psycopg


def connect(location: PostgresLocation, create_extension: bool = False) -> Any:
    """A new autocommit connection to ``location``'s database, its schema first on the search
    path and pgvector's type adapted to numpy (when the extension is installed; a build,
    ``create_extension``, installs it when it is not)."""
    module = psycopg()
    with failures(location, reading=False):
        connection = module.connect(
            location.conninfo,
            autocommit=True,
            connect_timeout=CONNECT_SECONDS,
            application_name=APPLICATION,
        )
        try:
            vector_schema = _vector_schema(connection)
            if vector_schema is None and create_extension:
                _create_extension(connection, location)
                vector_schema = _vector_schema(connection)
            path = [location.schema] + ([vector_schema] if vector_schema else [])
            connection.execute("SELECT set_config('search_path', %s, false)", [_search_path(path)])
            if vector_schema:
                from pgvector.psycopg import register_vector

                register_vector(connection)
        except BaseException:
            connection.close()
            raise
    return connection


def _vector_schema(connection: Any) -> str | None:
    """The schema pgvector's extension is installed in (None: it is not installed)."""
    found = connection.execute(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'vector'"
    ).fetchone()
    return found[0] if found else None


def _create_extension(connection: Any, location: PostgresLocation) -> None:
    errors = psycopg().errors
    try:
        connection.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    except (errors.InsufficientPrivilege, errors.FeatureNotSupported, errors.UndefinedFile) as exc:
        raise StoreUnavailableError(
            f"the database at {location.server} has no pgvector extension, and semsearch cannot add it "
            f"({_line(location, exc)}): ask its owner to run CREATE EXTENSION vector"
        ) from None


def _search_path(schemas: list[str]) -> str:
    """``schemas`` as a search_path value, each name quoted."""
    return ", ".join('"' + name.replace('"', '""') + '"' for name in dict.fromkeys(schemas))


class Connections:
    """One connection per thread to one location, opened on first use and opened again after the
    server dropped it (a restart, a network cut): a ``Collection`` searched from several threads
    never interleaves two questions' statements on one connection."""

    def __init__(self, location: PostgresLocation):
        self.location = location
        self._local = threading.local()
        self._all: list[Any] = []
        self._lock = threading.Lock()

    def get(self) -> Any:
        connection = getattr(self._local, "connection", None)
        if connection is None or connection.closed or connection.broken:
            connection = connect(self.location)
            self._local.connection = connection
            with self._lock:
                self._all.append(connection)
        return connection

    def run(self, work: Callable[[Any], T], reading: bool = True) -> T:
        """``work(connection)``, its failures said in one line (``failures``); run again once on
        a new connection when the server had dropped this thread's (the first statement on it
        tells)."""
        with failures(self.location, reading):
            connection = self.get()
            try:
                return work(connection)
            except psycopg().OperationalError:
                if not connection.broken:
                    raise
            return work(self.get())

    def close(self) -> None:
        with self._lock:
            found, self._all = self._all, []
        for connection in found:
            with suppress(Exception):
                connection.close()
        self._local = threading.local()


@contextmanager
def failures(location: PostgresLocation, reading: bool = True) -> Iterator[None]:
    """The driver's and the server's errors as semsearch errors, one line each, the password cut
    out: the server unreachable, a login refused, a statement too slow, a table of the index gone
    while being read (a build replaced it: ``reading``), anything else the server refused."""
    module = psycopg()
    try:
        yield
    except module.Error as exc:
        raise _translated(location, exc, reading) from None


def _translated(location: PostgresLocation, exc: BaseException, reading: bool) -> SemsearchError:
    errors = psycopg().errors
    said = _line(location, exc)
    if isinstance(exc, errors.UndefinedTable) and reading:
        return IndexChangedError(
            f"the index at {location} was replaced while being read (a build finished meanwhile)"
        )
    if isinstance(exc, errors.DataException | errors.IntegrityError):
        return IndexCorruptError(f"the index at {location} holds bad data ({said})")
    where = f"the PostgreSQL server at {location.server}"
    kinds = (  # the first that fits: a refused login and a cancelled statement are operational too
        (
            errors.InvalidPassword | errors.InvalidAuthorizationSpecification,
            f"{where} refused the login: {said}",
        ),
        (errors.InsufficientPrivilege, f"{where} refused: {said}"),
        (errors.QueryCanceled, f"{where} gave up a statement: {said}"),
        (psycopg().OperationalError, f"{where} {_lost_or_unreached(said)}"),
    )
    return StoreUnavailableError(
        next((text for kind, text in kinds if isinstance(exc, kind)), f"{where} failed: {said}")
    )


def _lost_or_unreached(said: str) -> str:
    """How a connection failed, as the message says it: lost in the middle of the work (the
    server stopped or its process for this connection ended: its log says why) or never made."""
    if "closed the connection" in said or "terminating connection" in said:
        return f"closed the connection while working ({said}; the server's log says why)"
    return f"cannot be reached ({said})"


def _line(location: PostgresLocation, exc: BaseException) -> str:
    """The first line of the driver's message, without the password (libpq's own messages never
    hold it, but a server's error may quote a statement or a connection string)."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    return location.redact(text)[:300]
