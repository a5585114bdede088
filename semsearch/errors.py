"""Errors a user can cause or fix. The CLI maps each to a red message and an exit code."""

from __future__ import annotations


class SemsearchError(Exception):
    """Base class: a problem the user can act on. Never shown with a traceback."""

    exit_code = 2


class DocsError(SemsearchError):
    """The documents folder is missing, empty or unreadable."""


class IndexMissingError(SemsearchError):
    """No index where one was expected."""


class IndexCorruptError(SemsearchError):
    """The index exists but cannot be trusted (truncated, inconsistent, foreign)."""


class ModelError(SemsearchError):
    """The embedding model cannot be loaded or does not match the index."""


class QuestionsError(SemsearchError):
    """A question file for ``eval`` is missing or malformed."""


class IndexBusyError(SemsearchError):
    """Another build holds the index's lock."""


class UsageError(SemsearchError):
    """An option's value cannot work (e.g. a token budget too small for anything)."""
