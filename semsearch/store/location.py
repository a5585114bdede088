"""Where an index lives: a folder (the default), or a PostgreSQL schema named by a URL.

``postgresql://[USER@]HOST[:PORT]/DATABASE?schema=NAME`` (or ``postgres://``): the index in the
schema ``NAME`` of that database (``semsearch`` when no schema is named). Everything else in the
URL is libpq's own (``sslmode``, ``service``, ``host=/socket/dir``, several hosts...), and what
the URL leaves out libpq takes from ``PG*`` variables, ``~/.pgpass`` and service files. A
password in the URL is used to connect and never shown: ``str()`` is the URL without it.

A ``qdrant:`` URL (the store semsearch had before) is refused in one line that says how to move
the index. Anything else is a folder path, as before. Parsing needs no client library: a folder
index never imports one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from semsearch.errors import UsageError

POSTGRES_SCHEMES = ("postgresql", "postgres")
DEFAULT_SCHEMA = "semsearch"
"""The schema of an index whose URL names none."""
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_POSTGRES_FORM = "postgresql://[USER@]HOST[:PORT]/DATABASE?schema=NAME"
_SECRET_PARAMETERS = {"password"}


@dataclass(frozen=True)
class PostgresLocation:
    """An index in a PostgreSQL schema: ``conninfo`` is the URL libpq connects with (the
    password in it, if any), ``shown`` the same URL without a password (``str()``: every message,
    hint and ``info`` names the index by it)."""

    shown: str
    schema: str = DEFAULT_SCHEMA
    conninfo: str = field(default="", repr=False, compare=False)
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """The password as written in the URL and decoded: ``redact`` removes both from any text."""

    def __str__(self) -> str:
        return self.shown

    @property
    def server(self) -> str:
        """The server and database, as messages name them (no user, no password)."""
        parts = urlsplit(self.shown)
        given = {_name(item): unquote(item.partition("=")[2]) for item in parts.query.split("&")}
        host = parts.netloc.rpartition("@")[2] or given.get("host") or "localhost"
        return f"{host}{parts.path or '/'}"

    def redact(self, text: str) -> str:
        """``text`` without the password of this location (a driver's message may quote it)."""
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, "***")
        return text


Location = Path | PostgresLocation


def is_postgres_url(value: object) -> bool:
    return isinstance(value, str) and value.partition(":")[0].lower() in POSTGRES_SCHEMES and ":" in value


def parse_postgres(text: str) -> PostgresLocation:
    """A ``postgresql://`` URL as a location: its ``schema`` taken out (libpq knows no such
    parameter), the rest left as written for libpq, and a copy without a password to show."""
    scheme, _, rest = text.partition(":")
    if not rest.startswith("//"):
        raise UsageError(f"{_without_password(text)!r} is not a PostgreSQL URL: write {_POSTGRES_FORM}")
    parts = urlsplit(text)
    if parts.fragment:
        raise UsageError(f"{_without_password(text)!r}: a PostgreSQL URL has no #fragment")
    kept, schemas, secrets = [], [], []
    for item in parts.query.split("&") if parts.query else []:
        name, value = _name(item), item.partition("=")[2]
        if name == "schema":
            schemas.append(unquote(value))
        else:
            kept.append(item)
            if name in _SECRET_PARAMETERS:
                secrets += [value, unquote(value)]
    userinfo = parts.netloc.rpartition("@")[0]
    if ":" in userinfo:
        password = userinfo.partition(":")[2]
        secrets += [password, unquote(password)]
    schema = schemas[-1] if schemas else DEFAULT_SCHEMA
    if not _SCHEMA.fullmatch(schema):
        raise UsageError(
            f"{_without_password(text)!r}: the schema {schema[:64]!r} is not a plain name (lower-case "
            "letters, digits and _, at most 63, not starting with a digit)"
        )
    conninfo = _url(parts.scheme, parts.netloc, parts.path, kept)
    return PostgresLocation(
        shown=_shown(scheme, parts.netloc, parts.path, kept, schema),
        schema=schema,
        conninfo=conninfo,
        secrets=tuple(sorted({s for s in secrets if s}, key=len, reverse=True)),
    )


def _shown(scheme: str, netloc: str, path: str, kept: list[str], schema: str) -> str:
    userinfo, at, hosts = netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    query = [item for item in kept if _name(item) not in _SECRET_PARAMETERS]
    return _url(scheme.lower(), f"{user}{at}{hosts}", path, [*query, f"schema={schema}"])


def _name(item: str) -> str:
    """The parameter a query item (``name=value``) sets, as libpq reads its name."""
    return unquote(item.partition("=")[0]).strip().lower()


def _url(scheme: str, netloc: str, path: str, query: list[str]) -> str:
    """The URL of these parts as libpq reads it (``postgresql:///db``: the empty host kept)."""
    return f"{scheme}://{netloc}{path}" + (f"?{'&'.join(query)}" if query else "")


def _without_password(text: str) -> str:
    """``text`` as an error may quote it: the password cut out of its user part and query."""
    parts = urlsplit(text) if "//" in text else None
    if parts is None:
        return text
    userinfo, at, hosts = parts.netloc.rpartition("@")
    query = [item for item in parts.query.split("&") if item and _name(item) not in _SECRET_PARAMETERS]
    return _url(parts.scheme, f"{userinfo.partition(':')[0]}{at}{hosts}", parts.path, query)


def parse_location(value: str | os.PathLike | Location) -> Location:
    """``value`` as an index location: a ``postgresql:`` URL (see the module docstring), else a
    folder path (``Path(value)``, exactly as before)."""
    if isinstance(value, PostgresLocation):
        return value
    if is_postgres_url(value):
        return parse_postgres(str(value))
    if isinstance(value, str) and value.lower().startswith("qdrant:"):
        raise UsageError(
            "Qdrant indexes are no longer supported: build the index again into PostgreSQL "
            f"(--index {_POSTGRES_FORM}) or a folder"
        )
    return Path(value)
