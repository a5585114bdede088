"""What a build did, for its summary line, ``--json`` and ``--verbose`` (``BuildReport``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from semsearch.build.files import FileOutcome
from semsearch.ingest.sources import Skipped


@dataclass(frozen=True)
class Changes:
    new: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0

    @property
    def any(self) -> bool:
        return bool(self.new or self.changed or self.removed)


@dataclass(frozen=True)
class EstimateBasis:
    """What a dry run's estimate assumed: the speed measured on ``timed_chunks`` of the folder's
    own chunks, on this machine now (``cores`` it may use, the load average then)."""

    timed_chunks: int
    cores: int
    load: float | None
    """The one-minute load average when timed (None where the system does not say)."""


@dataclass
class BuildReport:
    index_dir: Path
    files: int
    chunks: int = 0
    seconds: float = 0.0
    margin: float = 0.0
    """The threshold in force after the build (a kept calibrated one, or the build-time one)."""
    warnings: list[str] = field(default_factory=list)
    """Files indexed after a repair (e.g. invalid UTF-8 replaced), a dropped calibration."""
    skipped: list[Skipped] = field(default_factory=list)
    changes: Changes = field(default_factory=Changes)
    full_reason: str | None = None
    """Why nothing could be reused from the previous index (None: no previous index, or reused)."""
    rechunked: bool = False
    """With ``full_reason``: only the chunking changed, so passages whose text did not change kept
    their vectors (every file was chunked again, not every passage embedded again)."""
    embedded: int = 0
    """Chunks embedded (with ``dry_run``: chunks a build would embed)."""
    resumed: int = 0
    """Chunks whose vectors an interrupted earlier build had already embedded."""
    tokens: int = 0
    """Tokens of the chunks embedded (cl100k_base), the measure of embedding work."""
    runtime: str | None = None
    """What ran the model for the chunks embedded (``onnxruntime 1.30.0``; None: not said)."""
    runtime_refused: str | None = None
    """Why the faster runtime was not used (onnxruntime missing...; None: it was, or none exists)."""
    up_to_date: bool = False
    dry_run: bool = False
    estimated_seconds: float | None = None
    """With ``dry_run``: how long a build would take (reading and splitting, embedding, calibrating)."""
    estimate_basis: EstimateBasis | None = None
    """With ``dry_run``: what ``estimated_seconds`` assumed."""
    busy: bool = False
    """With ``dry_run``: another build is writing the index now (its journal still grows)."""
    outcomes: list[FileOutcome] = field(default_factory=list)
    """Every file met, with what became of it (``build --verbose``)."""
    excluded: list[str] = field(default_factory=list)
    """Markdown files and folders ``--exclude`` or ``.semsearchignore`` left out (folders end in /)."""
    without_text: list[str] = field(default_factory=list)
    """Files read but holding no text to index (not counted in ``files``; listed in ``skipped``)."""
