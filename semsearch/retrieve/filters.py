"""Which rows a search may return: ``--path`` patterns and ``--where`` conditions on front
matter, applied before the top k (see ``search.rank``), so a filter never empties a result
that exists. ``ask``, ``eval``, the library and the MCP server all filter through ``allowed_rows``.

A condition is ``FIELD OP VALUE`` with OP one of ``= != < <= > >=``. Several conditions must
all hold. A file without the field never matches a condition on it (``!=`` included). Values:

- a number compares as a number (``year>=2024``), a date or time as a date (``date<2025-01-01``,
  the value written ``YYYY-MM-DD`` or ISO 8601), a boolean as a boolean (``draft=false``), and
  text exactly (case matters) with ``=`` and ``!=``;
- ``<``, ``<=``, ``>``, ``>=`` need a number or a date: ``type>umowa`` is a usage error;
- a list matches when one of its items does (``tags=faq``); ``tags!=faq``: none of them is faq.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from semsearch.errors import IndexCorruptError, UsageError
from semsearch.store.file_records import fields_seen
from semsearch.util.printable import QUOTED_CHARACTERS, quoted

if TYPE_CHECKING:
    from semsearch.ingest.frontmatter import Scalar, Value
    from semsearch.store.file_records import FileRecord
    from semsearch.store.meta import IndexMeta

_CONDITION = re.compile(r"\s*([^\s<>=!]+)\s*(<=|>=|!=|==|=|<|>)\s*(.*?)\s*", re.S)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")
_BOOLEANS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}
ORDERING = ("<", "<=", ">", ">=")
_WANTED = {"=": (0,), "<": (-1,), "<=": (-1, 0), ">": (1,), ">=": (1, 0)}
"""What ``Condition._compare`` must give for the operator to hold."""


def _number(text: str) -> float | None:
    return float(text) if _NUMBER.fullmatch(text) else None


def _moment(text: str) -> dt.datetime | None:
    """An ISO date or date-time as a naive UTC datetime (a date: its midnight); None otherwise."""
    if not _DATE.fullmatch(text):
        return None
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return moment


@dataclass(frozen=True)
class Condition:
    """One ``--where`` condition (see the module docstring); ``parse`` reads one."""

    field: str
    op: str
    value: str

    @classmethod
    def parse(cls, text: str) -> Condition:
        match = _CONDITION.fullmatch(text)
        if not match:
            raise UsageError(
                f"cannot read the condition {quoted(text)}: expected FIELD OP VALUE with OP one of "
                "= != < <= > >= (e.g. type=umowa, 'year>=2024')"
            )
        field, op, value = match.group(1), "=" if match.group(2) == "==" else match.group(2), match.group(3)
        if not value:
            raise UsageError(f"the condition {quoted(text)} has no value after {op}")
        condition = cls(field, op, value)
        if op in ORDERING and _number(value) is None and _moment(value) is None:
            raise UsageError(
                f"the condition {quoted(text)} compares with {op}, which needs a number or a date "
                f"(YYYY-MM-DD), not {quoted(value)}"
            )
        return condition

    def __str__(self) -> str:
        return f"{self.field}{self.op}{self.value}"

    @cached_property
    def _number(self) -> float | None:
        return _number(self.value)

    @cached_property
    def _moment(self) -> dt.datetime | None:
        return _moment(self.value)

    def matches(self, fields: dict[str, Value]) -> bool:
        """Whether a file with these front-matter ``fields`` meets the condition."""
        if self.field not in fields:
            return False
        value = fields[self.field]
        items = value if isinstance(value, list) else [value]
        if self.op == "!=":
            return not any(self._compare(item) == 0 for item in items)
        wanted = _WANTED[self.op]
        return any(self._compare(item) in wanted for item in items)

    def _compare(self, item: Scalar) -> int | None:
        """-1, 0 or 1 as ``item`` is below, equal to or above the condition's value; None when
        the two cannot be compared (so only ``!=`` can hold)."""
        if isinstance(item, bool):
            wanted = _BOOLEANS.get(self.value.casefold())
            return None if wanted is None else _sign(int(item) - int(wanted))
        if isinstance(item, int | float):
            return None if self._number is None else _sign(item - self._number)
        if item == self.value:
            return 0
        if self._moment is not None and (moment := _moment(item)) is not None:
            return _sign((moment - self._moment).total_seconds())
        if self._number is not None and (number := _number(item)) is not None:
            return _sign(number - self._number)
        return None


def _sign(difference: float) -> int:
    return (difference > 0) - (difference < 0)


def conditions(where: Iterable[str | Condition] | str | Condition | None) -> list[Condition]:
    """Conditions from their text (``type=umowa``) or as given, one or several; a bad one is a
    ``UsageError``."""
    if where is None:
        return []
    if isinstance(where, str | Condition):
        items = [where]
    elif isinstance(where, list | tuple):
        items = list(where)
    else:
        raise UsageError(
            f"conditions are text such as 'year>=2024', Conditions or a list, not {type(where).__name__}"
        )
    wrong = [item for item in items if not isinstance(item, str | Condition)]
    if wrong:
        shown = repr(wrong[0])[:QUOTED_CHARACTERS]
        raise UsageError(f"a condition is text such as 'year>=2024' or a Condition, not {shown}")
    return [item if isinstance(item, Condition) else Condition.parse(item) for item in items]


def allowed_rows(
    meta: IndexMeta,
    rows: int,
    paths: Sequence[str] = (),
    where: Sequence[str | Condition] = (),
    index: Path | None = None,
) -> np.ndarray | None:
    """Mask of the ``rows`` an index (its ``meta``) may return for files matching one of the
    ``.gitignore``-style ``paths`` and every ``where`` condition; None without a filter."""
    where = conditions(where)
    if not paths and not where:
        return None
    files = meta.files
    matches = _path_matcher(paths, Path(meta.docs_root)) if paths else None
    in_paths = 0
    chosen: dict[str, FileRecord] = {}
    for source, record in files.items():  # once: a server's records stream a batch at a time
        if matches is not None and not matches(source):
            continue
        in_paths += 1
        if all(c.matches(record.front_matter.fields) for c in where):
            chosen[source] = record
    if paths and not in_paths:
        raise UsageError(f"no indexed file matches {_asked(paths, [])}")
    if where and meta.front_matter_version is None:
        raise IndexCorruptError(
            f"the index at {index}/ predates front-matter filters: its files carry no "
            "fields, so none would match a condition"
        )
    if not chosen:
        raise UsageError(_nothing_matches(files, paths, where))
    if not any(record.has_text for record in chosen.values()):
        raise UsageError(_only_without_text(sorted(chosen), paths, where))
    if any(record.rows is None for record in chosen.values()):
        raise IndexCorruptError(f"the index at {index}/ predates path filters (no row ranges per file)")
    ranges = np.array([record.rows for record in chosen.values()], dtype=np.int64).reshape(-1, 2)
    edges = np.zeros(rows + 1, dtype=np.int32)  # +1 where a file's rows start, -1 where they end
    np.add.at(edges, ranges[:, 0], 1)
    np.add.at(edges, ranges[:, 1], -1)
    return np.cumsum(edges[:-1]) > 0


def _path_matcher(paths: Sequence[str], root: Path) -> Callable[[str], bool]:
    """Whether a file (its path relative to ``root``) matches one of the ``paths`` patterns."""
    from semsearch.ingest.gitignore import PathPatterns  # here: a plain ask has no --path
    from semsearch.ingest.patterns import check_patterns
    from semsearch.ingest.sources import docs_relative

    check_patterns(paths, "the path pattern")
    return PathPatterns([docs_relative(pattern, root) for pattern in paths]).match_file


def _asked(paths: Sequence[str], where: list[Condition]) -> str:
    """The filters as given: ``the path pattern(s) a.md and the condition(s) year>=2024``."""
    asked = [f"the path pattern(s) {_listed(paths)}"] if paths else []
    asked += [f"the condition(s) {_listed([str(c) for c in where])}"] if where else []
    return " and ".join(asked)


def _listed(given: Sequence[str], most: int = 5) -> str:
    """Patterns or conditions as given, the first ``most`` of them, a long one cut short."""
    shown = " ".join(quoted(text) if len(text) > QUOTED_CHARACTERS else text for text in given[:most])
    return shown + (f" and {len(given) - most:,} more" if len(given) > most else "")


def _only_without_text(chosen: list[str], paths: Sequence[str], where: list[Condition]) -> str:
    """Filters that leave only files whose every line is front matter or headings: nothing to
    search, which the gate would otherwise report as a folder that holds no answer."""
    listed = ", ".join(chosen[:5]) + (f" and {len(chosen) - 5:,} more" if len(chosen) > 5 else "")
    return f"{_asked(paths, where)} match only files with no text to search ({listed})"


def _nothing_matches(files: Mapping[str, FileRecord], paths: Sequence[str], where: list[Condition]) -> str:
    asked = _asked(paths, where)
    seen = fields_seen(files)
    known = ", ".join(f"{name} ({count})" for name, count in seen.items()) or "none"
    return f"no indexed file matches {asked} (front-matter fields, with their files: {known})"
