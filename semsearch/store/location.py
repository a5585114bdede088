"""Where an index lives: a folder (the default), or a Qdrant collection named by a URL.

- ``qdrant:///ABSOLUTE/DIR``: Qdrant's local mode, the client's own store in that folder (one
  process at a time; no server);
- ``qdrant://HOST:PORT/COLLECTION``: a Qdrant server (API key from ``QDRANT_API_KEY``;
  ``?tls=1`` for HTTPS). ``COLLECTION`` is the alias a build switches to each new version.

Anything else is a folder path, as before. Parsing needs no Qdrant client: a folder index never
imports it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from semsearch.errors import UsageError

SCHEME = "qdrant"
LOCAL_COLLECTION = "semsearch"
"""The alias of the index in a local-mode folder (``qdrant:///DIR``)."""
DEFAULT_PORT = 6333
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}")
_FORMS = "qdrant:///ABSOLUTE/DIR (local mode) or qdrant://HOST:PORT/COLLECTION (a server)"


@dataclass(frozen=True)
class QdrantLocation:
    """A Qdrant index: local mode (``directory``) or a server (``host``, ``port``, ``tls``)."""

    url: str
    collection: str = LOCAL_COLLECTION
    directory: Path | None = None
    host: str | None = None
    port: int = DEFAULT_PORT
    tls: bool = False

    def __str__(self) -> str:
        return self.url

    @property
    def local(self) -> bool:
        return self.directory is not None

    @property
    def server(self) -> str:
        """``host:port`` (a server) or the folder (local mode), as messages name it."""
        return str(self.directory) if self.directory is not None else f"{self.host}:{self.port}"


Location = Path | QdrantLocation


def is_qdrant_url(value: object) -> bool:
    return isinstance(value, str) and value.lower().startswith(f"{SCHEME}:")


def parse_location(value: str | os.PathLike | QdrantLocation) -> Location:
    """``value`` as an index location: a ``qdrant:`` URL (see the module docstring), else a
    folder path (``Path(value)``, exactly as before)."""
    if isinstance(value, QdrantLocation):
        return value
    if not is_qdrant_url(value):
        return Path(value)
    text = str(value)
    parts = urlsplit(text)
    if not text.lower().startswith(f"{SCHEME}://") or parts.fragment:
        raise UsageError(f"{text!r} is not a Qdrant index URL: write {_FORMS}")
    options = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(options) - {"tls"})
    if unknown:
        raise UsageError(f"{text!r}: unknown option {unknown[0]!r} (only ?tls=1)")
    tls = options.get("tls", ["0"])[-1].lower() in ("1", "true", "yes", "on")
    if not parts.netloc:
        if tls:
            raise UsageError(f"{text!r}: local mode (qdrant:///DIR) has no TLS")
        directory = Path(parts.path)
        if not parts.path.startswith("/") or parts.path == "/":
            raise UsageError(f"{text!r}: local mode needs an absolute folder, qdrant:///ABSOLUTE/DIR")
        return QdrantLocation(text, directory=Path(os.path.normpath(directory)))
    collection = parts.path.strip("/")
    if not _NAME.fullmatch(collection):
        raise UsageError(f"{text!r}: name the collection, {_FORMS}")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError as exc:
        raise UsageError(f"{text!r}: the port is not a number from 1 to 65535") from exc
    if not parts.hostname:
        raise UsageError(f"{text!r}: name the server, {_FORMS}")
    return QdrantLocation(text, collection=collection, host=parts.hostname, port=port, tls=tls)
