"""The commands on an index in Qdrant's local mode (``qdrant:///DIR``), beside the same index in a
folder: the same answers and figures, incremental builds, the alias switch, the lock, and each
fault in one line with exit 2 and nothing lost. With the hashing fake (what the commands do, not
what a model finds: the real model's figures are compared in ``test_qdrant_figures.py``)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from tests.helpers import DATA, FAKE_MODEL, write


@pytest.fixture(autouse=True)
def _client() -> None:
    """Every test here needs the Qdrant client, imported when one runs, not by the module: it
    costs 1.7 s, and collecting the suite (for any lane) imports this file (tests/test_fast_lane.py)."""
    pytest.importorskip("qdrant_client")


runner = CliRunner()


def run(*args: object, env: dict | None = None):
    return runner.invoke(app, [str(a) for a in args], env=env)


def assert_clean_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def url(folder: Path) -> str:
    return f"qdrant://{folder}"


@contextmanager
def opened(folder: Path) -> Iterator:
    """The local store at ``folder`` opened with the Qdrant client itself (what semsearch wrote)."""
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(folder))
    try:
        yield client
    finally:
        client.close()


def chunk_points(client, collection: str = "semsearch") -> list:
    from qdrant_client import models

    kind = models.Filter(must=[models.FieldCondition(key="kind", match=models.MatchValue(value="chunk"))])
    return client.scroll(collection, scroll_filter=kind, limit=100_000, with_payload=True)[0]


def aliased(client) -> str:
    return {a.alias_name: a.collection_name for a in client.get_aliases().aliases}["semsearch"]


QUESTIONS = [
    "Ile kosztuje dostawa do paczkomatu?",
    "Jak zwrócić towar kupiony na raty?",
    "Jaka jest pogoda w Krakowie?",
    "Co oznacza kod PAY-517?",
]


def test_ask_eval_and_info_say_the_same_on_a_folder_and_in_qdrant(fake_sample_index, fake_sample_qdrant):
    for question in QUESTIONS:
        for extra in ([], ["--mode", "dense"], ["--mode", "keyword"], ["--path", "dostawa.md"], ["-k", "5"]):
            folder = run("ask", question, "--index", fake_sample_index, "--json", *extra)
            qdrant = run("ask", question, "--index", fake_sample_qdrant, "--json", *extra)
            assert folder.exit_code == qdrant.exit_code and folder.exit_code in (0, 1), qdrant.output
            assert json.loads(folder.stdout) == json.loads(qdrant.stdout)
    for questions in ("docs_questions.jsonl", "docs_identifier_questions.jsonl"):
        folder = run("eval", DATA / questions, "--index", fake_sample_index, "--json")
        qdrant = run("eval", DATA / questions, "--index", fake_sample_qdrant, "--json")
        assert folder.exit_code == qdrant.exit_code == 0, qdrant.output
        assert json.loads(folder.stdout) == json.loads(qdrant.stdout)
        assert json.loads(qdrant.stdout)["questions"] > 10
    folder_info = json.loads(run("info", "--index", fake_sample_index, "--json").stdout)
    qdrant_info = json.loads(run("info", "--index", fake_sample_qdrant, "--json").stdout)
    assert qdrant_info.pop("index") == fake_sample_qdrant and folder_info.pop("index") == str(
        fake_sample_index
    )
    folder_info.pop("built_at"), qdrant_info.pop("built_at")
    assert folder_info == qdrant_info


def test_context_where_and_the_environment_variable_reach_qdrant(fake_sample_qdrant):
    prompt = run("ask", "Ile kosztuje dostawa?", "--context", env={"SEMSEARCH_INDEX": fake_sample_qdrant})
    assert prompt.exit_code == 0, prompt.output
    assert "dostawa.md" in prompt.stdout
    where = run(
        "ask", "Ile kosztuje dostawa?", "--index", fake_sample_qdrant, "--where", "title=nie-ma", "--json"
    )
    assert_clean_error(where, "title=nie-ma")


def test_an_incremental_build_embeds_only_what_changed_and_removes_what_went(tmp_path):
    docs, store = tmp_path / "docs", tmp_path / "store"
    for name in ("a", "b", "c"):
        write(
            docs / f"{name}.md",
            f"# {name}\n\nTekst pliku {name} o dostawie i zwrotach.\n\n## Dalej\n\nWięcej {name}.\n",
        )
    assert run("build", docs, "--index", url(store), "--model", FAKE_MODEL).exit_code == 0
    with opened(store) as client:
        first, before = aliased(client), {p.id for p in chunk_points(client)}
    write(docs / "a.md", "# a\n\nZmieniony tekst pliku a.\n")
    (docs / "c.md").unlink()
    rebuilt = run("build", "--index", url(store), "--json")
    assert rebuilt.exit_code == 0, rebuilt.output
    report = json.loads(rebuilt.stdout)
    assert report["embedded"] == 1, report  # a.md's one chunk: b.md's were kept, not embedded again
    with opened(store) as client:
        points = chunk_points(client)
        assert aliased(client) == first  # updated in place
    assert sorted({p.payload["source"] for p in points}) == ["a.md", "b.md"]
    kept = {p.id for p in points if p.payload["source"] == "b.md"}
    assert kept and kept <= before  # the same points, untouched
    info = json.loads(run("info", "--index", url(store), "--json").stdout)
    assert info["chunks"] == len(points) == 3
    up_to_date = run("build", "--index", url(store), "--json")
    assert json.loads(up_to_date.stdout)["embedded"] == 0


def test_a_new_chunking_builds_a_new_collection_and_moves_the_alias(tmp_path):
    docs, store = tmp_path / "docs", tmp_path / "store"
    write(docs / "a.md", "# A\n\n" + "Zdanie o dostawie paczek. " * 80 + "\n")
    assert run("build", docs, "--index", url(store), "--model", FAKE_MODEL).exit_code == 0
    with opened(store) as client:
        first = aliased(client)
    again = run("build", "--index", url(store), "--max-tokens", "64")
    assert again.exit_code == 0, again.output
    with opened(store) as client:
        second = aliased(client)
        names = {c.name for c in client.get_collections().collections}
    assert second != first and names == {second}  # the old collection dropped after the switch
    answer = run("ask", "dostawa paczek", "--index", url(store), "--json")
    assert answer.exit_code == 0 and json.loads(answer.stdout)["results"]


def test_a_second_process_is_refused_while_the_store_is_open(fake_sample_qdrant, tmp_path):
    folder = Path(fake_sample_qdrant.removeprefix("qdrant://"))
    with opened(folder):  # another process holding local mode's lock (the lock is per open file)
        busy = run("build", "--index", fake_sample_qdrant)
        assert_clean_error(busy, "another process is using the Qdrant store")
        assert_clean_error(run("ask", "dostawa", "--index", fake_sample_qdrant), "another process is using")
    assert run("ask", "Ile kosztuje dostawa?", "--index", fake_sample_qdrant).exit_code == 0


def test_a_store_changing_while_it_is_opened_is_busy_not_a_traceback(fake_sample_qdrant, monkeypatch):
    """sqlite failing under local mode's open ("disk I/O error", seen once while a build in
    another process had just moved the alias) is the store being written: one line, try again."""
    import sqlite3

    import qdrant_client

    def failing(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(qdrant_client, "QdrantClient", failing)
    assert_clean_error(
        run("ask", "dostawa", "--index", fake_sample_qdrant), "changed while it was being opened"
    )


def test_a_collection_or_folder_semsearch_did_not_make_is_never_overwritten(tmp_path):
    from qdrant_client import models

    docs, store = tmp_path / "docs", tmp_path / "store"
    write(docs / "a.md", "# A\n\nTekst.\n")
    with opened(store) as client:
        client.create_collection("semsearch", vectors_config=models.VectorParams(size=2, distance="Dot"))
        client.upsert("semsearch", points=[models.PointStruct(id=7, vector=[1.0, 0.0], payload={"mine": 1})])
    assert_clean_error(
        run("build", docs, "--index", url(store), "--model", FAKE_MODEL), "not made by semsearch"
    )
    assert_clean_error(run("ask", "tekst", "--index", url(store)), "not made by semsearch")
    with opened(store) as client:
        assert [p.payload for p in client.scroll("semsearch")[0]] == [{"mine": 1}]
        assert {c.name for c in client.get_collections().collections} == {"semsearch"}
    mine = tmp_path / "mine"
    write(mine / "notes.txt", "moje")
    assert_clean_error(
        run("build", docs, "--index", url(mine), "--model", FAKE_MODEL), "not a Qdrant local store"
    )
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    assert_clean_error(run("build", docs, "--index", url(docs / "store"), "--model", FAKE_MODEL), "inside")


def test_a_missing_store_is_an_error_and_is_not_created(tmp_path):
    assert_clean_error(run("ask", "dostawa", "--index", url(tmp_path / "none")), "no index")
    assert_clean_error(run("info", "--index", url(tmp_path / "none")), "no index")
    assert not (tmp_path / "none").exists()


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("qdrant://relative/", "name the collection"),
        ("qdrant:///tmp/x?tls=1", "no TLS"),
        ("qdrant://host:99999/docs", "port"),
        ("qdrant:relative", "not a Qdrant index URL"),
        ("qdrant://host/docs?user=x", "unknown option"),
    ],
)
def test_a_malformed_url_is_one_line(given, said):
    assert_clean_error(run("ask", "dostawa", "--index", given), said)


def test_without_the_client_package_one_line_says_how_to_install_it(fake_sample_qdrant, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "qdrant_client", None)
    assert_clean_error(
        run("ask", "dostawa", "--index", fake_sample_qdrant), "pip install 'semsearch[qdrant]'"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_server_that_cannot_be_reached_is_one_line_and_nothing_is_written(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nTekst.\n")
    where = f"qdrant://127.0.0.1:{_free_port()}/docs"
    assert_clean_error(run("ask", "dostawa", "--index", where), "cannot reach the Qdrant server at 127.0.0.1")
    assert_clean_error(run("build", docs, "--index", where, "--model", FAKE_MODEL), "cannot reach")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_a_server_that_does_not_answer_is_a_timeout(monkeypatch):
    from semsearch.store.qdrant import client

    monkeypatch.setattr(client, "TIMEOUT_SECONDS", 1)
    with socket.socket() as listener:  # accepts connections and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        where = f"qdrant://127.0.0.1:{listener.getsockname()[1]}/docs"
        assert_clean_error(run("ask", "dostawa", "--index", where), "did not answer within 1 s")


class _Answering(BaseHTTPRequestHandler):
    """Answers every request as a Qdrant server does in one case: ``answer`` (status, body), and
    keeps the API keys it was sent."""

    answer: tuple[int, bytes] = (403, b'{"status":{"error":"Invalid api-key"},"time":0.0}')
    keys: list[str | None] = []

    def do_GET(self) -> None:
        self.keys.append(self.headers.get("api-key"))
        status, body = self.answer
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def answering(status: int, body: bytes) -> Iterator[tuple[str, list]]:
    """A listener answering like a Qdrant server (see ``_Answering``): its address, the keys sent."""
    handler = type("Handler", (_Answering,), {"answer": (status, body), "keys": []})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", handler.keys
    finally:
        server.shutdown()
        server.server_close()


def test_a_refused_api_key_says_which_variable_to_set():
    """The HTTP answer of a server with another API key, from a listener of our own (the real
    server's refusal is in ``test_qdrant_server.py``, run when SEMSEARCH_QDRANT_URL is set)."""
    with answering(403, b'{"status":{"error":"Invalid api-key"},"time":0.0}') as (where, keys):
        result = run("ask", "dostawa", "--index", f"qdrant://{where}/docs", env={"QDRANT_API_KEY": "wrong"})
        assert_clean_error(result, "refused the request (403", "QDRANT_API_KEY")
    assert keys == ["wrong"]  # the key went with the request


def test_a_server_too_old_or_without_tls_is_one_line():
    with answering(200, b'{"title":"qdrant - vector search engine","version":"1.5.0"}') as (where, _):
        assert_clean_error(
            run("ask", "dostawa", "--index", f"qdrant://{where}/docs"), "1.5.0", "1.10 or newer"
        )
        assert_clean_error(run("ask", "dostawa", "--index", f"qdrant://{where}/docs?tls=1"), "cannot reach")


def test_calibrate_writes_the_margin_into_the_qdrant_record(tmp_path):
    from semsearch.build.pipeline import build_index
    from tests.helpers import SAMPLE_DOCS

    store = url(tmp_path / "store")
    build_index(SAMPLE_DOCS, store, model=FAKE_MODEL)
    result = run("eval", DATA / "docs_questions.jsonl", "--index", store, "--calibrate", "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(run("info", "--index", store, "--json").stdout)
    assert info["gate"]["origin"] == "calibrate" and info["gate"]["calibrated_on"], info["gate"]


def test_a_killed_builds_collection_is_removed_and_no_other(tmp_path):
    from qdrant_client import models

    from semsearch.store.qdrant.layout import STAGING_ID

    docs, store = tmp_path / "docs", tmp_path / "store"
    write(docs / "a.md", "# A\n\nTekst o dostawie.\n")
    marker = {"kind": "staging", "semsearch": "semsearch-index", "alias": "semsearch"}
    with opened(store) as client:
        for name, payload in (("semsearch-0123456789ab", marker), ("semsearch-ba9876543210", {"mine": 1})):
            client.create_collection(name, vectors_config={})
            client.upsert(name, points=[models.PointStruct(id=STAGING_ID, vector={}, payload=payload)])
    assert run("build", docs, "--index", url(store), "--model", FAKE_MODEL).exit_code == 0
    with opened(store) as client:
        names = {c.name for c in client.get_collections().collections}
        assert names == {aliased(client), "semsearch-ba9876543210"}  # the user's is kept


def test_a_damaged_qdrant_index_is_one_line_and_a_build_makes_it_whole_again(tmp_path):
    from qdrant_client import models

    from semsearch.store.qdrant.layout import META_ID

    docs, store = tmp_path / "docs", tmp_path / "store"
    write(docs / "a.md", "# A\n\nTekst o dostawie.\n\n## B\n\nTekst o zwrotach.\n")
    assert run("build", docs, "--index", url(store), "--model", FAKE_MODEL).exit_code == 0
    with opened(store) as client:
        client.delete("semsearch", points_selector=models.PointIdsList(points=[chunk_points(client)[0].id]))
    assert_clean_error(run("ask", "dostawa", "--index", url(store)), "incomplete")
    assert run("build", "--index", url(store)).exit_code == 0
    assert run("ask", "Tekst o dostawie", "--index", url(store)).exit_code == 0
    with opened(store) as client:
        client.set_payload("semsearch", payload={"meta": "{not json"}, points=[META_ID])
    assert_clean_error(run("info", "--index", url(store)), "unreadable record")
    rebuilt = run("build", docs, "--index", url(store), "--model", FAKE_MODEL)
    assert rebuilt.exit_code == 0, rebuilt.output
    assert run("ask", "Tekst o dostawie", "--index", url(store)).exit_code == 0


def test_a_dry_run_makes_no_store(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nTekst o dostawie.\n")
    dry = run("build", docs, "--index", url(tmp_path / "store"), "--model", FAKE_MODEL, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "nothing written" in dry.stdout and not (tmp_path / "store").exists()


def test_a_readers_stamp_changes_with_each_write_and_not_with_a_read(tmp_path):
    """What the MCP server compares on each call to tell a new index: a server's (the record's
    version and stamp, read without its text, ``record_stamp``) and local mode's (the store's
    files, ``QdrantStore.stamp``), each through a build in place, a calibration and a new collection."""
    from semsearch.store.location import parse_location
    from semsearch.store.qdrant.client import connected
    from semsearch.store.qdrant.layout import META_ID
    from semsearch.store.qdrant.points import record_stamp
    from semsearch.store.stores import open_store

    docs, store = tmp_path / "docs", tmp_path / "store"
    location, index = parse_location(url(store)), open_store(url(store))
    assert index.stamp() is None  # no index yet

    def stamps() -> tuple:
        with connected(location) as client:
            return record_stamp(client, "semsearch"), index.stamp()

    write(docs / "a.md", "# A\n\nPaczki wysyłamy kurierem.\n")
    assert run("build", docs, "--index", url(store), "--model", FAKE_MODEL).exit_code == 0
    built = stamps()
    assert run("ask", "paczki", "--index", url(store)).exit_code in (0, 1)
    assert stamps() == built  # a read changes neither
    write(docs / "b.md", "# B\n\nZwroty przyjmujemy przez 30 dni.\n")
    assert run("build", "--index", url(store)).exit_code == 0  # in place: the same collection
    in_place = stamps()
    assert in_place[0][0] == built[0][0] and in_place[0] != built[0] and in_place[1] != built[1]
    index.replace_meta(index.peek_meta())  # the record alone rewritten, the same text
    calibrated = stamps()
    assert calibrated[0][:2] == in_place[0][:2] and calibrated[0] != in_place[0]
    assert calibrated[1] != in_place[1]
    assert run("build", "--index", url(store), "--full").exit_code == 0  # a new collection
    moved = stamps()
    assert moved[0][0] != calibrated[0][0] and moved[1] != calibrated[1]
    with connected(location) as client:
        assert record_stamp(client, "elsewhere") is None
        client.delete_payload(moved[0][0], keys=["stamp"], points=[META_ID])  # a record from before stamps
        assert record_stamp(client, "semsearch")[:2] == moved[0][:2]
