"""``semsearch info``: what an index holds and how its no-answer gate was set, for people and --json."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from semsearch.cli.render.output import counted, files_counted
from semsearch.cli.render.terminal import _say, index_shown
from semsearch.gate.threshold import BASELINE_IN_WORDS

if TYPE_CHECKING:
    from semsearch.retrieve.summary import IndexSummary


def info_json(summary: IndexSummary, changed: list[str]) -> dict:
    """``info --json``: the summary, and the files ``changed`` since the build."""
    return {
        "index": summary.path,
        "docs_root": summary.docs_root,
        "model": summary.model.to_json(),
        "chunking": summary.chunking.to_json(),
        "chunk_budget": summary.chunk_budget,
        "files": len(summary.files),
        "chunks": summary.chunks,
        "gate": gate_json(summary),
        "build_gate": summary.build_margin.to_json(),
        "pages": None if summary.pages is None else summary.pages.to_json(),
        "built_at": summary.built_at,
        "semsearch_version": summary.semsearch_version,
        "excludes": list(summary.excludes),
        "skipped": [{"path": path, "reason": reason} for path, reason in summary.skipped.items()],
        "without_text": summary.without_text,
        "front_matter": summary.front_matter,
        "front_matter_unread": summary.front_matter_unread,
        "changed_since_build": changed,
    }


def _budget_words(data: dict) -> str:
    applied, asked = data["chunk_budget"], data["chunking"]["max_tokens"]
    if applied == asked:
        return f"≤ {applied:,} tokens"
    return f"≤ {applied:,} tokens, what the model reads; built with --max-tokens {asked:,}"


def gate_json(summary: IndexSummary) -> dict:
    """The no-answer gate in force: what its number is, and where it comes from."""
    calibrated = summary.calibrated
    return {
        "rule": gate_rule(summary.legacy_gate),
        "value": round(summary.margin, 6),
        "origin": "calibrate" if calibrated else "build",
        "calibrated_on": calibrated.questions if calibrated else None,
    }


def _pages_words(pages: dict | None) -> str:
    """How much the page a passage is on counts in the ranking, and why (see DESIGN.md, Pages)."""
    if pages is None:
        return "not recorded (the index predates page evidence; the next build adds it)"
    share = pages["linked"]
    weight = "counts fully" if share >= 0.995 else "counts little" if share < 0.05 else f"counts {share:.0%}"
    return (
        f"{counted(pages['pages'], 'page')}, {share:.0%} named by another page: "
        f"the page a passage is on {weight} in the ranking"
    )


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


def print_info(summary: IndexSummary, changed: list[str]) -> None:
    data = info_json(summary, changed)
    _say((index_shown(data["index"]), "bold"), f" for {data['docs_root']}/")
    runtime = data["model"].get("runtime")
    by = f"; embedded by {runtime}" if isinstance(runtime, str) else ""
    _say(f"  model      {data['model']['spec']} ({data['model']['dim']} dimensions{by})")
    content = f"{files_counted(data['files'], len(data['without_text']))}, {counted(data['chunks'], 'chunk')}"
    _say(f"  content    {content} ({_budget_words(data)})")
    _say(f"  pages      {_pages_words(data['pages'])}")
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
