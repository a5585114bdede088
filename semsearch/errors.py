"""Errors a user can cause or fix, in library terms. The CLI alone turns them into a one-line
message with a hint and an exit code."""

from __future__ import annotations


class SemsearchError(Exception):
    """Base class: a problem the user can act on. Never shown with a traceback."""


class DocsError(SemsearchError):
    """The documents folder is missing, empty or unreadable."""


class IndexMissingError(SemsearchError):
    """No index where one was expected."""


class IndexCorruptError(SemsearchError):
    """The index exists but cannot be trusted (truncated, inconsistent, foreign)."""


class MetaUnreadableError(IndexCorruptError):
    """The index's meta.json cannot be read: nothing proves semsearch made the folder, so a
    build will not replace it (see ``store.writable_target``)."""


class ModelError(SemsearchError):
    """The embedding model cannot be loaded or does not match the index."""


class QuestionsError(SemsearchError):
    """A question file for ``eval`` is missing or malformed."""


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
