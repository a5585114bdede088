"""The commands on an index in PostgreSQL (``postgresql://…?schema=NAME``), on a real server
(``postgres_server``: pgserver's, or ``SEMSEARCH_PG_URL``'s), beside the same index in a folder:
the same answers and figures, builds that replace the index in one transaction, the lock, and
each fault in one line with exit 2, nothing lost and no password shown. With the hashing fake
(what the commands do; the real model's figures: ``test_postgres_figures.py``)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from semsearch.store.location import parse_location
from semsearch.store.postgres.layout import PARTS
from tests.helpers import DATA, FAKE_MODEL, FAKE_SITE, REPO, SAMPLE_DOCS, write
from tests.postgres import connected, drop_schema, same, with_schema

runner = CliRunner()


def run(*args: object, env: dict | None = None):
    return runner.invoke(app, [str(a) for a in args], env=env)


def assert_clean_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def tables(url: str) -> list[str]:
    from semsearch.store.location import parse_location

    with connected(url) as connection:
        rows = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1", [parse_location(url).schema]
        ).fetchall()
    return [name for (name,) in rows]


QUESTIONS = [
    "Ile kosztuje dostawa do paczkomatu?",
    "Jak zwrócić towar kupiony na raty?",
    "Jaka jest pogoda w Krakowie?",
    "Co oznacza kod PAY-517?",
]


def test_ask_eval_and_info_say_the_same_on_a_folder_and_in_postgres(fake_sample_index, fake_sample_postgres):
    for question in QUESTIONS:
        for extra in ([], ["--mode", "dense"], ["--mode", "keyword"], ["--path", "dostawa.md"], ["-k", "5"]):
            folder = run("ask", question, "--index", fake_sample_index, "--json", *extra)
            postgres = run("ask", question, "--index", fake_sample_postgres, "--json", *extra)
            assert folder.exit_code == postgres.exit_code and folder.exit_code in (0, 1), postgres.output
            assert same(json.loads(folder.stdout), json.loads(postgres.stdout)), (question, extra)
    for questions in ("docs_questions.jsonl", "docs_identifier_questions.jsonl"):
        folder = run("eval", DATA / questions, "--index", fake_sample_index, "--json")
        postgres = run("eval", DATA / questions, "--index", fake_sample_postgres, "--json")
        assert folder.exit_code == postgres.exit_code == 0, postgres.output
        assert same(json.loads(folder.stdout), json.loads(postgres.stdout))
        assert json.loads(postgres.stdout)["questions"] > 10
    folder_info = json.loads(run("info", "--index", fake_sample_index, "--json").stdout)
    postgres_info = json.loads(run("info", "--index", fake_sample_postgres, "--json").stdout)
    assert postgres_info.pop("index") == str(parse_location(fake_sample_postgres))
    folder_info.pop("index"), folder_info.pop("built_at"), postgres_info.pop("built_at")
    assert folder_info == postgres_info


def test_where_context_and_the_environment_variable_reach_postgres(fake_sample_postgres):
    prompt = run("ask", "Ile kosztuje dostawa?", "--context", env={"SEMSEARCH_INDEX": fake_sample_postgres})
    assert prompt.exit_code == 0, prompt.output
    assert "dostawa.md" in prompt.stdout
    where = run("ask", "Ile kosztuje dostawa?", "--index", fake_sample_postgres, "--where", "title=nie-ma")
    assert_clean_error(where, "title=nie-ma")


def test_a_rebuild_replaces_the_tables_in_one_step_and_an_incremental_one_embeds_what_changed(
    tmp_path, postgres_index
):
    docs = tmp_path / "docs"
    for name in ("a", "b", "c"):
        write(
            docs / f"{name}.md",
            f"# {name}\n\nTekst pliku {name} o dostawie i zwrotach.\n\n## Dalej\n\nWięcej {name}.\n",
        )
    assert run("build", docs, "--index", postgres_index, "--model", FAKE_MODEL).exit_code == 0
    first = tables(postgres_index)
    assert len(first) == 1 + len(PARTS) and "semsearch_index" in first  # the record and one version's tables
    write(docs / "a.md", "# a\n\nZmieniony tekst pliku a.\n")
    (docs / "c.md").unlink()
    rebuilt = run("build", "--index", postgres_index, "--json")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert json.loads(rebuilt.stdout)["embedded"] == 1  # a.md's one chunk: b.md's vectors were reused
    second = tables(postgres_index)
    # the replaced version kept for its readers
    assert len(second) == 1 + 2 * len(PARTS) and set(first) <= set(second)
    info = json.loads(run("info", "--index", postgres_index, "--json").stdout)
    assert info["chunks"] == 3 and info["files"] == 2
    assert json.loads(run("build", "--index", postgres_index, "--json").stdout)["embedded"] == 0
    assert tables(postgres_index) == second  # up to date: nothing written
    assert run("build", "--index", postgres_index, "--full").exit_code == 0
    third = tables(postgres_index)
    assert len(third) == 1 + 2 * len(PARTS)
    assert not set(third) & set(first) - {"semsearch_index"}  # the first dropped


def test_a_schema_semsearch_did_not_make_is_never_written(tmp_path, postgres_index):
    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nTekst.\n")
    with connected(postgres_index) as connection:
        schema = postgres_index.rpartition("schema=")[2]
        connection.execute(f'CREATE SCHEMA "{schema}"')
        connection.execute("CREATE TABLE mine (x integer)")
        connection.execute("INSERT INTO mine VALUES (7)")
    assert_clean_error(run("build", docs, "--index", postgres_index, "--model", FAKE_MODEL), "did not make")
    assert_clean_error(run("ask", "tekst", "--index", postgres_index), "no index")
    assert tables(postgres_index) == ["mine"]
    with connected(postgres_index) as connection:
        connection.execute("CREATE TABLE semsearch_index (singleton boolean PRIMARY KEY, kind text)")
        connection.execute("INSERT INTO semsearch_index VALUES (true, 'someone else')")
    assert_clean_error(run("build", docs, "--index", postgres_index, "--model", FAKE_MODEL), "did not make")
    assert_clean_error(run("ask", "tekst", "--index", postgres_index), "not made by semsearch")
    assert tables(postgres_index) == ["mine", "semsearch_index"]


def test_a_missing_index_is_an_error_and_nothing_is_created(postgres_index):
    assert_clean_error(run("ask", "dostawa", "--index", postgres_index), "no index")
    assert_clean_error(run("info", "--index", postgres_index), "no index")
    assert tables(postgres_index) == []


def test_a_second_build_is_refused_while_one_holds_the_lock(fake_sample_postgres):
    from semsearch.store.stores import open_store

    store = open_store(fake_sample_postgres)
    with store.lock():
        busy = run("build", "--index", fake_sample_postgres)
        assert busy.exit_code == 2 and "another semsearch build is writing" in busy.stderr, busy.output
        assert store.build_running()
    assert not store.build_running()
    assert run("ask", "Ile kosztuje dostawa?", "--index", fake_sample_postgres).exit_code == 0


def test_a_build_killed_while_writing_leaves_the_previous_index_and_the_next_one_completes(
    tmp_path, postgres_index
):
    """kill -9 inside the build's transaction (held open by a child that sleeps once its tables
    are made): the server rolls it back, so the previous index answers as before, and a build
    run again writes the new one."""
    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nTekst o dostawie paczek.\n")
    assert run("build", docs, "--index", postgres_index, "--model", FAKE_MODEL).exit_code == 0
    before = tables(postgres_index)
    write(docs / "b.md", "# B\n\nTekst o zwrotach.\n")
    ready = tmp_path / "writing"
    child = subprocess.Popen(
        [sys.executable, "-c", _SLOW_WRITE, str(docs), postgres_index, str(ready)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(FAKE_SITE), str(REPO)])},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not ready.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists(), child.stderr.read() if child.poll() is not None else "the child never wrote"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    answer = run("ask", "dostawa paczek", "--index", postgres_index, "--json")
    assert answer.exit_code == 0 and json.loads(answer.stdout)["results"][0]["path"].endswith("a.md")
    assert tables(postgres_index) == before
    again = run("build", "--index", postgres_index, "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(run("info", "--index", postgres_index, "--json").stdout)["files"] == 2


_SLOW_WRITE = """
import sys, time
from pathlib import Path
from semsearch.store.postgres import writer
from semsearch.build.pipeline import build_index

made = writer.version_indexes
def slowly(*args):
    Path(sys.argv[3]).write_text("")
    time.sleep(600)
    return made(*args)
writer.version_indexes = slowly
build_index(Path(sys.argv[1]), sys.argv[2])
"""


def test_calibrate_writes_the_margin_into_the_record(postgres_index):
    from semsearch.build.pipeline import build_index

    build_index(SAMPLE_DOCS, postgres_index, model=FAKE_MODEL)
    result = run("eval", DATA / "docs_questions.jsonl", "--index", postgres_index, "--calibrate", "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(run("info", "--index", postgres_index, "--json").stdout)
    assert info["gate"]["origin"] == "calibrate" and info["gate"]["calibrated_on"], info["gate"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_server_that_cannot_be_reached_is_one_line_without_the_password(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nTekst.\n")
    where = f"postgresql://reader:hunter2@127.0.0.1:{_free_port()}/docs?schema=team&connect_timeout=3"
    for result in (
        run("ask", "dostawa", "--index", where),
        run("build", docs, "--index", where, "--model", FAKE_MODEL),
        run("info", "--index", where),
    ):
        assert_clean_error(result, "the PostgreSQL server at 127.0.0.1")
        assert "cannot be reached" in result.output
        assert "hunter2" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_the_password_in_a_url_is_never_printed(tmp_path, postgres_server):
    """pgserver's server trusts local logins: a URL with a password connects, and every output
    names the index without it."""
    if "postgres:@" not in postgres_server:
        pytest.skip("needs pgserver's own server (trust login over its socket)")
    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nTekst o dostawie.\n")
    schema = f"with_password_{os.getpid()}"
    url = with_schema(postgres_server.replace("postgres:@", "postgres:hunter2@"), schema)
    try:
        outputs = [
            run("build", docs, "--index", url, "--model", FAKE_MODEL),
            run("ask", "dostawa", "--index", url, "-v"),
            run("info", "--index", url),
            run("info", "--index", url, "--json"),
            run("ask", "dostawa", "--index", url, "--where", "title=nie-ma"),
        ]
    finally:
        drop_schema(postgres_server, schema)
    for result in outputs:
        assert "hunter2" not in result.output, result.output
    assert "postgres@" in outputs[0].stdout and f"schema={schema}" in outputs[0].stdout


def test_a_dropped_connection_is_reopened_for_the_next_question(fake_sample_postgres, fake_embedder):
    """The server ends a reader's connection (a restart, an administrator): the question after
    it opens a new one."""
    from semsearch.collection import Collection

    with Collection(fake_sample_postgres, embedder=fake_embedder) as collection:
        assert collection.search("Ile kosztuje dostawa?").hits
        with connected(fake_sample_postgres) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'semsearch' AND pid <> pg_backend_pid()"
            )
        assert collection.search("Ile kosztuje dostawa?").hits


def test_without_the_driver_one_line_says_how_to_install_it(fake_sample_postgres, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)
    assert_clean_error(
        run("ask", "dostawa", "--index", fake_sample_postgres), "pip install 'semsearch[postgres]'"
    )


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("postgresql:relative", "not a PostgreSQL URL"),
        ("postgresql://h/db?schema=Team-Docs", "not a plain name"),
        ("postgresql://u:hunter2@h/db#x", "no #fragment"),
    ],
)
def test_a_malformed_url_is_one_line_without_the_password(given, said):
    result = run("ask", "dostawa", "--index", given)
    assert_clean_error(result, said)
    assert "hunter2" not in result.output
