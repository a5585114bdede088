"""Connecting to Qdrant: its client library loaded on first use (the optional ``qdrant`` extra),
one client per local-mode folder per process (local mode locks the folder for one client), and
every failure of the client said in semsearch's words (one line, never a traceback)."""

from __future__ import annotations

import os
import re
import sqlite3
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from semsearch.errors import IndexBusyError, IndexCorruptError, StoreUnavailableError
from semsearch.store.location import QdrantLocation

TIMEOUT_SECONDS = int(os.environ.get("SEMSEARCH_QDRANT_TIMEOUT", "30"))
"""How long one request to a server may take."""
MIN_SERVER = (1, 10)
"""The oldest server whose API semsearch's requests were written for."""
API_KEY = "QDRANT_API_KEY"

_local: dict[str, list[Any]] = {}
"""Local-mode clients open in this process, by folder: [client, users]."""


def qdrant() -> Any:
    """The ``qdrant_client`` package, or a one-line error saying how to install it."""
    try:
        import qdrant_client
    except ImportError as exc:
        raise StoreUnavailableError(
            "a qdrant:// index needs the Qdrant client, which is not installed: "
            "pip install 'semsearch[qdrant]'"
        ) from exc
    return qdrant_client


@contextmanager
def connected(location: QdrantLocation, translate: bool = True) -> Iterator[Any]:
    """A client for ``location`` while the block runs, the client's failures translated
    (``failures``; ``translate`` False: only while opening, so that a build run inside the block
    keeps its own errors). A local-mode folder is opened once per process and closed when its
    last user is done."""
    with failures(location):
        client = _open(location)
    try:
        if translate:
            with failures(location):
                yield client
        else:
            yield client
    finally:
        _release(location, client)


def _open(location: QdrantLocation) -> Any:
    module = qdrant()
    if location.directory is None:
        with warnings.catch_warnings():  # an API key over plain HTTP: the user's choice, said in the docs
            warnings.simplefilter("ignore")
            client = module.QdrantClient(
                host=location.host,
                port=location.port,
                https=location.tls,
                api_key=os.environ.get(API_KEY) or None,
                timeout=TIMEOUT_SECONDS,
                check_compatibility=False,
            )
        _check_version(client, location)
        return client
    key = str(location.directory)
    if key in _local:
        _local[key][1] += 1
        return _local[key][0]
    # Said when a store is opened and on a write past 20,000 points: DESIGN.md says when to move.
    warnings.filterwarnings("ignore", message="Local mode is not recommended", category=UserWarning)
    try:
        client = module.QdrantClient(path=key)
    except RuntimeError as exc:
        if "already accessed" not in str(exc):
            raise
        raise IndexBusyError(
            f"another process is using the Qdrant store {location.directory}/ (local mode lets one "
            "process at a time open it); wait for it to finish, or use a Qdrant server for shared use"
        ) from None
    except sqlite3.OperationalError as exc:
        # Seen while a build in another process had just moved the alias and closed the store: the
        # sqlite file of a collection read in the middle of its last changes ("disk I/O error").
        # A reader keeps the index it has (the MCP server) or says to try again.
        raise IndexBusyError(
            f"the Qdrant store {location.directory}/ changed while it was being opened ({exc}); "
            "another process is writing it: try again"
        ) from None
    _local[key] = [client, 1]
    return client


def _release(location: QdrantLocation, client: Any) -> None:
    if location.directory is None:
        client.close()
        return
    entry = _local.get(str(location.directory))
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] <= 0:
        del _local[str(location.directory)]
        client.close()


def _sqlite_of(client: Any, collection: str) -> sqlite3.Connection | None:
    """The sqlite connection local mode keeps ``collection``'s points in (None: a server, or a
    client whose insides are not as this was written for)."""
    found = getattr(getattr(client, "_client", None), "collections", {}).get(collection)
    connection = getattr(getattr(found, "storage", None), "storage", None)
    return connection if isinstance(connection, sqlite3.Connection) else None


def fast_commits(client: Any, collection: str) -> None:
    """Let local mode write ``collection`` without an fsync per point. It commits every point in a
    transaction of its own, each synced to disk: 16 ms a point here, 195 s for 10,000 chunks. In
    WAL mode with ``synchronous=NORMAL`` a commit is not synced and the store stays consistent
    after a crash; ``durable`` syncs it all before a build makes it the index."""
    connection = _sqlite_of(client, collection)
    if connection is not None:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")


def durable(client: Any, collection: str) -> None:
    """Sync what ``fast_commits`` left unsynced (a full checkpoint of the write-ahead log)."""
    connection = _sqlite_of(client, collection)
    if connection is not None:
        connection.execute("PRAGMA wal_checkpoint(FULL)")


def _check_version(client: Any, location: QdrantLocation) -> None:
    version = str(client.info().version)
    found = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    if found < MIN_SERVER:
        wanted = ".".join(map(str, MIN_SERVER))
        raise StoreUnavailableError(
            f"the Qdrant server at {location.server} is version {version}; semsearch needs {wanted} or newer"
        )


@contextmanager
def failures(location: QdrantLocation) -> Iterator[None]:
    """The client's exceptions as semsearch errors: a server unreachable, too slow, refusing the
    key or answering an error; a local store that cannot be read."""
    qdrant()
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    where = f"the Qdrant server at {location.server}"
    try:
        yield
    except UnexpectedResponse as exc:
        raise _answered(where, exc.status_code, exc.reason_phrase, exc.content) from None
    except ResponseHandlingException as exc:
        raise _unreachable(where, exc.source) from None
    except (TimeoutError, ConnectionError) as exc:
        raise _unreachable(where, exc) from None
    except _grpc_error() as exc:  # the client may take gRPC for some calls
        raise StoreUnavailableError(f"{where} failed: {_first_line(exc)}") from None
    except (ValueError, KeyError, TypeError, OSError, EOFError) as exc:
        if location.directory is None:
            raise StoreUnavailableError(
                f"{where} gave an answer semsearch cannot use ({_first_line(exc)})"
            ) from None
        raise IndexCorruptError(
            f"the Qdrant store at {location.directory}/ is unreadable ({_first_line(exc)})"
        ) from None


def _grpc_error() -> type[BaseException]:
    try:
        import grpc
    except ImportError:
        return _Never
    return grpc.RpcError


class _Never(Exception):
    """Matches nothing (grpc is not installed)."""


def _answered(where: str, status: int | None, reason: str, content: bytes) -> StoreUnavailableError:
    if status in (401, 403):
        return StoreUnavailableError(
            f"{where} refused the request ({status} {reason}): set {API_KEY} to the server's API key"
        )
    detail = _first_line(content.decode("utf-8", "replace"))[:200]
    return StoreUnavailableError(f"{where} answered {status} {reason}: {detail}")


def _unreachable(where: str, source: BaseException) -> StoreUnavailableError:
    name = type(source).__name__
    if "Timeout" in name or isinstance(source, TimeoutError):
        return StoreUnavailableError(
            f"{where} did not answer within {TIMEOUT_SECONDS} s (SEMSEARCH_QDRANT_TIMEOUT sets the limit)"
        )
    return StoreUnavailableError(f"cannot reach {where} ({_first_line(source) or name})")


def _first_line(value: object) -> str:
    lines = str(value).strip().splitlines()
    return lines[0] if lines else ""
