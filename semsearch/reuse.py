"""What a build may keep from the index it replaces: its vectors (same model and chunking),
and, when no file changed, the whole index (its keyword index and gate made as this version
makes them)."""

from __future__ import annotations

from pathlib import Path

from .errors import SemsearchError
from .index import Index, load_index
from .keywords import settings as keyword_settings
from .threshold import GATE


def reusable_index(target: Path, spec: str, settings: dict, full: bool) -> tuple[Index | None, str | None]:
    """The previous index when its vectors can be reused, else None and why not."""
    if full:
        return None, "--full"
    if not (target / "meta.json").exists():
        return None, None
    try:
        previous = load_index(target)
    except SemsearchError as exc:
        return None, f"the previous index is unreadable ({exc})"
    if previous.model != spec:
        return None, f"the model changed ({previous.model} → {spec})"
    if previous.meta.get("chunking") != settings:
        return (
            None,
            f"the chunking changed ({settings_change(previous.meta.get('chunking') or {}, settings)})",
        )
    return previous, None


def settings_change(old: dict, new: dict) -> str:
    """``max_tokens 300 → 200, version 2 → 3``: only what differs."""
    keys = [key for key in dict.fromkeys([*old, *new]) if old.get(key) != new.get(key)]
    return ", ".join(f"{key} {old.get(key, '—')} → {new.get(key, '—')}" for key in keys)


def keywords_current(index: Index) -> bool:
    """Whether the index's keyword index was made the way this version makes it (if not, a
    build with no file changes still rebuilds it, reusing every chunk and vector)."""
    return index.meta.get("keywords") == keyword_settings(index.corpus_language)


def gate_current(index: Index) -> bool:
    """Whether the index's no-answer gate was derived by this version's rule from this bank (else
    an unchanged folder is recalibrated: vectors are reused, nothing is re-embedded)."""
    return index.offtopic_reusable and index.meta["min_score"].get("gate") == GATE
