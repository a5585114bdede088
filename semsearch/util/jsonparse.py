"""JSON read from files semsearch did not necessarily write whole (an index, a question file)."""

from __future__ import annotations

import json
from typing import Any


def parse_json(text: str | bytes) -> Any:
    """``json.loads``, but nesting too deep for Python's parser (``[[[[…``, tens of thousands
    deep) is a ``JSONDecodeError`` like any other malformed JSON, not a RecursionError."""
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise json.JSONDecodeError("JSON nested too deeply to read", "", 0) from exc
