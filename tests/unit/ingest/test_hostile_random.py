"""Randomized hostile docs folders (issue 22, Done when): links to outside, to hidden and to
excluded paths (direct, relative, chained), links and FIFOs swapped in while a build runs, FIFOs
and /dev/zero or /dev/urandom links as .md files, dangling links and loops, deep nesting, YAML
alias bombs, files over the size limit. Every forbidden file holds a marker; it must never reach a
chunk, a front matter field or any file of the index, every run ends within a time bound, and
memory stays within a bound over all runs. Real files; the hashing fake embedder.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from semsearch.build import pipeline as build
from semsearch.build import splitting
from semsearch.build.embedding import Step
from semsearch.build.pipeline import build_index
from semsearch.ingest.sources import LARGEST_FILE_BYTES
from tests.helpers import HashingEmbedder, write

FORBIDDEN = "xqzforbid"
"""In every file that must not be indexed (checked lowercased: stemming keeps it)."""
ALLOWED = "xqzallowed"
SECONDS_PER_RUN = 30
MEMORY_GROWTH_MB = 600


@dataclass
class Case:
    docs: Path
    excludes: list[str]
    allowed: dict[str, str] = field(default_factory=dict)
    """Relative path -> the marker of an allowed file nothing touches during the build."""
    swaps: list = field(default_factory=list)
    """Done once the files have been listed, before any is read."""


def _forbidden(rng: random.Random, path: Path, tag: str) -> Path:
    write(path, f"# Tajne {tag}\n\n{FORBIDDEN}{tag} {rng.choice(['hasło', 'klucz', 'token'])}\n")
    return path


def _bomb(rng: random.Random) -> str:
    """Front matter past the bounds, holding the marker: a billion laughs, a recursive alias or
    deep nesting. Its fields must never be recorded."""
    kind = rng.choice(["laughs", "laughs", "recursive", "deep"])
    if kind == "recursive":
        lines = [f"{FORBIDDEN}: &r [*r, *r]"]
    elif kind == "deep":
        lines = [f"{FORBIDDEN}: " + "[" * 80 + "]" * 80]
    else:
        levels, width = rng.randint(6, 10), rng.randint(6, 10)
        lines = [f"a0: &a0 [{', '.join([f'{FORBIDDEN}bomb'] * width)}]"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "---\n" + "\n".join(lines) + "\n---\n\n"


def _forbidden_targets(rng: random.Random, docs: Path, outside: Path) -> list[Path]:
    """Files a link may not lead to: outside, hidden, excluded (by the ignore file or --exclude)."""
    places = [
        outside / "config.md",
        outside / "deep" / "x.md",
        docs / ".hidden" / "h.md",
        docs / ".h.md",
        docs / "sub" / ".cache" / "c.md",
        docs / "drafts" / "d.md",
        docs / "secret" / "s.md",
        docs / "notes" / "n.private.md",
        docs / "notes" / "ignored" / "i.md",
    ]
    return [_forbidden(rng, place, f"{n}") for n, place in enumerate(places)]


def _folders(rng: random.Random, docs: Path) -> list[Path]:
    nested = docs.joinpath(*[f"d{i}" for i in range(rng.randint(1, 40))])
    return [docs, docs / "sub", docs / "notes", nested]


def make_case(rng: random.Random, root: Path) -> Case:
    docs, outside = root / "docs", root / "outside"
    by_ignore_file = rng.random() < 0.5
    case = Case(docs, ["secret/"] + ([] if by_ignore_file else ["notes/ignored/"]))
    targets = _forbidden_targets(rng, docs, outside)
    write(
        docs / ".semsearchignore", "drafts/\n*.private.md\n" + ("notes/ignored/\n" if by_ignore_file else "")
    )
    folders = _folders(rng, docs)
    for n in range(rng.randint(3, 12)):
        relative = (rng.choice(folders) / f"doc{n}.md").relative_to(docs).as_posix()
        head = _bomb(rng) if rng.random() < 0.2 else ""
        write(docs / relative, f"{head}# Dokument {n}\n\n{ALLOWED}{n} paczka kurier zwrot\n")
        case.allowed[relative] = f"{ALLOWED}{n}"
    for n in range(rng.randint(2, 10)):
        _hostile_entry(rng, rng.choice(folders) / f"link{n}.md", rng.choice(targets), docs)
    for _ in range(rng.randint(0, 3)):
        _plan_swap(rng, case, targets, outside)
    write(docs / "keep.md", f"# Zostaje\n\n{ALLOWED}keep paczkomat\n")  # never swapped: a build has text
    case.allowed["keep.md"] = f"{ALLOWED}keep"
    return case


def _hostile_entry(rng: random.Random, path: Path, target: Path, docs: Path) -> None:
    """A link to a forbidden file (absolute, relative, or through another link), a FIFO, a
    device link, a dangling link, a loop, a folder link to outside, or a sparse huge file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    kind = rng.choice(
        ["absolute", "relative", "chain", "fifo", "zero", "urandom", "dangling", "loop", "folder", "huge"]
    )
    if kind == "absolute":
        os.symlink(target, path)
    elif kind == "relative":
        os.symlink(os.path.relpath(target, path.parent), path)
    elif kind == "chain":
        middle = path.with_name(path.stem + "-via.md")
        os.symlink(target, middle)
        os.symlink(middle.name, path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind in ("zero", "urandom"):
        os.symlink(f"/dev/{kind}", path)
    elif kind == "dangling":
        os.symlink(docs / "nowhere.md", path)
    elif kind == "loop":
        os.symlink(path.name, path)
    elif kind == "folder":
        os.symlink(target.parent, path.with_suffix(""))
    else:
        with open(path, "wb") as handle:
            handle.write(f"# Wielki\n\n{FORBIDDEN}huge\n".encode())
            handle.truncate(LARGEST_FILE_BYTES + 1)


def _plan_swap(rng: random.Random, case: Case, targets: list[Path], outside: Path) -> None:
    """Once listed, an allowed file (or its folder) becomes a link to a forbidden file, a FIFO or
    a /dev/zero link."""
    if not case.allowed:
        return
    relative = rng.choice(sorted(case.allowed))
    path, target = case.docs / relative, rng.choice(targets)
    kind = rng.choice(["file", "file", "fifo", "zero", "folder"])
    if kind == "folder" and path.parent != case.docs:
        folder = path.parent
        for name in [n for n in case.allowed if (case.docs / n).is_relative_to(folder)]:
            del case.allowed[name]
        case.swaps.append(lambda: (shutil.rmtree(folder), os.symlink(outside, folder)))
        return
    del case.allowed[relative]

    def swap() -> None:
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        else:
            os.symlink("/dev/zero" if kind == "zero" else target, path)

    case.swaps.append(swap)


class Spy:
    """What a build's reading side produced: every chunk and every file's front matter."""

    def __init__(self, monkeypatch):
        self.texts: list[str] = []
        real_chunk, real_front_matter = splitting.chunk_document, build.current_front_matter

        def chunk_document(*args, **kwargs):
            document = real_chunk(*args, **kwargs)
            self.texts += [chunk.text + " ".join(chunk.headings) for chunk in document.chunks]
            self.texts.append(document.title)
            return document

        def current_front_matter(*args, **kwargs):
            found = real_front_matter(*args, **kwargs)
            self.texts.append(json.dumps(found.record(), ensure_ascii=False))
            return found

        monkeypatch.setattr(splitting, "chunk_document", chunk_document)
        monkeypatch.setattr(build, "current_front_matter", current_front_matter)


def run_case(seed: int, root: Path, monkeypatch, full: bool) -> None:
    rng = random.Random(seed)
    case = make_case(rng, root)
    spy = Spy(monkeypatch)

    def progress(step: Step) -> None:
        if step.phase == "finding" and step.total is not None:
            for swap in case.swaps:
                swap()

    started = time.perf_counter()
    index = root / "index"
    build_index(
        case.docs,
        index,
        embedder=HashingEmbedder(),
        excludes=case.excludes,
        progress=progress,
        dry_run=not full,
    )
    seconds = time.perf_counter() - started
    assert seconds < SECONDS_PER_RUN, f"seed {seed}: {seconds:.1f} s"
    produced = "\n".join(spy.texts).lower()
    assert FORBIDDEN not in produced, f"seed {seed}: a forbidden file was indexed"
    assert all(marker in produced for marker in case.allowed.values()), (
        f"seed {seed}: an allowed file is missing"
    )
    if full:
        for path in index.iterdir():
            assert FORBIDDEN.encode() not in path.read_bytes().lower(), f"seed {seed}: {path.name}"
        chunks = (index / "chunks.json").read_text(encoding="utf-8")
        assert all(marker in chunks for marker in case.allowed.values())


def run_cases(seeds: range, full_every: int, tmp_path: Path, monkeypatch) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for seed in seeds:
        root = tmp_path / f"case{seed}"
        with monkeypatch.context() as patch:
            run_case(seed, root, patch, full=seed % full_every == 0)
        shutil.rmtree(root)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < MEMORY_GROWTH_MB, f"peak memory grew {grown_mb:.0f} MB"


def test_hostile_folders_never_leak_hang_or_blow_up(tmp_path, monkeypatch):
    """20 folders (every 10th built for real, the others dry runs that read and chunk)."""
    run_cases(range(20), 10, tmp_path, monkeypatch)


@pytest.mark.slow
def test_hostile_folders_never_leak_hang_or_blow_up_many(tmp_path, monkeypatch):
    """330 more folders (every 10th built for real)."""
    run_cases(range(20, 350), 10, tmp_path, monkeypatch)
