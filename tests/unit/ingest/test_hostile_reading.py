"""Reading a hostile docs folder (issue 22): links swapped in during a build, links to hidden or
excluded paths, files too big to read. Real files and links; the hashing fake embedder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from semsearch.build.embedding import Step
from semsearch.build.pipeline import build_index
from semsearch.ingest.sources import LARGEST_FILE_BYTES, Skipped, list_files, read_source
from semsearch.retrieve.opening import load_index

SECRET = "SEKRET-7f3a ssh config"


@pytest.fixture
def folders(tmp_path) -> tuple[Path, Path]:
    """A docs folder with a few files, and an outside folder holding a secret."""
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    (docs / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "config.md").write_text(f"# Host\n\n{SECRET}\n", encoding="utf-8")
    (docs / "a.md").write_text("# A\n\nZwrot pieniędzy w ciągu 14 dni.\n", encoding="utf-8")
    (docs / "sub" / "b.md").write_text("# B\n\nPaczka do paczkomatu.\n", encoding="utf-8")
    (docs / "sub" / "c.md").write_text("# C\n\nKurier przyjedzie jutro.\n", encoding="utf-8")
    os.symlink("sub/c.md", docs / "link.md")
    return docs, outside


def indexed_text(index_dir: Path) -> str:
    """Everything the index keeps of the files: chunk texts, headings and meta.json."""
    index = load_index(index_dir)
    texts = [chunk.text + " ".join(chunk.headings) for chunk in index.chunks]
    return "\n".join(texts) + json.dumps(index.meta.to_json(), ensure_ascii=False)


def swap_after_listing(swap):
    """A build's progress callback that calls ``swap`` once, when the files have been listed
    and before any is read (the window the issue's attacker used)."""

    def progress(step: Step) -> None:
        if step.phase == "finding" and step.total is not None:
            swap()

    return progress


def _replace_by_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    os.symlink(target, path)


SWAPS = {
    "a file by a link": lambda docs, outside: _replace_by_link(docs / "a.md", outside / "config.md"),
    "a folder by a link": lambda docs, outside: _replace_by_link(docs / "sub", outside),
    "a link retargeted": lambda docs, outside: _replace_by_link(docs / "link.md", outside / "config.md"),
}


@pytest.mark.parametrize("swap", SWAPS, ids=list(SWAPS))
def test_a_link_swapped_in_between_listing_and_reading_is_never_followed(
    folders, tmp_path, fake_embedder, swap
):
    docs, outside = folders
    (outside / "b.md").write_text(f"# B\n\n{SECRET}\n", encoding="utf-8")  # sub/b.md when sub swaps
    (outside / "c.md").write_text(f"# C\n\n{SECRET}\n", encoding="utf-8")
    report = build_index(
        docs,
        tmp_path / "index",
        embedder=fake_embedder,
        progress=swap_after_listing(lambda: SWAPS[swap](docs, outside)),
    )
    assert SECRET not in indexed_text(tmp_path / "index")
    assert report.files >= 1  # the files nobody touched are still indexed
    if swap == "a link retargeted":  # the file checked at listing is the one read
        assert "Kurier przyjedzie jutro" in indexed_text(tmp_path / "index")
    else:
        reasons = {skipped.relative: skipped.reason for skipped in report.skipped}
        assert any("symlink was put on its path" in reason for reason in reasons.values()), reasons


def test_read_source_reads_what_was_listed_not_what_is_there_now(folders):
    docs, outside = folders
    listed, _ = list_files(docs)
    by_name = {item.path.relative_to(docs).as_posix(): item for item in listed}
    _replace_by_link(docs / "a.md", outside / "config.md")
    _replace_by_link(docs / "link.md", outside / "config.md")
    swapped = read_source(by_name["a.md"].path, docs, by_name["a.md"].target)
    assert isinstance(swapped, Skipped) and "symlink was put on its path" in swapped.reason
    retargeted = read_source(by_name["link.md"].path, docs, by_name["link.md"].target)
    assert retargeted.text == (docs / "sub" / "c.md").read_text(encoding="utf-8")
    now = read_source(docs / "link.md", docs)  # no listing: where it leads now, refused
    assert now == Skipped("link.md", "symlink to outside the docs folder, not followed")


@pytest.fixture
def linked_to_the_unindexed(folders) -> Path:
    """Links inside the docs folder to hidden and excluded files inside it."""
    docs, _ = folders
    for folder in (".hidden", "drafts", "private"):
        (docs / folder).mkdir()
        (docs / folder / "x.md").write_text(f"# {folder}\n\n{SECRET} {folder}\n", encoding="utf-8")
    (docs / ".secret.md").write_text(f"# s\n\n{SECRET} hidden file\n", encoding="utf-8")
    (docs / "sub" / "skip-me.md").write_text(f"# s\n\n{SECRET} excluded file\n", encoding="utf-8")
    (docs / ".semsearchignore").write_text("drafts/\nskip-me.md\n", encoding="utf-8")
    links = {
        "to-hidden-folder.md": ".hidden/x.md",
        "to-hidden-file.md": ".secret.md",
        "to-ignored-folder.md": "drafts/x.md",
        "to-ignored-file.md": "sub/skip-me.md",
        "to-excluded-folder.md": "private/x.md",
        "sub/up-to-hidden.md": "../.hidden/x.md",
        "chain.md": "to-hidden-file.md",  # a link to a link to a hidden file
        "to-ignore-file.md": ".semsearchignore",
    }
    for name, target in links.items():
        os.symlink(target, docs / name)
    return docs


def test_links_to_hidden_or_excluded_paths_are_not_followed(linked_to_the_unindexed, tmp_path, fake_embedder):
    docs = linked_to_the_unindexed
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder, excludes=["private/"])
    assert SECRET not in indexed_text(tmp_path / "index")
    reasons = {skipped.relative: skipped.reason for skipped in report.skipped}
    hidden = [
        "to-hidden-folder.md",
        "to-hidden-file.md",
        "sub/up-to-hidden.md",
        "chain.md",
        "to-ignore-file.md",
    ]
    assert {name: reasons.get(name) for name in hidden} == dict.fromkeys(
        hidden, "symlink to a hidden file or folder, not followed"
    )
    assert reasons["to-ignored-folder.md"] == "symlink to an excluded path (drafts/x.md), not followed"
    assert reasons["to-ignored-file.md"] == "symlink to an excluded path (sub/skip-me.md), not followed"
    assert reasons["to-excluded-folder.md"] == "symlink to an excluded path (private/x.md), not followed"
    assert "link.md" in load_index(tmp_path / "index").meta.files  # a link to an indexed file still is


def test_a_file_over_the_largest_size_is_skipped_with_the_reason(folders, tmp_path, fake_embedder):
    docs, _ = folders
    with open(docs / "huge.md", "wb") as handle:  # sparse: no disk, no time
        handle.truncate(LARGEST_FILE_BYTES + 1)
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    reasons = {skipped.relative: skipped.reason for skipped in report.skipped}
    assert reasons["huge.md"] == "larger than 32 MiB (32.0 MiB), not read"
    skipped = load_index(tmp_path / "index").meta.skipped["huge.md"]
    assert skipped.size == LARGEST_FILE_BYTES + 1  # recorded: info lists it, a change is seen
    assert report.files == 4


def test_a_file_of_the_largest_size_is_read(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    text = "# Duży\n\n" + "słowo " * ((LARGEST_FILE_BYTES - 20) // 7)
    (docs / "big.md").write_text(text, encoding="utf-8")
    assert (docs / "big.md").stat().st_size <= LARGEST_FILE_BYTES
    read = read_source(docs / "big.md", docs)
    assert not isinstance(read, Skipped) and read.text == text


HOSTILE_PATTERN = "*a*a*a*a*a*a*a*a*a*a*a*a*z"
"""27 bytes that a backtracking match takes hours on against ``HOSTILE_NAME`` (issue 39)."""
HOSTILE_NAME = "a" * 40 + ".md"


def test_a_pattern_that_would_backtrack_hangs_no_build_and_no_search(folders, tmp_path, fake_embedder):
    """``--exclude``, a line of ``.semsearchignore`` and ``--path`` (the library's ``paths``,
    which ask and MCP pass on) against a name of 40 a's: each returns at once."""
    from semsearch.collection import Collection
    from semsearch.errors import UsageError
    from tests.helpers import finishes_within

    docs, _ = folders
    (docs / HOSTILE_NAME).write_text("# A\n\nDługa nazwa pliku.\n", encoding="utf-8")
    with finishes_within(20):
        report = build_index(docs, tmp_path / "index", embedder=fake_embedder, excludes=[HOSTILE_PATTERN])
        assert report.files == 5
        (docs / ".semsearchignore").write_text(f"{HOSTILE_PATTERN}\n", encoding="utf-8")
        assert build_index(docs, tmp_path / "dry", embedder=fake_embedder, dry_run=True).files == 5
        with Collection(tmp_path / "index", embedder=fake_embedder) as collection:
            with pytest.raises(UsageError, match="no indexed file matches"):
                collection.search("nazwa", paths=[HOSTILE_PATTERN])
            assert collection.search("nazwa", paths=["*a*a*a*a*a*a*a*.md"]).question == "nazwa"


def _ignore_file_as(docs: Path, outside: Path, kind: str) -> None:
    """``.semsearchignore`` that is not the folder's own file: a link out of the folder (to a
    file whose lines would leave a.md out, to /proc, to /dev/zero), a FIFO."""
    ignore = docs / ".semsearchignore"
    if kind == "fifo":
        os.mkfifo(ignore)
        return
    target = {"outside": outside / "ignore", "proc": Path("/proc/self/pagemap"), "zero": Path("/dev/zero")}[
        kind
    ]
    (outside / "ignore").write_text("a.md\nsub/\n", encoding="utf-8")
    os.symlink(target, ignore)


@pytest.mark.parametrize("kind", ["outside", "proc", "zero", "fifo"])
def test_an_ignore_file_that_is_not_the_folders_own_is_not_read(folders, tmp_path, fake_embedder, kind):
    from tests.helpers import finishes_within

    docs, outside = folders
    _ignore_file_as(docs, outside, kind)
    with finishes_within(20, "reading the ignore file"):
        report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert report.files == 4 and report.excluded == []  # no line of it applied: a.md and sub/ indexed
    said = [w for w in report.warnings if ".semsearchignore" in w]
    reason = "FIFO" if kind == "fifo" else "leads outside the documents folder"
    assert len(said) == 1 and reason in said[0] and said[0].endswith("not read"), report.warnings


def test_an_ignore_file_is_read_within_bounds_and_says_what_it_left(folders, tmp_path, fake_embedder):
    from semsearch.ingest.ignorefile import IGNORE_FILE_BYTES, IGNORE_FILE_PATTERNS

    docs, _ = folders
    many = [f"nothing-{n}.md" for n in range(IGNORE_FILE_PATTERNS)] + ["a.md"]
    (docs / ".semsearchignore").write_text(
        "# comment\n\nsub/c.md\n" + "\n".join(many) + "\n", encoding="utf-8"
    )
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert report.excluded == ["sub/c.md"]  # a.md, the 1,002nd pattern, is not applied
    assert f"holds 1,002 patterns: only its first {IGNORE_FILE_PATTERNS:,} are applied" in " ".join(
        report.warnings
    )
    with open(docs / ".semsearchignore", "w", encoding="utf-8") as handle:
        handle.write("sub/c.md\n" + "#" * IGNORE_FILE_BYTES + "\na.md\n")
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder, dry_run=True)
    assert report.excluded == ["sub/c.md"]
    assert "is over 1 MiB: only its first 9 bytes are read" in " ".join(report.warnings)
