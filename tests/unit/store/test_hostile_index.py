"""Indexes that are someone else's, crafted or damaged (issue 22): the nearest index stops at the
user's home and at another owner (4); a crafted docs_root is never walked (5); a poisoned row is
an error, not "No answer", and a poisoned journal shard is embedded again (9); a removal killed
at any step leaves a folder still ours (10); a lock whose mark cannot be written leaves nothing
(12). The randomized damage test is in test_corruption."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from semsearch.build.pipeline import build_index
from semsearch.cli.commands import app
from semsearch.errors import IndexCorruptError, IndexWriteError, ModelError
from semsearch.retrieve import opening
from semsearch.retrieve.opening import load_index
from semsearch.store import folder, nearest
from semsearch.store.file_records import FileRecord
from semsearch.store.journal import Journal, embedding_key
from tests.helpers import REPO, SAMPLE_DOCS, HashingEmbedder, write

runner = CliRunner()
QUESTION = "Ile kosztuje dostawa kurierem?"  # answered on the fake-embedder index of docs/


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    index = tmp_path_factory.mktemp("hostile") / "index"
    build_index(SAMPLE_DOCS, index, embedder=HashingEmbedder())
    return index


@pytest.fixture
def index(built, tmp_path) -> Path:
    import shutil

    copy = tmp_path / "index"
    shutil.copytree(built, copy)
    return copy


@pytest.fixture
def fake_model(monkeypatch):
    monkeypatch.setattr(opening, "load_embedder", lambda spec, local_only=True: HashingEmbedder())


# 4. The nearest index/: not above home, not someone else's


def test_the_nearest_index_is_used_up_to_home_and_said_on_stderr(built, tmp_path, monkeypatch, fake_model):
    import shutil

    home = tmp_path / "home"
    shutil.copytree(built, home / "index")
    deep = home / "projects" / "notes"
    deep.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SEMSEARCH_INDEX", raising=False)
    monkeypatch.chdir(deep)
    asked = runner.invoke(app, ["ask", QUESTION])
    assert asked.exit_code == 0, asked.output
    assert asked.stderr.splitlines() == [
        f"using the index at {home / 'index'}/ (found above the current folder)"
    ]
    quiet = runner.invoke(app, ["ask", QUESTION, "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    monkeypatch.chdir(home)  # home's own index is ./index here: nothing to say
    here = runner.invoke(app, ["ask", QUESTION])
    assert here.exit_code == 0 and here.stderr == ""


def test_an_index_above_home_is_never_used(built, tmp_path):
    """A real run: HOME set in a subprocess, an index planted in the folder above it."""
    import shutil

    shutil.copytree(built, tmp_path / "index")  # planted above home
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    script = (
        "import sys; from pathlib import Path; from semsearch.store.nearest import find_index;"
        "print(find_index(Path(sys.argv[1])))"
    )
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    found = subprocess.run(
        [sys.executable, "-c", script, str(home / "work")], env=env, capture_output=True, text=True
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "None"
    outside = subprocess.run(  # the same tree with HOME elsewhere: the index is found
        [sys.executable, "-c", script, str(home / "work")],
        env={**env, "HOME": str(tmp_path.parent / "elsewhere")},
        capture_output=True,
        text=True,
    )
    assert outside.stdout.strip() == str(tmp_path / "index")


def test_the_search_stops_at_a_folder_or_index_owned_by_someone_else(built, tmp_path, monkeypatch):
    """Owners simulated through the owner lookup, os.lstat's st_uid."""
    import shutil

    shutil.copytree(built, tmp_path / "index")
    start = tmp_path / "shared" / "mine"
    start.mkdir(parents=True)
    monkeypatch.setenv("HOME", "/nonexistent-home")
    assert nearest.find_index(start) == tmp_path / "index"
    real = os.lstat
    others: set[Path] = set()

    def lstat(path, *args, **kwargs):
        info = real(path, *args, **kwargs)
        if Path(path) not in others:
            return info
        return os.stat_result((*info[:4], os.geteuid() + 1, *info[5:]))

    monkeypatch.setattr(os, "lstat", lstat)
    others.add(tmp_path / "shared")  # a folder of someone else's on the way up
    assert nearest.find_index(start) is None
    others.clear()
    others.add(tmp_path / "index")  # the index itself is someone else's
    assert nearest.find_index(start) is None
    others.clear()
    assert nearest.find_index(start) == tmp_path / "index"


# 5. A crafted docs_root: only the recorded files are looked at


def test_a_docs_root_of_slash_is_not_walked_and_lists_nothing_from_outside(index, fake_model):
    meta = json.loads((index / "meta.json").read_text(encoding="utf-8"))
    (index / "meta.json").write_text(json.dumps({**meta, "docs_root": "/"}), encoding="utf-8")
    started = time.monotonic()
    asked = runner.invoke(app, ["ask", QUESTION, "--index", str(index)])
    info = runner.invoke(app, ["info", "--index", str(index), "--json"])
    assert time.monotonic() - started < 5
    assert asked.exit_code == 0, asked.output
    changed = json.loads(info.stdout)["changed_since_build"]
    assert set(changed) == set(meta["files"])  # none of them is under /: all "changed", nothing else


def test_a_big_docs_root_is_not_walked(tmp_path, monkeypatch):
    from semsearch.store.staleness import changed_recorded

    big = tmp_path / "big"
    for i in range(200):
        write(big / f"d{i}" / "x.md", "x")
    write(big / "a.md", "a")
    info = os.stat(big / "a.md")
    calls = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda *a: calls.append(a) or real(*a))
    recorded = {"a.md": FileRecord(size=info.st_size, mtime_ns=info.st_mtime_ns)}
    changed = changed_recorded(big, recorded.items())
    assert changed == [] and calls == []
    assert changed_recorded(big, {"d1/x.md": FileRecord(size=0, mtime_ns=0)}.items()) == ["d1/x.md"]


def test_recorded_paths_that_leave_docs_root_count_as_changed(tmp_path):
    from semsearch.store.staleness import changed_recorded

    docs, outside = tmp_path / "docs", tmp_path / "secret.md"
    write(docs / "a.md", "a")
    write(outside, "s")
    os.symlink(outside, docs / "link.md")
    os.symlink(docs / "a.md", docs / "inside.md")
    os.mkfifo(docs / "fifo.md")
    record = FileRecord(size=1, mtime_ns=os.stat(outside).st_mtime_ns)
    inside = os.stat(docs / "a.md")
    recorded = {
        "../secret.md": record,
        "/etc/passwd": record,
        "link.md": record,
        "fifo.md": FileRecord(size=0, mtime_ns=os.stat(docs / "fifo.md").st_mtime_ns),
        "inside.md": FileRecord(size=inside.st_size, mtime_ns=inside.st_mtime_ns),
        "gone.md": record,
        "skipped-link.md": FileRecord(size=None),
    }
    assert changed_recorded(docs, recorded.items()) == [
        "../secret.md",
        "/etc/passwd",
        "fifo.md",
        "gone.md",
        "link.md",
    ]


# 9. NaN, infinite and zero vectors


@pytest.mark.parametrize("poison", ["one NaN row", "one zero row", "all zero", "NaN keyword weight"])
def test_a_poisoned_index_is_a_damaged_index_error_never_no_answer(index, poison, fake_model):
    if poison == "NaN keyword weight":
        data = np.load(index / "keywords.data.npy")
        data[len(data) // 2] = np.nan
        np.save(index / "keywords.data.npy", data)
    else:
        vectors = np.load(index / "vectors.npy")
        if poison == "one NaN row":
            vectors[len(vectors) // 2] = np.nan
        elif poison == "one zero row":
            vectors[3] = 0
        else:
            vectors[:] = 0
        np.save(index / "vectors.npy", vectors)
    for command in (["ask", QUESTION], ["ask", QUESTION, "--mode", "dense"], ["info"]):
        result = runner.invoke(app, [*command, "--index", str(index)])
        assert result.exit_code == 2, (command, result.output)
        assert result.stderr.startswith("error: ") and result.stderr.strip().count("\n") == 0
        assert "damaged vectors" in result.stderr or "not finite" in result.stderr


def test_a_build_never_writes_a_nan_vector(tmp_path):
    class Broken(HashingEmbedder):
        def embed_passages(self, texts):
            vectors = super().embed_passages(texts)
            vectors[0] = np.nan
            return vectors

    write(tmp_path / "docs" / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write(tmp_path / "docs" / "b.md", "# Dostawa\n\nPaczki wysyłamy w dwa dni.\n")
    with pytest.raises(ModelError, match="NaN, infinite, zero"):
        build_index(tmp_path / "docs", tmp_path / "index", embedder=Broken())
    assert not (tmp_path / "index").exists()


@pytest.mark.parametrize("poison", ["nan", "inf", "zero", "long"])
def test_a_poisoned_journal_shard_is_embedded_again_with_a_warning(tmp_path, poison):
    docs = tmp_path / "docs"
    write(docs / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write(docs / "b.md", "# Dostawa\n\nPaczki wysyłamy w dwa dni.\n")
    index = tmp_path / "index"
    embedder = HashingEmbedder()
    build_index(docs, index, embedder=embedder)
    chunks = load_index(index).chunks
    from semsearch.ingest.chunking import embedding_text

    journal = Journal(index, embedder.spec, embedder.dim)
    texts = [embedding_text(chunk) for chunk in chunks]
    vectors = embedder.embed_passages(texts)
    vectors[0] = {"nan": np.nan, "inf": np.inf, "zero": 0, "long": 3}[poison]
    journal.add([embedding_key(embedder.spec, t) for t in texts], vectors)
    journal.flush()
    (index / "vectors.npy").unlink()  # the previous index cannot be reused: every chunk is fresh
    report = build_index(docs, index, embedder=embedder)
    assert report.resumed == 0 and report.embedded == len(chunks)
    assert any("damaged" in w and "embedded again" in w for w in report.warnings), report.warnings
    rebuilt = load_index(index)  # checked at load: no bad row
    assert np.allclose(np.linalg.norm(rebuilt.vectors, axis=1), 1, atol=1e-3)


def test_a_journal_shard_that_is_not_a_regular_file_is_skipped_not_waited_on(tmp_path):
    embedder = HashingEmbedder()
    journal = Journal(tmp_path / "index", embedder.spec, embedder.dim)
    journal.add(["k" * 64], embedder.embed_passages(["zwrot pieniędzy"]))
    journal.flush()
    shard = next(journal.folder.glob("*.npy"))
    shard.unlink()
    os.mkfifo(shard)
    keys = next(journal.folder.glob("*.keys"))
    keys.rename(keys.with_name("x.keys"))
    os.symlink("/dev/zero", keys)
    started = time.monotonic()
    assert journal.load() == {} and journal.resumable() == set()
    assert time.monotonic() - started < 5


# 10. A removal killed after any unlink leaves a folder still ours


class _Killed(BaseException):
    pass


def _kill_after(monkeypatch, steps: int) -> list[int]:
    """os.unlink and os.rmdir succeed ``steps`` times, then the process is 'killed' (the lock's
    own removal is let through: a killed process's lock is released by the kernel, and this one
    lives on). Returns the count of removals done, in a list."""
    done = [0]
    for name in ("unlink", "rmdir"):
        real = getattr(os, name)

        def step(path, *args, real=real, **kwargs):
            if str(path).endswith(".lock"):
                return real(path, *args, **kwargs)
            if done[0] >= steps:
                raise _Killed
            done[0] += 1
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, step)
    return done


def _journal_removals_killed(tmp_path: Path, monkeypatch, every: int) -> None:
    """A journal's removal killed after 0, ``every``, 2 x ``every``, … of its removals (up to 11):
    the next build finishes it, and says nothing of folders not made by semsearch."""
    docs = tmp_path / "docs"
    write(docs / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    embedder = HashingEmbedder()
    files = None
    for steps in range(0, 12, every):
        index = tmp_path / f"index{steps}"
        journal = Journal(index, embedder.spec, embedder.dim)
        for i in range(3):
            journal.add([f"{i:064x}"], embedder.embed_passages([f"tekst {i}"]))
            journal.flush()
        files = files or len(os.listdir(journal.folder)) + 1  # and the folder
        with monkeypatch.context() as patch:
            _kill_after(patch, steps)
            with suppress(_Killed):
                journal.discard()
        assert journal.folder.exists() == (steps < files), steps
        report = build_index(docs, index, embedder=embedder)
        assert not any("not made by semsearch" in w for w in report.warnings), (steps, report.warnings)
        assert not journal.folder.exists(), steps
    assert files and files > 3


def test_a_journal_removal_killed_at_any_step_is_finished_by_the_next_build(tmp_path, monkeypatch):
    """At every other step (each one in the slow twin)."""
    _journal_removals_killed(tmp_path, monkeypatch, every=2)


@pytest.mark.slow
def test_a_journal_removal_killed_at_each_step_is_finished_by_the_next_build(tmp_path, monkeypatch):
    _journal_removals_killed(tmp_path, monkeypatch, every=1)


def _rebuilds_killed_after_removals(tmp_path: Path, monkeypatch, every: int) -> int:
    """A full rebuild over an index, killed after its removal number 0, ``every``, 2 x ``every``,
    … until one is not killed; after each, the next build must leave nothing but the index.
    Returns how many removals the rebuild makes: the count the steps went through."""
    docs = tmp_path / "docs"
    write(docs / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write(docs / "b.md", "# Dostawa\n\nPaczki wysyłamy w dwa dni.\n")
    embedder = HashingEmbedder()
    built = tmp_path / "built" / "index"
    build_index(docs, built, embedder=embedder)  # each step starts from a copy of this index
    for steps in range(0, 60, every):
        root = tmp_path / f"r{steps}"
        index = root / "index"
        shutil.copytree(built, index)
        with monkeypatch.context() as patch:
            done = _kill_after(patch, steps)
            try:
                build_index(docs, index, embedder=embedder, full=True)
            except _Killed:
                pass
            else:
                return done[0]
        report = build_index(docs, index, embedder=embedder, full=True)
        assert not any("not made by semsearch" in w for w in report.warnings), (steps, report.warnings)
        assert os.listdir(root) == ["index"], (steps, os.listdir(root))
        load_index(index)
    raise AssertionError("a rebuild killed after 60 removals and more")


def test_a_rebuild_killed_after_any_removal_is_cleaned_up_by_the_next_build(tmp_path, monkeypatch):
    """The old index swapped out, the journal, the marker: killed after every third removal (each
    one in the slow twin), the next build leaves nothing but the index, and says nothing of
    folders not made by semsearch."""
    assert _rebuilds_killed_after_removals(tmp_path, monkeypatch, every=3) > 10  # files, marker, folder


@pytest.mark.slow
def test_a_rebuild_killed_after_each_removal_is_cleaned_up_by_the_next_build(tmp_path, monkeypatch):
    assert _rebuilds_killed_after_removals(tmp_path, monkeypatch, every=1) > 10


def test_an_empty_folder_of_a_name_semsearch_never_gives_is_left_alone(tmp_path):
    write(tmp_path / "docs" / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    names = [".index.new-mine", ".index.old-0123abcd-x", ".index.partial-not"]
    for name in names:
        (tmp_path / name).mkdir()
    build_index(tmp_path / "docs", tmp_path / "index", embedder=HashingEmbedder())
    assert sorted(os.listdir(tmp_path)) == sorted([*names, "docs", "index"])


# 12. A lock whose mark cannot be written (disk full) leaves nothing


def test_a_lock_that_cannot_be_marked_leaves_no_file(tmp_path):
    """A real failed write: a file-size limit of 0 bytes (EFBIG, as a full disk gives ENOSPC)."""
    script = f"""
import resource, signal, sys
from pathlib import Path
from semsearch.store.folder import index_lock
from semsearch.errors import IndexWriteError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
try:
    with index_lock(Path({str(tmp_path / "index")!r})):
        sys.exit("locked")
except IndexWriteError as exc:
    print(exc)
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0 and "cannot create the lock file" in result.stdout, result
    assert os.listdir(tmp_path) == []
    with folder.index_lock(tmp_path / "index"):  # the next build locks and cleans up as usual
        assert os.listdir(tmp_path) == [".index.lock"]
    assert os.listdir(tmp_path) == []


def test_a_lock_that_is_a_fifo_is_an_error_not_a_wait(tmp_path):
    os.mkfifo(tmp_path / ".index.lock")
    started = time.monotonic()
    with pytest.raises(IndexWriteError, match="FIFO"), folder.index_lock(tmp_path / "index"):
        pass
    assert not folder.build_running(tmp_path / "index")
    assert time.monotonic() - started < 5


def test_vectors_linked_to_dev_zero_are_not_called_pickled(index):
    (index / "vectors.npy").unlink()
    os.symlink("/dev/zero", index / "vectors.npy")
    with pytest.raises(IndexCorruptError, match="symbolic link") as raised:
        load_index(index)
    assert "pickle" not in str(raised.value)


def test_an_array_header_numpy_cannot_parse_is_a_damaged_index(index, fake_model):
    """numpy reads the header as a Python literal: an unclosed one raises TokenError."""
    header = b"{'descr': '<u4', 'fortran_order': False, 'shape': (3,"
    header += b" " * (118 - len(header)) + b"\n"
    (index / "chunks.crc32.npy").write_bytes(
        b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
    )
    result = runner.invoke(app, ["ask", QUESTION, "--index", str(index)])
    assert result.exit_code == 2 and "chunks.crc32.npy is unreadable" in result.stderr, result.output
    assert "unexpected" not in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize("language", ["", "xx-nonsense-but-no-stemmer", 7])
def test_a_keyword_language_that_is_not_the_recorded_stemmers_is_a_damaged_index(index, language, fake_model):
    meta = json.loads((index / "meta.json").read_text(encoding="utf-8"))
    meta["keywords"]["language"] = language
    (index / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    result = runner.invoke(app, ["ask", QUESTION, "--index", str(index), "--mode", "keyword"])
    assert result.exit_code == 2 and "'keywords'" in result.stderr, result.output
