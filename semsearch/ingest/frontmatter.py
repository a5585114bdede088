"""YAML front matter as per-file metadata: the fields ``ask --where`` filters on.

The block is the one the chunker leaves out of chunks (markdown-it's front matter rule, see
``front_matter_block``), read with PyYAML's ``safe_load``. Values are stored as JSON can hold
them: dates and times as ISO strings (compared as dates by ``filters``), nested mappings as
dotted names (``author.name``), lists as lists of scalars; nulls are dropped (a field set to
nothing is a field the file does not have). A block that is not valid YAML, or not a mapping,
gives no fields and a message naming its line: never a failed build.

YAML aliases repeat a node without writing it again: nine aliases a line, nine lines, and 400
bytes stand for 400 million strings (a "billion laughs"), an 11 MB meta.json or a build that
never ends (issue 22). So the block is composed first, and read only if its nodes, counted with
every alias expanded, their nesting and their text stay within the ``MAX_*`` bounds below;
beyond them it gives no fields and a message, as a block that is not YAML does.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any

FRONT_MATTER_VERSION = 1
"""Stamped in meta.json when a build records front matter: an index without it predates
``--where`` (its files carry no fields), and its next build adds them without embedding."""

Scalar = str | int | float | bool
Value = Scalar | list[Scalar]

MAX_BLOCK_CHARS = 1_000_000
"""A longer front matter block is not parsed (PyYAML reads some 1 MB a second)."""
MAX_NODES = 10_000
"""Values, keys and collections, aliases expanded: far more than any file's fields."""
MAX_DEPTH = 50
"""Collections inside collections."""
MAX_TEXT = 1_000_000
"""Characters of all scalars, aliases expanded: what the fields would hold at most."""

_CLOSING_FENCE = re.compile(r"(-+)[ \t]*")
_DOCUMENT_END = re.compile(r"\.\.\.[ \t]*")


@dataclass(frozen=True)
class FrontMatter:
    """A file's front-matter fields, or why its block gave none."""

    fields: dict[str, Value]
    problem: str | None = None
    """Why the block gave no fields (None: read, or no block)."""
    line: int | None = None
    """Where the problem is, 1-based in the file."""

    def record(self) -> dict:
        """What meta.json keeps of it in the file's record (nothing for a file without any)."""
        problem = {"problem": self.problem, "line": self.line} if self.problem else None
        return {
            **({"front_matter": self.fields} if self.fields else {}),
            **({"front_matter_problem": problem} if problem else {}),
        }

    @classmethod
    def recorded(cls, record: dict) -> FrontMatter:
        """The front matter a file record keeps (see ``record``)."""
        problem = record.get("front_matter_problem") or {}
        return cls(record.get("front_matter", {}), problem.get("problem"), problem.get("line"))

    def warning(self, source: str) -> str | None:
        if not self.problem:
            return None
        return f"{source}:{self.line}: {self.problem}; the file is indexed without its fields"


RECORD_KEYS = ("front_matter", "front_matter_problem")


def normalize_newlines(text: str) -> str:
    """Drop a BOM and turn CRLF / CR into LF; line numbers are unchanged."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _indent(line: str) -> int:
    """Columns of leading whitespace, tabs to the next multiple of 4 (as markdown-it counts)."""
    column = 0
    for char in line:
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            break
    return column


def front_matter_block(text: str) -> tuple[str, int] | None:
    """The front matter's YAML and its first line (1-based), or None: the block markdown-it's
    front matter plugin finds (and the chunker leaves out). It opens at the file's first character
    with a line of three or more dashes, and closes at a later line of at least as many dashes
    (indented less than 4 columns, spaces after) or ``...`` at column 0; unclosed, there is none."""
    if not text.startswith("---"):
        return None
    lines = text.split("\n")
    markers = len(lines[0]) - len(lines[0].lstrip("-"))
    for number in range(1, len(lines)):
        line = lines[number]
        if _DOCUMENT_END.fullmatch(line):
            return "\n".join(lines[1:number]), 2
        fence = _CLOSING_FENCE.fullmatch(line.lstrip(" \t"))
        if fence and _indent(line) < 4 and len(fence.group(1)) >= markers:
            return "\n".join(lines[1:number]), 2
    return None


def read_front_matter(text: str) -> FrontMatter:
    """The fields of a Markdown file's front matter (``text``: the file's content)."""
    import yaml

    block = front_matter_block(normalize_newlines(text))
    if block is None:
        return FrontMatter({})
    content, first_line = block
    if len(content) > MAX_BLOCK_CHARS:
        return FrontMatter({}, f"front matter is over {MAX_BLOCK_CHARS:,} characters", first_line)
    try:
        data = _bounded_load(content)
    except _TooBig as exc:
        return FrontMatter({}, str(exc), first_line)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = first_line + (mark.line if mark is not None else 0)
        problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        return FrontMatter({}, f"front matter is not valid YAML ({problem})", line)
    except RecursionError:
        return FrontMatter({}, "front matter nested too deeply", first_line)
    except (ValueError, OverflowError) as exc:  # a date that cannot exist: `date: 2024-13-45`
        return FrontMatter({}, f"front matter is not valid YAML ({exc})", first_line)
    if data is None:
        return FrontMatter({})
    if not isinstance(data, dict):
        kind = type(data).__name__
        return FrontMatter({}, f"front matter is a {kind}, not a mapping of fields", first_line)
    fields: dict[str, Value] = {}
    _flatten(data, "", fields)
    return FrontMatter(fields)


class _TooBig(Exception):
    """The block expands past a bound: the message says which."""


def _past(what: str) -> _TooBig:
    return _TooBig(f"front matter expands past {what} (YAML aliases?)")


def _deep() -> _TooBig:
    return _TooBig(f"front matter nested more than {MAX_DEPTH} levels deep")


def _bounded_load(content: str) -> Any:
    """``yaml.safe_load``, refusing a document past the ``MAX_*`` bounds before it is built:
    composing stops at ``MAX_NODES`` nodes or ``MAX_DEPTH`` levels, and the node graph (where
    an alias is the node it names, shared) is measured with aliases expanded.

    Raises ``_TooBig``, or what PyYAML raises for a block that is not YAML."""
    import yaml

    class Loader(yaml.SafeLoader):
        composed = depth = 0

        def compose_node(self, parent, index):
            self.composed, self.depth = self.composed + 1, self.depth + 1
            if self.composed > MAX_NODES:
                raise _past(f"{MAX_NODES:,} values")
            if self.depth > MAX_DEPTH:
                raise _deep()
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    loader = Loader(content)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node, 0, {}, set())
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _measure(node: Any, depth: int, sizes: dict[int, tuple[int, int]], open_: set[int]) -> tuple[int, int]:
    """Nodes and scalar characters under ``node``, every alias expanded (each shared node is
    measured once: ``sizes``); raises ``_TooBig`` past a bound, or for a node inside itself."""
    import yaml

    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_:
        raise _TooBig("front matter holds itself (a recursive YAML alias)")
    if depth > MAX_DEPTH:
        raise _deep()
    nodes, text = 1, 0
    if isinstance(node, yaml.ScalarNode):
        text = len(node.value)
    else:
        open_.add(key)
        children = (
            node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]
        )
        for child in children:
            child_nodes, child_text = _measure(child, depth + 1, sizes, open_)
            nodes, text = nodes + child_nodes, text + child_text
            if nodes > MAX_NODES:
                raise _past(f"{MAX_NODES:,} values")
            if text > MAX_TEXT:
                raise _past(f"{MAX_TEXT:,} characters")
        open_.discard(key)
    sizes[key] = (nodes, text)
    return nodes, text


def _flatten(mapping: dict, prefix: str, into: dict[str, Value]) -> None:
    for key, value in mapping.items():
        name = f"{prefix}{key}"  # a key YAML read as a number, date or boolean: its text
        if isinstance(value, dict):
            _flatten(value, f"{name}.", into)
        elif isinstance(value, (list, tuple, set)):
            into[name] = [s for item in _items(value) if (s := _scalar(item)) is not None]
        elif (scalar := _scalar(value)) is not None:
            into[name] = scalar


def _items(values: Any) -> list:
    """A list's items, nested lists flattened (``tags: [[a, b], c]`` holds a, b and c)."""
    found: list = []
    for item in values:
        found += _items(item) if isinstance(item, (list, tuple, set)) else [item]
    return found


def _scalar(value: Any) -> Scalar | None:
    """``value`` as JSON holds it; None for what no filter can match (null, NaN, a mapping...)."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return None


def current_front_matter(source_text: str, kept: FrontMatter | None) -> FrontMatter:
    """A file's front matter: ``kept``, the one the previous index recorded of this very file
    (None: the file changed, or that index predates front matter), else read."""
    return kept if kept is not None else read_front_matter(source_text)
