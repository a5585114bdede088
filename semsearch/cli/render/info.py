"""``semsearch info``: what an index holds and how its no-answer gate was set, for people and --json."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from semsearch.cli.render.output import counted, files_counted
from semsearch.cli.render.terminal import _say, index_shown
from semsearch.gate.threshold import BASELINE_IN_WORDS
from semsearch.store.file_records import fields_seen, fields_unread, with_text, without_text

if TYPE_CHECKING:
    from semsearch.retrieve.index import Index
    from semsearch.store.meta import IndexMeta


def info_json(index: Index) -> dict:
    meta = index.meta
    files = meta.files
    return {
        "index": str(index.path),
        "docs_root": meta.docs_root,
        "model": meta.model.to_json(),
        "chunking": meta.chunking.to_json(),
        "chunk_budget": chunk_budget(meta),
        "files": len(with_text(files)),
        "chunks": len(index.chunks),
        "gate": gate_json(index),
        "build_gate": meta.margin.to_json(),
        "built_at": meta.built_at,
        "semsearch_version": meta.semsearch_version,
        "excludes": list(meta.excludes),
        "skipped": [{"path": path, "reason": s.reason} for path, s in meta.skipped.items()],
        "without_text": without_text(files),
        "front_matter": fields_seen(files) if index.front_matter_recorded else None,
        "front_matter_unread": fields_unread(files),
        "changed_since_build": index.changed_files(),
    }


def chunk_budget(meta: IndexMeta) -> int:
    """The budget chunks were cut to: the one recorded, or the model's input limit when that is
    less (an index built before a larger ``--max-tokens`` was refused)."""
    budget, limit = meta.chunking.max_tokens, meta.model.max_input_tokens
    return min(budget, limit) if limit is not None else budget


def _budget_words(data: dict) -> str:
    applied, asked = data["chunk_budget"], data["chunking"]["max_tokens"]
    if applied == asked:
        return f"≤ {applied:,} tokens"
    return f"≤ {applied:,} tokens, what the model reads; built with --max-tokens {asked:,}"


def gate_json(index: Index) -> dict:
    """The no-answer gate in force: what its number is, and where it comes from."""
    calibrated = index.meta.calibrated
    in_force = calibrated if calibrated is not None and index.gate.margin == calibrated.value else None
    return {
        "rule": gate_rule(index.gate.legacy),
        "value": round(index.gate.margin, 6),
        "origin": "calibrate" if in_force else "build",
        "calibrated_on": in_force.questions if in_force else None,
    }


def gate_rule(legacy: bool) -> str:
    """What the gate's number is (``gate.rule`` in ``info --json`` and ``eval --json``): a margin
    over each question's baseline, or the cosine floor of an index built before that rule."""
    return "cosine floor (older index)" if legacy else "margin over the off-topic bank"


def gate_words(gate: dict) -> str:
    if gate["rule"].startswith("cosine"):
        number = f"cosine floor {gate['value']:.3f} (index built by an older semsearch)"
    else:
        number = f"margin {gate['value']:+.3f} over each question's baseline ({BASELINE_IN_WORDS})"
    if gate["origin"] == "calibrate":
        return f"{number}, calibrated on {gate['calibrated_on']} labelled questions"
    return f"{number}, derived at build time"


def _fields_words(seen: dict[str, int] | None, unread: list[dict]) -> str:
    """Front-matter fields and how many files have each, for ``--where``, and the files whose
    front matter could not be read (the build warned about each: a field there is not one)."""
    if seen is None:
        return "not recorded (the index predates --where; rebuild it to filter by front matter)"
    named = ", ".join(f"{item['path']}:{item['line']}" for item in unread[:3])
    named += f" and {len(unread) - 3:,} more" if len(unread) > 3 else ""
    has = "has" if len(unread) == 1 else "have"
    unreadable = f"{counted(len(unread), 'file')} {has} front matter that could not be read: {named}"
    if not seen:
        return f"none ({unreadable})" if unread else "none (no file has front matter)"
    fields = ", ".join(f"{name} ({counted(count, 'file')})" for name, count in seen.items())
    return f"{fields}; {unreadable}" if unread else fields


def print_info(index: Index) -> None:
    data = info_json(index)
    _say((index_shown(data["index"]), "bold"), f" for {data['docs_root']}/")
    _say(f"  model      {data['model']['spec']} ({data['model']['dim']} dimensions)")
    content = f"{files_counted(data['files'], len(data['without_text']))}, {counted(data['chunks'], 'chunk')}"
    _say(f"  content    {content} ({_budget_words(data)})")
    _say(f"  no answer  {gate_words(data['gate'])}")
    _say(f"  built      {data['built_at']} by semsearch {data['semsearch_version']}")
    if data["excludes"]:
        _say(f"  excludes   {', '.join(data['excludes'])}")
    for item in data["skipped"]:
        _say(f"  skipped    {item['path']}: {item['reason']}")
    for path in data["without_text"]:
        _say(f"  no text    {path}")
    _say(f"  fields     {_fields_words(data['front_matter'], data['front_matter_unread'])}")
    changed = data["changed_since_build"]
    if not os.path.isdir(data["docs_root"]):
        _say("  ", ("the documents folder no longer exists", "yellow"), f": {data['docs_root']}/")
    elif changed:
        _say("  ", ("changed since the build", "yellow"), f": {', '.join(changed)}")
    else:
        _say("  ", ("up to date", "green"), " with the docs folder")
