"""What is wrong with the arguments a client passed to an MCP tool (``mcp_server``), in one line
that names each argument: ``start_line: expected an integer, got 'abc'``.

The SDK reports pydantic's own text: a multi-line dump per error, with a documentation link,
and for an argument that takes several types (a text or a list) one error per type tried.
Expectations are told in JSON terms (a string, a list of strings), as the client sees the
tool's input schema.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from semsearch.util.printable import QUOTED_CHARACTERS, quoted

SHOWN_CHARS = 60
"""A wrong value is shown up to this length."""

_JSON_KINDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}
_PLURALS = {"string": "strings", "integer": "integers", "number": "numbers", "object": "objects"}
_PYDANTIC_KINDS = {
    "int": "integer",
    "float": "number",
    "string": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "dict": "object",
}
"""The JSON kind of a pydantic error type's first word (``int_parsing``: an integer)."""
_BOUNDS = {
    "greater_than_equal": ("ge", "must be at least {}"),
    "greater_than": ("gt", "must be more than {}"),
    "less_than_equal": ("le", "must be at most {}"),
    "less_than": ("lt", "must be less than {}"),
    "string_too_short": ("min_length", "must have at least {} characters"),
    "string_too_long": ("max_length", "must have at most {} characters"),
}


def unknown_arguments(arguments: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """What is wrong when ``arguments`` name some that the tool (its input ``schema``) does not
    take; None when they do not. Unchecked, such an argument would be dropped in silence."""
    known = list(schema.get("properties", {}))
    unknown = [name for name in arguments if name not in known]
    if not unknown:
        return None
    takes = f"it takes {', '.join(known)}" if known else "it takes none"
    named = ", ".join(quoted(name) if len(name) > QUOTED_CHARACTERS else name for name in unknown[:5])
    more = f" and {len(unknown) - 5:,} more" if len(unknown) > 5 else ""
    return f"{named}{more}: not an argument of this tool ({takes})"


def argument_problems(error: ValidationError, arguments: dict[str, Any], schema: dict[str, Any]) -> str:
    """One line saying what is wrong with each argument that failed ``error``'s validation."""
    by_argument: dict[str, list[ErrorDetails]] = {}
    for detail in error.errors():
        name = str(detail["loc"][0]) if detail["loc"] else "arguments"
        by_argument.setdefault(name, []).append(detail)
    properties = schema.get("properties", {})
    return "; ".join(
        f"{name}: {_problem(details, arguments.get(name), properties.get(name, {}))}"
        for name, details in by_argument.items()
    )


def _problem(details: list[ErrorDetails], value: Any, schema: dict[str, Any]) -> str:
    if any(detail["type"] == "missing" for detail in details):
        return "missing (it is required)"
    detail = details[0]
    if len(details) == 1 and len(detail["loc"]) == 1:  # the value itself, of a single type
        return f"{_single(detail)}, got {_shown(value)}"
    if schema:  # a value of several types tried, or its items
        return f"expected {_expected(schema)}, got {_shown(value)}"
    return f"{_single(detail)}, got {_shown(value)}"


def _single(detail: ErrorDetails) -> str:
    """What is wrong, from one pydantic error: its own words if none of ours fit."""
    kind, context = detail["type"], detail.get("ctx", {})
    if kind in _BOUNDS and _BOUNDS[kind][0] in context:
        key, words = _BOUNDS[kind]
        return (
            "must not be empty"
            if kind == "string_too_short" and context[key] == 1
            else words.format(context[key])
        )
    if kind == "literal_error" and "expected" in context:
        return f"expected {context['expected']}"
    first = kind.split("_")[0]
    if first in _PYDANTIC_KINDS and kind.endswith(("_type", "_parsing", "_from_float")):
        return f"expected {_JSON_KINDS[_PYDANTIC_KINDS[first]]}"
    words = " ".join(detail["msg"].split())  # on one line
    return words[:1].lower() + words[1:]


def _expected(schema: dict[str, Any]) -> str:
    """What a JSON schema takes, in words: "a string or a list of strings"."""
    if "anyOf" in schema:
        return _either(list(dict.fromkeys(_expected(option) for option in schema["anyOf"])))
    if "enum" in schema:
        return _either([_shown(value) for value in schema["enum"]])
    kind = schema.get("type")
    items = schema.get("items")
    if kind == "array" and isinstance(items, dict) and items.get("type") in _PLURALS:
        return f"a list of {_PLURALS[items['type']]}"
    return _JSON_KINDS.get(kind, "another value") if isinstance(kind, str) else "another value"


def _either(options: list[str]) -> str:
    return options[0] if len(options) == 1 else f"{', '.join(options[:-1])} or {options[-1]}"


def _shown(value: Any) -> str:
    """``value`` on one line, short: a text quoted, anything else as JSON."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
