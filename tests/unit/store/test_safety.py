"""Users' files are never deleted or changed; index writes never corrupt an index.

Each test here reproduces a finding of an outside probe (issue 11) and failed before its fix.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest
from typer.testing import CliRunner

from semsearch.build.pipeline import build_index
from semsearch.cli.commands import app
from semsearch.collection import Collection
from semsearch.errors import IndexBusyError, IndexChangedError, IndexLocationError, IndexWriteError
from semsearch.retrieve.opening import load_index
from semsearch.store import folder as store
from semsearch.store.folder import index_lock
from semsearch.store.schema import STAGING_MARKER
from tests.helpers import REPO, write

runner = CliRunner()


@pytest.fixture
def docs(tmp_path):
    root = tmp_path / "docs"
    write(root / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write(root / "b.md", "# Dostawa\n\nPaczki wysyłamy w dwa dni robocze.\n")
    return root


def snapshot(folder) -> dict[str, tuple]:
    """Every file and folder under ``folder``: content hash (or link target) and mode."""
    found = {}
    for current, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(current, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[path] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[path] = ("dir", info.st_mode)
            else:
                with open(path, "rb") as handle:
                    found[path] = ("file", info.st_mode, hashlib.sha256(handle.read()).hexdigest())
    return found


def test_a_users_folder_holding_a_meta_json_is_never_replaced(docs, tmp_path, fake_embedder):
    project = tmp_path / "project"
    write(project / "meta.json", '{"name": "my project"}')
    write(project / "notes.txt", "mine")
    before = snapshot(tmp_path)
    with pytest.raises(IndexLocationError, match="not a semsearch index"):
        build_index(docs, project, embedder=fake_embedder)
    result = runner.invoke(app, ["build", str(docs), "--index", str(project)])
    assert result.exit_code == 2 and "refusing to replace it" in result.stderr
    assert snapshot(tmp_path) == before


def test_a_folder_holding_only_a_foreign_meta_json_is_not_an_index(docs, tmp_path, fake_embedder):
    project = tmp_path / "project"
    write(project / "meta.json", json.dumps({"format": 1, "model": "mine"}))  # no semsearch marker
    with pytest.raises(IndexLocationError):
        build_index(docs, project, embedder=fake_embedder)
    assert json.loads((project / "meta.json").read_text()) == {"format": 1, "model": "mine"}


def test_index_dot_in_a_project_folder_is_refused(docs, tmp_path, monkeypatch):
    write(tmp_path / "project" / "meta.json", "{}")
    write(tmp_path / "project" / "src" / "main.py", "print()")
    monkeypatch.chdir(tmp_path / "project")
    before = snapshot(tmp_path)
    result = runner.invoke(app, ["build", str(docs), "--index", "."])
    assert result.exit_code == 2 and "not a semsearch index" in result.stderr
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["build", "docs", "--index", "."])
    assert result.exit_code == 2 and "the documents folder docs is inside the index folder" in result.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("where", ["docs/index", "docs", "docs/sub/index"])
def test_an_index_inside_the_documents_is_refused(docs, tmp_path, fake_embedder, where):
    before = snapshot(tmp_path)
    with pytest.raises(IndexLocationError, match="inside the documents folder") as refused:
        build_index(docs, tmp_path / where, embedder=fake_embedder)
    assert snapshot(tmp_path) == before
    # and says where it may go instead (an Obsidian vault built with `semsearch build .`)
    beside = docs.resolve().parent / f"{docs.name}-index"
    assert str(refused.value).endswith(f"for example --index {beside}")


def test_documents_inside_the_index_folder_are_refused(docs, tmp_path, fake_embedder):
    with pytest.raises(IndexLocationError, match="inside the index folder"):
        build_index(docs, tmp_path, embedder=fake_embedder)


def test_an_index_named_like_a_glob_leaves_other_hidden_folders_alone(docs, tmp_path, fake_embedder):
    write(tmp_path / ".mail.old-2024" / "inbox", "mail")
    write(tmp_path / ".cache.new-x" / "data", "cache")
    write(tmp_path / ".*.new-1234" / "vectors.npy", "named like ours, but no marker")
    before = snapshot(tmp_path)
    build_index(docs, tmp_path / "*", embedder=fake_embedder)
    build_index(docs, tmp_path / "*", embedder=fake_embedder, full=True)  # swaps, cleans leftovers
    after = snapshot(tmp_path)
    assert {path: after[path] for path in before} == before
    assert load_index(tmp_path / "*").chunks


def test_a_rebuild_replaces_an_index_semsearch_wrote(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert store.is_semsearch_index(tmp_path / "index")
    write(docs / "c.md", "# Nowy\n\nNowy plik.\n")
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert {c.source for c in load_index(tmp_path / "index").chunks} == {"a.md", "b.md", "c.md"}
    assert not (tmp_path / "index" / STAGING_MARKER).exists()


def test_an_index_with_a_users_file_added_is_no_longer_replaced(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    write(tmp_path / "index" / "my-notes.md", "I keep notes here")
    write(docs / "c.md", "# Nowy\n\nNowy plik.\n")
    with pytest.raises(IndexLocationError):
        build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert (tmp_path / "index" / "my-notes.md").read_text() == "I keep notes here"


def test_calibrating_during_a_build_never_writes_into_the_new_index(docs, tmp_path, fake_embedder):
    """`eval --calibrate` read the index, a build replaced it meanwhile: the calibration must
    not write its stale meta.json into the new index."""
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    read_before_the_build = load_index(tmp_path / "index")
    write(docs / "c.md", "# Nowy\n\nNowy plik, nowe fragmenty.\n")
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    with pytest.raises(IndexChangedError):
        Collection.opened(read_before_the_build).calibrate(0.5, tmp_path / "q.jsonl", 40)
    index = load_index(tmp_path / "index")
    assert index.meta.chunks == len(index.chunks) == 3
    assert index.meta.calibrated is None


def test_calibrating_while_a_build_holds_the_lock_waits_for_nothing(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    index = load_index(tmp_path / "index")
    with index_lock(tmp_path / "index"), pytest.raises(IndexBusyError):
        Collection.opened(index).calibrate(0.5, tmp_path / "q.jsonl", 40)
    Collection.opened(index).calibrate(0.5, tmp_path / "q.jsonl", 40)
    assert load_index(tmp_path / "index").gate.margin == 0.5


def test_a_calibrated_threshold_survives_builds_that_leave_it_valid(docs, tmp_path, fake_embedder):
    for i in range(30):
        write(docs / f"more-{i}.md", f"# Sekcja {i}\n\nTekst numer {i} o czymś innym.\n")
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    Collection.opened(load_index(tmp_path / "index")).calibrate(0.61, tmp_path / "q.jsonl", 40)

    embedded = fake_embedder.passages_embedded
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)  # nothing changed
    assert report.up_to_date and fake_embedder.passages_embedded == embedded
    assert load_index(tmp_path / "index").gate.margin == report.margin == 0.61

    write(docs / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 30 dni.\n")  # 1 of 32 chunks
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert report.embedded == 1 and not report.warnings
    assert load_index(tmp_path / "index").gate.margin == report.margin == 0.61

    for i in range(10):  # a third of the passages change: the calibration no longer holds
        write(docs / f"more-{i}.md", f"# Sekcja {i}\n\nZupełnie nowa treść {i}.\n")
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert report.warnings == [
        "the calibrated no-answer margin +0.610 was dropped (31% of the passages changed); "
        "the build's own margin applies until you calibrate again"
    ]
    index = load_index(tmp_path / "index")
    assert index.meta.calibrated is None and index.gate.margin == index.meta.margin.value


def test_a_calibrated_threshold_is_dropped_with_the_model(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    Collection.opened(load_index(tmp_path / "index")).calibrate(0.61, tmp_path / "q.jsonl", 40)
    fake_embedder.spec = "fake:other"
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert any("0.610 was dropped (the model changed" in w for w in report.warnings)


def test_an_index_calibrated_by_an_older_semsearch_reads_the_same(docs, tmp_path, fake_embedder):
    """Older indexes kept the calibrated value and the corpus language inside ``min_score``."""
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    path = tmp_path / "index" / "meta.json"
    meta = json.loads(path.read_text())
    build_record = meta.pop("min_score")
    build_record.pop("gate")  # older semsearch: a cosine floor, before the relevance rule
    build_record["corpus_language"] = meta.pop("corpus_language")
    meta["min_score"] = {"value": 0.7, "source": "calibrate", "questions": 40, "build": build_record}
    path.write_text(json.dumps(meta))
    index = load_index(tmp_path / "index")
    assert index.gate.margin == 0.7
    assert index.corpus_language == build_record["corpus_language"]
    embedded = fake_embedder.passages_embedded
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert not report.up_to_date  # the no-answer gate is derived again by the current rule...
    assert fake_embedder.passages_embedded == embedded  # ...from the stored vectors: nothing re-embedded
    assert any("older no-answer rule" in w for w in report.warnings)  # a cosine floor is no cut


def test_a_symlinked_index_is_built_into_its_target(docs, tmp_path, fake_embedder):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    for _ in range(2):  # a first build and a rebuild that swaps
        build_index(docs, tmp_path / "link", embedder=fake_embedder, full=True)
        assert (tmp_path / "link").is_symlink()
        assert os.readlink(tmp_path / "link") == str(tmp_path / "real")
        assert load_index(tmp_path / "real").chunks
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "link", "real"]


def test_a_dangling_index_symlink_is_refused(docs, tmp_path, fake_embedder):
    os.symlink(tmp_path / "nowhere", tmp_path / "link")
    with pytest.raises(IndexLocationError, match="does not exist"):
        build_index(docs, tmp_path / "link", embedder=fake_embedder)


def test_an_index_path_that_is_a_file_is_one_clean_line(docs, tmp_path):
    write(tmp_path / "file", "mine")
    for command in (["build", str(docs)], ["ask", "zwrot"], ["info"]):
        result = runner.invoke(app, [*command, "--index", str(tmp_path / "file")])
        assert result.exit_code == 2, (command, result.output)
        assert "is a file, not an index folder" in result.stderr
        assert result.stderr.strip().count("\n") == 0
    assert (tmp_path / "file").read_text() == "mine"


def test_a_full_disk_keeps_the_previous_index(docs, tmp_path, fake_embedder, monkeypatch):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    before = snapshot(tmp_path)
    write(docs / "c.md", "# Nowy\n\nNowy plik.\n")
    real_save = np.save

    def disk_full(path, *args, **kwargs):
        if str(path).endswith("offtopic.npy"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(path, *args, **kwargs)

    monkeypatch.setattr(np, "save", disk_full)
    with pytest.raises(IndexWriteError, match="No space left on device"):
        build_index(docs, tmp_path / "index", embedder=fake_embedder)
    after = snapshot(tmp_path)
    after.pop(str(docs / "c.md"))
    journal = {path: entry for path, entry in after.items() if ".index.partial" in path}
    assert journal  # what was embedded is kept for the next build
    assert {p: e for p, e in after.items() if p not in journal} == before  # no staging folder, no lock
    monkeypatch.setattr(np, "save", real_save)
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert (report.resumed, report.embedded) == (1, 0)


def test_a_lock_that_cannot_be_created_is_not_reported_as_busy(docs, tmp_path, fake_embedder):
    (tmp_path / ".index.lock").mkdir()  # cannot be opened as a file, whoever runs this
    with pytest.raises(IndexWriteError, match="cannot create the lock file"):
        build_index(docs, tmp_path / "index", embedder=fake_embedder)


def test_index_folders_and_files_follow_the_umask_and_no_lock_file_is_left(docs, tmp_path, fake_embedder):
    old = os.umask(0o022)
    try:
        build_index(docs, tmp_path / "index", embedder=fake_embedder)
        Collection.opened(load_index(tmp_path / "index")).calibrate(0.5, tmp_path / "q.jsonl", 40)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "index").stat().st_mode) == 0o755
    assert {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "index").iterdir()} == {0o644}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "index"]


@pytest.mark.slow  # imports sentence-transformers (~7 s)
def test_ask_never_goes_to_the_network_for_a_hub_model(fake_sample_index, tmp_path):
    """The build downloads a hub model; ask loads it from disk only, and fails fast without it."""
    pytest.importorskip("sentence_transformers")
    index = tmp_path / "index"
    index.mkdir()
    for path in fake_sample_index.iterdir():
        (index / path.name).write_bytes(path.read_bytes())
    meta = json.loads((index / "meta.json").read_text())
    meta["model"]["spec"] = "sentence-transformers:semsearch-tests/no-such-model"
    (index / "meta.json").write_text(json.dumps(meta))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["HF_HOME"] = str(tmp_path / "hf-home")  # an empty cache
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "semsearch", "ask", "zwrot", "--index", str(index)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=600,
    )
    seconds = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert "not on this machine" in result.stderr and "Traceback" not in result.stderr
    # a hub client retrying a closed network waits minutes; loading torch on a busy machine took 68 s
    assert seconds < 240, f"{seconds:.0f} s: it waited on the network"


def test_no_pickle_is_ever_loaded(fake_sample_index, tmp_path):
    index = tmp_path / "index"
    index.mkdir()
    for path in fake_sample_index.iterdir():
        (index / path.name).write_bytes(path.read_bytes())
    np.save(index / "vectors.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    result = runner.invoke(app, ["ask", "zwrot", "--index", str(index)])
    assert result.exit_code == 2 and "vectors.npy" in result.stderr


@pytest.mark.slow  # starts a process per check: CI runs it, the fast lane does not
def test_no_remote_code_and_local_files_only_for_queries(monkeypatch, tmp_path):
    """The sentence-transformers backend never runs a model's own code, and a query-time load
    never fetches (unit test: the constructor's arguments)."""
    st = pytest.importorskip("sentence_transformers")
    seen = {}

    class Recorder:
        def __init__(self, name, **kwargs):
            seen.update(kwargs, name=name)
            raise OSError("stop here")

    monkeypatch.setattr(st, "SentenceTransformer", Recorder)
    from semsearch.encode.embedders import load_embedder
    from semsearch.errors import ModelError

    with pytest.raises(ModelError):
        load_embedder("sentence-transformers:org/model", local_only=True)
    assert seen["local_files_only"] is True and not seen.get("trust_remote_code")
    with pytest.raises(ModelError):
        load_embedder("sentence-transformers:org/model")
    assert seen["local_files_only"] is False and not seen.get("trust_remote_code")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(ModelError):
        load_embedder(f"sentence-transformers:{tmp_path}")  # a folder: never the hub
    assert seen["local_files_only"] is True
    assert "HF_HUB_OFFLINE" not in os.environ  # no process-wide change from a library call


# Found by an outside probe after the first fixes: the names semsearch uses beside the index.


def test_a_users_folder_named_like_the_journal_is_left_alone(docs, tmp_path, fake_embedder):
    write(tmp_path / ".index.partial" / "thesis.md", "my precious")
    write(tmp_path / ".index.partial" / "model.json", '{"mine": 1}')
    before = snapshot(tmp_path / ".index.partial")
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert snapshot(tmp_path / ".index.partial") == before
    assert any("was not made by semsearch: it is left alone" in w for w in report.warnings)
    assert load_index(tmp_path / "index").chunks


def test_a_journal_name_that_is_a_symlink_or_a_file_is_not_followed(docs, tmp_path, fake_embedder):
    write(tmp_path / "important" / "model.json", '{"project": "x"}')
    os.symlink(tmp_path / "important", tmp_path / ".index.partial")
    before = snapshot(tmp_path / "important")
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert snapshot(tmp_path / "important") == before and (tmp_path / ".index.partial").is_symlink()
    write(tmp_path / ".other.partial", "a file of mine")
    build_index(docs, tmp_path / "other", embedder=fake_embedder)
    assert (tmp_path / ".other.partial").read_text() == "a file of mine"


def test_a_users_file_named_like_the_lock_is_neither_removed_nor_followed(docs, tmp_path, fake_embedder):
    write(tmp_path / ".index.lock", "lock notes")
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert (tmp_path / ".index.lock").read_text() == "lock notes"
    os.symlink(tmp_path / "elsewhere", tmp_path / ".other.lock")
    with pytest.raises(IndexWriteError, match="cannot create the lock file"):
        build_index(docs, tmp_path / "other", embedder=fake_embedder)
    assert (tmp_path / ".other.lock").is_symlink() and not (tmp_path / "elsewhere").exists()


def test_a_lock_left_by_a_killed_build_is_reused_and_removed(docs, tmp_path, fake_embedder):
    from semsearch.store.folder import LOCK_MARK

    (tmp_path / ".index.lock").write_bytes(LOCK_MARK)  # as a build killed with -9 leaves it
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert not (tmp_path / ".index.lock").exists()


def test_a_cosine_cutoff_out_of_range_is_a_usage_error(fake_sample_index):
    for value in ("nan", "2", "-1.5"):
        result = runner.invoke(app, ["ask", "zwrot", "--index", str(fake_sample_index), "--min-score", value])
        assert result.exit_code == 2 and "a cosine cutoff is a number from -1 to 1" in result.stderr


def test_an_index_whose_meta_json_is_garbage_is_not_replaced_but_explained(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    (tmp_path / "index" / "meta.json").write_text("{garbage", encoding="utf-8")
    before = snapshot(tmp_path / "index")
    with pytest.raises(
        IndexLocationError, match="looks like a damaged semsearch index .* remove it yourself"
    ):
        build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert snapshot(tmp_path / "index") == before
