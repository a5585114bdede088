"""Errors a user can cause or fix, in library terms. The CLI alone turns them into a one-line
message with a hint and an exit code."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class SemsearchError(Exception):
    """Base class: a problem the user can act on. Never shown with a traceback."""

    index: Any = None
    """The index the error is about, when known (a folder's ``Path``, or a ``postgresql:`` location,
    see ``store.location``): the hint's build command names it (``hints``). Set where it is
    raised, or by the front door that opened the index (``about_index``)."""

    def __init__(self, *args: object, index: Any = None):
        super().__init__(*args)
        if index is not None:
            self.index = _location(index)

    def about(self, index: Any) -> SemsearchError:
        """This error, about ``index`` unless it already names its index; returns it."""
        if self.index is None:
            self.index = _location(index)
        return self


def _location(index: Any) -> Any:
    """A folder given as text is a ``Path``; anything else (a ``Path``, a PostgreSQL location) as given."""
    return Path(index) if isinstance(index, str) else index


@contextmanager
def about_index(index: Any) -> Iterator[None]:
    """Within: a library error that names no index is about ``index`` (see ``SemsearchError.about``)."""
    try:
        yield
    except SemsearchError as exc:
        exc.about(index)
        raise


class DocsError(SemsearchError):
    """The documents folder is missing, empty or unreadable."""


class IndexMissingError(SemsearchError):
    """No index where one was expected."""


class BuildInterruptedError(IndexMissingError):
    """No index yet: its first build was interrupted, and the vectors it embedded are kept
    (``store.journal``): the same build goes on from there."""


class IndexCorruptError(SemsearchError):
    """The index exists but cannot be trusted (truncated, inconsistent, foreign)."""


class MetaUnreadableError(IndexCorruptError):
    """The index's meta.json cannot be read: nothing proves semsearch made the folder, so a
    build will not replace it (see ``store.writable_target``)."""


class ModelError(SemsearchError):
    """The embedding model cannot be loaded or does not match the index."""


class QuestionsError(SemsearchError):
    """A question file for ``eval`` is missing or malformed."""


class QuestionsMissingError(QuestionsError):
    """No question file where ``eval`` looked: its hint says what one holds and how to start one."""


class IndexBusyError(SemsearchError):
    """Another build holds the index's lock."""


class UsageError(SemsearchError):
    """An option's value cannot work (e.g. a token budget too small for anything)."""


class IndexLocationError(SemsearchError):
    """A folder that cannot hold an index: a file, a user's folder, inside the documents..."""


class IndexWriteError(SemsearchError):
    """Writing the index failed (disk full, permissions): the previous index is unchanged."""


class IndexChangedError(SemsearchError):
    """The index was replaced between reading it and writing to it: nothing was written."""


class StoreUnavailableError(SemsearchError):
    """The engine holding the index cannot be used: its client library is not installed, or its
    server is unreachable, too slow, refuses the API key or is too old."""


SHOWN_PATH_CHARS = 80
"""A path quoted in an error is cut to this length (one given by mistake may be thousands long)."""


def path_problem(exc: OSError) -> str | None:
    """One line for an ``OSError`` that the shape of a path the user gave caused (a name longer
    than the system allows): no bug, and no traceback, in the CLI and the MCP server alike.
    None for any other ``OSError``, which the caller handles as it would."""
    import errno

    if exc.errno != errno.ENAMETOOLONG or exc.filename is None:
        return None
    name = str(exc.filename)
    shown = name if len(name) <= SHOWN_PATH_CHARS else f"{name[: SHOWN_PATH_CHARS - 1]}…"
    return f"{exc.strerror or 'file name too long'}: {shown} ({len(name):,} characters)"
