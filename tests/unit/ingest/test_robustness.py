"""Hostile folders and input: nothing hangs, nothing tracebacks, every odd file gets a reason.

Commands run in a fresh process with a timeout, so a test of a hang fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from semsearch.ingest.sources import Skipped, discover, read_source
from semsearch.store.file_records import FileRecord
from semsearch.store.staleness import changed_recorded
from tests.helpers import FAKE_MODEL, REPO, semsearch_here, write

TIMEOUT = 90  # seconds: a build of a few files takes ~6 s with the real model on a busy machine


def cli(*args, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """``semsearch ARGS`` in a fresh process, stdout and stderr as text (undecodable bytes replaced)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "semsearch", *(os.fsencode(a) for a in args)],
            capture_output=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`semsearch {' '.join(map(str, args))}` did not finish in {timeout} s")
    out, err = (stream.decode("utf-8", errors="replace") for stream in (done.stdout, done.stderr))
    return subprocess.CompletedProcess(done.args, done.returncode, out, err)


def assert_no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout


def within(seconds: float, function, *args):
    """``function(*args)`` run in a thread; fails (instead of hanging) when it takes longer."""
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(function(*args)), daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"{function.__name__} still running after {seconds} s")
    return outcome[0]


@pytest.fixture
def docs(tmp_path) -> Path:
    folder = tmp_path / "docs"
    write(folder / "good.md", "# Dostawa\n\n## Paczkomat\n\nPaczka do paczkomatu idzie dwa dni robocze.\n")
    return folder


# 1. FIFOs, sockets, devices: skipped with a reason, never opened for a blocking read.


@pytest.fixture
def special_files(docs) -> Path:
    os.mkfifo(docs / "x.md")
    os.mkfifo(docs / "pipe")
    os.symlink("pipe", docs / "link-to-fifo.md")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(docs / "s.md"))
    except OSError:  # path too long for a socket address: the FIFOs still make the point
        pass
    finally:
        sock.close()
    return docs


def test_discover_and_changed_files_skip_fifos_and_sockets(special_files):
    paths, skipped = within(10, discover, special_files)
    assert [p.name for p in paths] == ["good.md"]
    reasons = {s.relative: s.reason for s in skipped}
    assert reasons["x.md"] == "not a regular file (FIFO)"
    assert reasons["link-to-fifo.md"] == "not a regular file (FIFO)"
    if (special_files / "s.md").exists():
        assert reasons["s.md"] == "not a regular file (socket)"
    recorded = {"good.md": FileRecord(size=0, mtime_ns=0)}
    assert within(10, changed_recorded, special_files, recorded.items()) == ["good.md"]


def test_read_source_does_not_wait_on_a_fifo(special_files):
    """A FIFO put in place after discovery: read_source opens it without blocking and skips it."""
    skipped = within(10, read_source, special_files / "x.md", special_files)
    assert skipped == Skipped("x.md", "not a regular file (FIFO)")


@pytest.mark.slow  # real-model builds of odd folders: CI runs them, the fast lane does not
def test_build_ask_and_info_with_a_fifo_in_the_folder(special_files, tmp_path):
    index = tmp_path / "index"
    built = cli("build", special_files, "--index", index, "--json")
    assert built.returncode == 0, built.stderr
    report = json.loads(built.stdout)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    assert skipped["x.md"] == "not a regular file (FIFO)"
    assert skipped["link-to-fifo.md"] == "not a regular file (FIFO)"
    assert report["files"] == 1

    asked = cli("ask", "ile idzie paczka do paczkomatu", "--index", index)
    assert asked.returncode == 0, asked.stderr
    assert "good.md" in asked.stdout
    assert "changed since" not in asked.stderr
    info = json.loads(cli("info", "--index", index, "--json").stdout)
    assert info["changed_since_build"] == []


# 2. Questions longer than the model reads: cut to its input limit (with a note), or refused.


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory) -> Path:
    """Two files indexed with the real default model, once for the module."""
    from semsearch.build.pipeline import build_index

    root = tmp_path_factory.mktemp("tiny")
    write(root / "docs" / "dostawa.md", "# Dostawa\n\n## Paczkomat\n\nPaczka do paczkomatu idzie dwa dni.\n")
    write(root / "docs" / "zwroty.md", "# Zwroty\n\n## Termin\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    build_index(root / "docs", root / "index")
    return root / "index"


WORDS = ["ile", "kosztuje", "dostawa", "paczki", "do", "paczkomatu", "i", "kiedy", "dojdzie"]


def long_question(words: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(words))


@pytest.mark.slow
def test_fit_question_cuts_to_the_models_input_limit_at_a_word_boundary():
    from semsearch.encode.embedders import fit_question, load_embedder

    embedder = load_embedder()
    assert fit_question(embedder, "ile kosztuje dostawa?") == ("ile kosztuje dostawa?", False)
    question = long_question(1500)
    cut, was_cut = fit_question(embedder, question)
    assert was_cut
    assert question.startswith(cut + " ")
    assert embedder.query_tokens(cut) <= embedder.max_input_tokens == 512
    one_more_word = question[: len(cut) + 1 + len(question[len(cut) + 1 :].split()[0])]
    assert embedder.query_tokens(one_more_word) > 512


def test_fit_question_refuses_a_document(fake_embedder):
    from semsearch.encode.embedders import MAX_QUESTION_CHARS, fit_question
    from semsearch.errors import UsageError

    assert fit_question(fake_embedder, "x" * MAX_QUESTION_CHARS) == ("x" * MAX_QUESTION_CHARS, False)
    with pytest.raises(UsageError, match="more than the 20,000 accepted"):
        fit_question(fake_embedder, "x" * (MAX_QUESTION_CHARS + 1))


@pytest.mark.slow
def test_ask_cuts_a_long_question_and_says_so(tiny_index):
    result = cli("ask", long_question(1500), "--index", tiny_index, "--json", timeout=60)
    assert result.returncode in (0, 1), result.stderr
    assert_no_traceback(result)
    assert "the question is longer than the model reads (512 tokens): only its first " in result.stderr
    searched = json.loads(result.stdout)["question"]
    assert f"first {len(searched.split()):,} of its 1,500 words are searched" in result.stderr
    assert long_question(1500).startswith(searched) and len(searched.split()) < 1500


@pytest.mark.slow
def test_ask_refuses_a_question_of_12500_words_at_once(tiny_index):
    result = cli("ask", long_question(12_500), "--index", tiny_index, timeout=60)
    assert result.returncode == 2, result.stderr
    assert_no_traceback(result)
    assert result.stdout == ""
    assert "the question is" in result.stderr and "more than the 20,000 accepted" in result.stderr
    assert result.stderr.strip().count("\n") == 0  # one line


# 3. Symlink loops: build skips them with a reason; ask and info (the staleness check) work.


def make_loops(docs: Path) -> Path:
    os.symlink("loop.md", docs / "loop.md")  # a link to itself
    os.symlink("b.md", docs / "a.md")  # a.md -> b.md -> a.md
    os.symlink("a.md", docs / "b.md")
    (docs / "sub").mkdir()
    os.symlink("../sub/deep.md", docs / "sub" / "deep.md")
    os.symlink("folder-loop", docs / "folder-loop")  # a folder link to itself
    os.symlink("f2", docs / "f1")  # f1 -> f2 -> f1
    os.symlink("f1", docs / "f2")
    os.symlink(".", docs / "sub" / "here")  # a folder link to the folder it is in
    return docs


@pytest.fixture
def loops(docs) -> Path:
    return make_loops(docs)


LOOPS = {"loop.md", "a.md", "b.md", "sub/deep.md"}


def test_discover_skips_symlink_loops(loops):
    paths, skipped = discover(loops)
    assert [p.name for p in paths] == ["good.md"]
    reasons = {s.relative: s.reason for s in skipped}
    assert {path: reasons[path] for path in LOOPS} == dict.fromkeys(LOOPS, "symlink loop, not followed")
    assert reasons["sub/here/"] == "symlinked folder, not followed"
    assert changed_recorded(loops, {"good.md": FileRecord(size=0, mtime_ns=0)}.items()) == ["good.md"]


@pytest.mark.slow  # real-model builds of odd folders: CI runs them, the fast lane does not
def test_build_ask_and_info_with_symlink_loops(docs, tmp_path):
    index = tmp_path / "index"
    assert cli("build", docs, "--index", index).returncode == 0
    make_loops(docs)  # after the build: ask and info meet them in their staleness check

    asked = cli("ask", "ile idzie paczka do paczkomatu", "--index", index)
    assert_no_traceback(asked)
    assert asked.returncode == 0, asked.stderr
    assert "good.md" in asked.stdout and "changed since" not in asked.stderr
    info = cli("info", "--index", index, "--json")
    assert_no_traceback(info)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["changed_since_build"] == []

    built = cli("build", docs, "--index", index, "--json")
    assert_no_traceback(built)
    assert built.returncode == 0, built.stderr
    skipped = {s["path"]: s["reason"] for s in json.loads(built.stdout)["skipped"]}
    assert {path: skipped[path] for path in LOOPS} == dict.fromkeys(LOOPS, "symlink loop, not followed")

    info = cli("info", "--index", index)
    assert info.returncode == 0, info.stderr
    assert "skipped    loop.md: symlink loop, not followed" in info.stdout
    assert "up to date" in info.stdout
    asked = cli("ask", "ile idzie paczka do paczkomatu", "--index", index)
    assert asked.returncode == 0, asked.stderr
    assert "changed since" not in asked.stderr

    rebuilt = cli("build", docs, "--index", index)  # the human summary names each loop
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "skipped a.md: symlink loop, not followed" in rebuilt.stderr


# 4. Names that are not UTF-8: indexed under a readable name (``bad\xff.md``), read by the real one.


def write_bytes_name(folder: Path, name: bytes, text: str) -> None:
    fd = os.open(os.path.join(os.fsencode(folder), name), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8"))


@pytest.fixture
def latin1_names(docs) -> Path:
    write_bytes_name(docs, b"bad\xff.md", "# Zwroty\n\n## Termin\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write_bytes_name(docs, b"caf\xe9.md", "# Kawiarnia\n\nKawa z mlekiem.\n")
    write_bytes_name(docs, b"caf\xe8.md", "# Kawiarnia 2\n\nHerbata z cytryną.\n")
    os.mkdir(os.path.join(os.fsencode(docs), b"d\xe9"))
    write_bytes_name(docs, b"d\xe9/x.md", "# Folder\n\nPlik w folderze o nazwie Latin-1.\n")
    return docs


NAMES = {"bad\\xff.md", "caf\\xe9.md", "caf\\xe8.md", "d\\xe9/x.md", "good.md"}


def test_names_that_are_not_utf8_are_readable_and_read(latin1_names):
    from semsearch.util.printable import readable

    assert readable(os.fsdecode(b"bad\xff.md")) == "bad\\xff.md"
    assert readable("zwrot ąę.md") == "zwrot ąę.md"
    paths, skipped = discover(latin1_names)
    assert skipped == []
    sources = [read_source(path, latin1_names) for path in paths]
    assert {s.relative for s in sources} == NAMES
    bad = next(s for s in sources if s.relative == "bad\\xff.md")
    assert "Zwrot pieniędzy" in bad.text and os.fsencode(bad.path).endswith(b"bad\xff.md")
    json.dumps([s.relative for s in sources], ensure_ascii=False).encode("utf-8")  # no surrogates left


def test_a_readable_name_shared_with_another_file_is_skipped(latin1_names):
    write(latin1_names / "bad\\xff.md", "# Literal\n\nA name with a backslash in it.\n")
    paths, skipped = discover(latin1_names)
    assert [p for p in paths if p.name == "bad\\xff.md"] == [latin1_names / "bad\\xff.md"]  # the UTF-8 one
    assert [(s.relative, s.reason) for s in skipped] == [
        ("b'bad\\xff.md'", "its name is not UTF-8 and reads bad\\xff.md, as another file's does")
    ]


@pytest.mark.slow  # real-model builds of odd folders: CI runs them, the fast lane does not
def test_build_ask_and_info_with_names_that_are_not_utf8(latin1_names, tmp_path):
    index = tmp_path / "index"
    built = cli("build", latin1_names, "--index", index, "--json")
    assert_no_traceback(built)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["files"] == 5
    chunks = json.loads((index / "chunks.json").read_text(encoding="utf-8"))
    assert {c["source"] for c in chunks} == NAMES

    asked = cli("ask", "w jakim terminie zwrot pieniędzy?", "--index", index, "-k", "1")
    assert_no_traceback(asked)
    assert asked.returncode == 0, asked.stderr
    assert "bad\\xff.md:5  Zwroty › Termin (line 5)" in asked.stdout
    assert "changed since" not in asked.stderr
    info = cli("info", "--index", index, "--json")
    assert info.returncode == 0 and json.loads(info.stdout)["changed_since_build"] == []

    os.utime(os.path.join(os.fsencode(latin1_names), b"bad\xff.md"), (1, 1))  # staleness compares names
    asked = cli("ask", "zwrot pieniędzy", "--index", index)
    assert "1 file(s) changed since the index was built (bad\\xff.md)" in asked.stderr


def test_the_stale_warning_looks_for_the_files_by_their_real_names(tmp_path):
    """Every recorded file changed, none removed: ask advises a build. It said "every indexed file
    was removed" when the names were not UTF-8, looking for ``bad\\xff.md`` itself."""
    from typer.testing import CliRunner

    from semsearch.build.pipeline import build_index
    from semsearch.cli.commands import app

    docs = tmp_path / "docs"
    docs.mkdir()
    write_bytes_name(docs, b"bad\xff.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write_bytes_name(docs, b"caf\xe9.md", "# Kawiarnia\n\nKawa z mlekiem.\n")
    build_index(docs, tmp_path / "index", model=FAKE_MODEL)
    for name in (b"bad\xff.md", b"caf\xe9.md"):
        os.utime(os.path.join(os.fsencode(docs), name), (1, 1))
    ask = ["ask", "zwrot pieniędzy", "--index", str(tmp_path / "index")]
    asked = CliRunner().invoke(app, ask)
    assert "2 file(s) changed since the index was built (bad\\xff.md, caf\\xe9.md)" in asked.stderr
    assert "removed" not in asked.stderr
    for name in (b"bad\xff.md", b"caf\xe9.md"):
        os.unlink(os.path.join(os.fsencode(docs), name))
    asked = CliRunner().invoke(app, ask)
    assert "every indexed file was removed" in asked.stderr and "semsearch build" not in asked.stderr


def test_a_docs_folder_whose_own_path_is_not_utf8_is_refused_before_embedding(tmp_path):
    docs = os.path.join(os.fsencode(tmp_path), b"docs\xff")
    os.mkdir(docs)
    write_bytes_name(Path(os.fsdecode(docs)), b"good.md", "# Dostawa\n\nPaczka idzie dwa dni.\n")
    built = cli("build", os.fsdecode(docs), "--index", tmp_path / "index", timeout=30)
    assert_no_traceback(built)
    assert built.returncode == 2, built.stderr
    assert "docs\\xff, is not valid UTF-8" in built.stderr
    assert not (tmp_path / "index").exists()


@pytest.mark.slow  # real-model builds of odd folders: CI runs them, the fast lane does not
def test_json_output_and_questions_with_bytes_that_are_not_utf8(docs, tmp_path):
    index = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"index\xff"))
    built = cli("build", docs, "--index", index, "--json")
    assert_no_traceback(built)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["index"].endswith("index\\xff")
    asked = cli("ask", os.fsdecode(b"paczka do paczkomatu \xff"), "--index", index, "--json")
    assert_no_traceback(asked)
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["question"] == "paczka do paczkomatu \ufffd"


# 5. User text is printed literally, never read as Rich markup (or emoji codes).


@pytest.mark.parametrize(
    "command",
    [semsearch_here, pytest.param(cli, marks=pytest.mark.slow)],
    ids=["in process", "a fresh process"],
)
@pytest.mark.parametrize("index", ["[/x]", "idx[red]", "[bold]idx:smile:"])
def test_an_error_naming_a_path_with_brackets_is_one_literal_line(index, tmp_path, command):
    result = command("ask", "q", "--index", tmp_path / index)
    assert_no_traceback(result)
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"error: no index at {tmp_path / index}/ (no such folder); " + (
        "build one with `semsearch build DOCS --index INDEX`\n"
    )


@pytest.fixture(scope="module")
def markup_folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("markup")
    write(
        root / "docs" / "[bold]x.md",
        "# [red]T\n\n## :smile: [b]B[/b]\n\nPaczka do paczkomatu idzie dwa dni [/].\n",
    )
    write(root / "docs" / "[red]empty.md", "")
    (root / "questions.jsonl").write_text(
        json.dumps({"question": "[red]jaka jest pogoda :smile:", "source": "[/]nowhere.md", "kind": "[b]k"})
        + "\n"
        + json.dumps({"question": "paczka do paczkomatu", "source": "[/]nowhere.md"})
        + "\n",
        encoding="utf-8",
    )
    built = cli("build", root / "docs", "--index", root / "idx[red]")
    assert built.returncode == 0, built.stderr
    assert f"→ {root / 'idx[red]'}/ (1 new" in built.stdout
    assert "warning: skipped [red]empty.md: empty file" in built.stderr
    return root


@pytest.mark.slow  # builds with the real model in a fresh process
def test_ask_prints_file_names_headings_and_snippets_literally(markup_folder):
    result = cli("ask", "paczka do paczkomatu", "--index", markup_folder / "idx[red]", "--min-score", "0")
    assert_no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert "[bold]x.md:5  [red]T › :smile: [b]B[/b] (line 5)" in result.stdout
    assert "Paczka do paczkomatu idzie dwa dni [/]." in result.stdout


@pytest.mark.slow  # builds with the real model in a fresh process
def test_info_and_eval_print_user_text_literally(markup_folder):
    index = markup_folder / "idx[red]"
    info = cli("info", "--index", index)
    assert_no_traceback(info)
    assert info.stdout.startswith(f"{index}/ for ")
    assert "skipped    [red]empty.md: empty file" in info.stdout

    evaluated = cli("eval", markup_folder / "questions.jsonl", "--index", index)
    assert_no_traceback(evaluated)
    assert evaluated.returncode == 0, evaluated.stderr
    for text in ("[red]jaka jest pogoda :smile:", "[/]nowhere.md", "[b]k", "[bold]x.md › [red]T"):
        assert text in evaluated.stdout, text
