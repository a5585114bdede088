"""What the command line says to do after an error: the hint after a library error's message,
with the real documents folder and index path in a suggested command when they are known. The
MCP server's error messages suggest the same command (``build_command``)."""

from __future__ import annotations

import shlex
from pathlib import Path

from semsearch.errors import (
    IndexChangedError,
    IndexCorruptError,
    IndexMissingError,
    MetaUnreadableError,
    SemsearchError,
)

_index: Path | None = None
"""The index folder the running command works on (None: not known yet)."""


def use_index(path: Path) -> Path:
    """Remember ``path`` as the running command's index, for the hints; returns it."""
    global _index
    _index = path
    return path


def forget_index() -> None:
    """The command is over (tests run many in one process)."""
    global _index
    _index = None


def message(exc: SemsearchError) -> str:
    """``exc``'s message, then what to do about it when there is something to say."""
    hint = _hint(exc)
    return f"{exc}; {hint}" if hint else str(exc)


def _hint(exc: SemsearchError) -> str | None:
    if isinstance(exc, MetaUnreadableError):  # before IndexCorruptError, its base class
        return (
            "nothing proves semsearch made that folder, so `semsearch build` leaves it alone: "
            "remove it yourself, then build again"
        )
    if isinstance(exc, IndexCorruptError):
        return f"rebuild it with `{build_command(_index)}`"
    if isinstance(exc, IndexMissingError):  # the path given may be a file or another folder
        return "build one with `semsearch build DOCS --index INDEX`"
    if isinstance(exc, IndexChangedError):
        return "run the command again"
    return None


def build_command(index: Path | None, unknown_docs: str = "DOCS") -> str:
    """``semsearch build DOCS --index INDEX`` with the index path, and the documents folder its
    meta.json records when that folder still exists: placeholders only for what is not known
    (``unknown_docs`` for the folder)."""
    return command_to_build(_recorded_docs(index) if index is not None else None, index, unknown_docs)


def command_to_build(docs: str | None, index: Path | None, unknown_docs: str = "DOCS") -> str:
    """``semsearch build DOCS --index INDEX``, each path shell-quoted, placeholders for what is None."""
    where = shlex.quote(str(index)) if index is not None else "INDEX"
    return f"semsearch build {shlex.quote(docs) if docs else unknown_docs} --index {where}"


def _recorded_docs(index: Path) -> str | None:
    """``docs_root`` from the meta.json of a damaged index: read as plain JSON, since the rest of
    it may be what is damaged; None when unreadable or the folder is gone."""
    from semsearch.store.meta import recorded_docs_root

    if not isinstance(index, Path):  # a qdrant: index has no meta.json to read apart
        return None
    docs = recorded_docs_root(index)
    return docs if docs and Path(docs).is_dir() else None
