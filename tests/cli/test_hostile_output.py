"""Hostile file names, headings and text never steer the terminal (issue 22, finding 2), and odd
arguments and streams end in one line (findings 11 and 12).

Every C0 and C1 control, DEL, the bidi overrides and isolates, and the usual ESC sequences (CSI
clear screen, OSC 8 links, OSC 0 window titles) are put in names, headings and passages; what
``build -v``, ``ask``, ``info``, ``eval`` and the warnings print must hold none of them raw (a line
feed only where a line ends). Rich markup in a name prints as written. JSON keeps the real text.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from semsearch.build.pipeline import build_index
from semsearch.cli.render import build as render_build
from semsearch.cli.render import eval as render_eval
from semsearch.cli.render import info as render_info
from semsearch.cli.render import output as render
from semsearch.cli.render import terminal
from semsearch.collection import Collection
from semsearch.errors import UsageError
from semsearch.evaluation.quality import evaluate
from semsearch.evaluation.questions import Question
from semsearch.retrieve.opening import load_index
from semsearch.retrieve.summary import summarize
from tests.helpers import REPO, semsearch_here, write

RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What must never reach stdout or stderr from a user's files (the tab: Rich expands it)."""
CONTROLS = [chr(c) for c in range(0x20) if c != 0x0A] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)]
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
SEQUENCES = [
    "\x1b[2J\x1b[H",  # clear the screen, cursor home
    "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",  # OSC 8 hyperlink
    "\x1b]0;owned\x07",  # OSC 0 window title
    "\x1b[31mred\x1b[0m",
    "\x9b2J",  # 8-bit CSI
    "\r0.999  forged.md:1  Forged (line 1)",  # a carriage return over the line
    "\u202egnp.exe",
    "\x1bP1$r\x1b\\",  # DCS
]
MARKUP = ["[bold]loud[/bold]", "[link=http://evil.example/]x[/link]", "[/]", ":smile:"]


def hostile(rng: random.Random, name: bool = False) -> str:
    """A short text with controls, ESC sequences, bidi characters and markup mixed into words
    (no ``/`` or NUL in a file name; no line feed in a heading or name)."""
    parts = ["słowo"]
    for _ in range(rng.randint(1, 4)):
        parts.append(
            rng.choice([rng.choice(CONTROLS), rng.choice(BIDI), rng.choice(SEQUENCES), rng.choice(MARKUP)])
        )
        parts.append(rng.choice(["zwrot", "dostawa", "konto", "x"]))
    text = "".join(parts)
    if name:
        text = text.replace("/", "_").replace("\x00", "_")
    return text.replace("\n", " ")


def assert_printable(text: str, what: str) -> None:
    raw = RAW.search(text)
    assert raw is None, f"{what}: raw {raw.group()!r} in {text[max(0, raw.start() - 40) : raw.end() + 40]!r}"


def test_printable_escapes_every_control_and_bidi_character_and_nothing_else():
    from semsearch.util.printable import is_printable, printable

    for character in [c for c in [*CONTROLS, *BIDI] if c != "\t"]:  # a tab is kept (Rich expands it)
        shown = printable(f"a{character}b")
        assert RAW.search(shown) is None and shown != f"a{character}b", repr(character)
        assert shown.startswith("a\\") and shown.endswith("b")
    assert (
        printable("\x1b[2J") == "\\x1b[2J"
        and printable("\u202e") == "\\u202e"
        and printable("\x9b") == "\\x9b"
    )
    assert printable("a\nb") == "a\\x0ab" and printable("a\nb", lines=True) == "a\nb"
    assert printable("a\tb") == "a\tb"
    ordinary = "Zwrot pieniędzy — 14 dni, ½ ceny, 日本語, عربى‎ [bold] ‹›"
    assert printable(ordinary) == ordinary and is_printable(ordinary)


def _hostile_folder(folder: Path, rng: random.Random, files: int) -> list[str]:
    """``files`` Markdown files with hostile names, headings and text; their headings returned."""
    headings = []
    for number in range(files):
        heading = hostile(rng)
        headings.append(heading)
        body = "\n\n".join(f"Zwrot {number} i dostawa paczki, {hostile(rng)} słowa." for _ in range(3))
        write(
            folder / f"{number}{hostile(rng, name=True)}.md",
            f"# {heading}\n\n{body}\n\n## {hostile(rng)}\n\nKonto.\n",
        )
    return headings


@pytest.mark.parametrize(
    ("files", "asks"),
    [(40, 20), pytest.param(120, 60, marks=pytest.mark.slow)],
    ids=["40 files", "120 files"],
)
def test_randomized_hostile_names_headings_and_text_are_printed_escaped(
    tmp_path, fake_embedder, capsys, files, asks
):
    """Hostile names, headings and passages (a few hundred in the slow lane) through every renderer."""
    rng = random.Random(22)
    docs, index_dir = tmp_path / "docs", tmp_path / "index"
    _hostile_folder(docs, rng, files)
    report = build_index(docs, index_dir, embedder=fake_embedder)
    assert report.files + len(report.skipped) == files and report.files > files * 0.9  # a few: binary
    render_build.print_build_summary(report, terminal.SHOWN, verbose=True)
    render_info.print_info(summarize(load_index(index_dir)), [])
    asked = 0
    with Collection(index_dir, embedder=fake_embedder) as collection:
        for _ in range(asks):
            question = f"zwrot dostawa {hostile(rng)}"
            result = collection.search(question, 5, mode=rng.choice(["hybrid", "dense", "keyword"]))
            render.print_result(result, full=rng.random() < 0.5)
            render.missing_names(result, stderr=True)
            asked += 1
        questions = [
            Question(n, hostile(rng), sources=(), kind=hostile(rng)) for n in range(1, asks // 2 + 1)
        ]
        render_eval.print_eval(evaluate(collection, questions, k=3))
    terminal.warning(f"skipped {hostile(rng, name=True)}: {hostile(rng)}")
    terminal.error(hostile(rng))
    out, err = capsys.readouterr()
    assert_printable(out, "stdout")
    assert_printable(err, "stderr")
    assert "\\x1b" in out and "\\u202" in out  # they were there, shown escaped
    assert "[link=http://evil.example/]x[/link]" in out + err  # markup printed as written
    assert not any(line.startswith("0.999  forged.md") for line in (out + err).splitlines())
    print(
        f"\n{files} files (names, headings, passages), {asked} asks, {len(questions)} eval questions",
        file=sys.__stderr__,
    )


def test_json_keeps_the_real_text(tmp_path, fake_embedder, capsys):
    docs, index_dir = tmp_path / "docs", tmp_path / "index"
    write(docs / "a\x1b[2J.md", "# Zwrot \x1b]0;t\x07\n\nZwrot pieniędzy \u202e.\n")
    build_index(docs, index_dir, embedder=fake_embedder)
    with Collection(index_dir, embedder=fake_embedder) as collection:
        result = collection.search("zwrot pieniędzy", 3, mode="keyword")
    render.print_json(render.ask_json("zwrot pieniędzy", result))
    hit = json.loads(capsys.readouterr().out)["results"][0]
    assert (
        hit["source"] == "a\x1b[2J.md" and hit["section"] == "Zwrot \x1b]0;t\x07" and "\u202e" in hit["text"]
    )


def test_a_context_prompt_is_escaped_on_a_terminal_and_real_in_a_pipe(monkeypatch, capsys):
    from semsearch.context.prompt import Prompt

    prompt = Prompt(text="[1] a\x1b[2J.md\nZwrot\n", tokens=5, sources=[], left_out=0)
    render.print_prompt(prompt, terminal.SHOWN)
    assert capsys.readouterr().out == "[1] a\x1b[2J.md\nZwrot\n"
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    render.print_prompt(prompt, terminal.SHOWN)
    assert capsys.readouterr().out == "[1] a\\x1b[2J.md\nZwrot\n"


# Finding 11 and 12: odd arguments and streams, each one line


def run(*args: str, home: Path, env: dict[str, str] | None = None, **options) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(home), "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "semsearch", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        **options,
    )


def run_here(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """As ``run``, in this process (``semsearch_here``)."""
    return semsearch_here(*args, env={"HOME": str(home), "COLUMNS": "200", **(env or {})})


RUNS = [run_here, pytest.param(run, marks=pytest.mark.slow)]
"""In this process (the fast lane), then in a fresh one (``python -m semsearch``)."""
RUN_IDS = ["in process", "a fresh process"]


def one_line(result: subprocess.CompletedProcess, code: int = 2) -> str:
    assert result.returncode == code, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "unexpected" not in lines[0], result.stderr
    return lines[0]


@pytest.fixture
def fake_index(tmp_path, fake_embedder) -> Path:
    docs, index_dir = tmp_path / "docs", tmp_path / "index"
    write(docs / "zwroty.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n\n## Dostawa\n\nDwa dni.\n")
    build_index(docs, index_dir, embedder=fake_embedder)
    return index_dir


@pytest.mark.parametrize("command", RUNS, ids=RUN_IDS)
def test_a_path_of_5000_characters_is_one_line_naming_the_cause(tmp_path, fake_index, command):
    long = "x" * 5000
    for args in (
        ["build", long],
        ["info", "--index", long],
        ["ask", "q", "--index", long],
        ["eval", long, "--index", str(fake_index)],
    ):
        line = one_line(command(*args, home=tmp_path))
        assert "File name too long" in line and "(5,000 characters)" in line and len(line) < 300, line


def test_mcp_says_a_path_is_too_long_as_a_tool_error(fake_index, fake_embedder):
    pytest.importorskip("mcp.server.mcpserver")
    from mcp.server.mcpserver.exceptions import ToolError

    from semsearch.mcp.server import Library

    library = Library(fake_index, embedder=fake_embedder)
    with pytest.raises(ToolError, match=r"File name too long: x+… \(5,000 characters\)"):
        library.get_passage("x" * 5000)
    with pytest.raises(ToolError, match="File name too long"):
        library.search("zwrot", paths=["y" * 5000])
    with pytest.raises(ToolError, match=r"lines from 10{30} \(its indexed text spans lines 3–7"):
        library.get_passage("zwroty.md", start_line=10**30)
    library.close()


@pytest.mark.parametrize("command", RUNS, ids=RUN_IDS)
def test_a_pattern_gitignore_cannot_read_is_a_usage_error(tmp_path, fake_index, fake_embedder, command):
    line = one_line(
        command(
            "build",
            str(tmp_path / "docs"),
            "--index",
            str(tmp_path / "other"),
            "--exclude",
            "!",
            home=tmp_path,
        )
    )
    assert "--exclude '!' is not a .gitignore-style pattern" in line
    with (
        Collection(fake_index, embedder=fake_embedder) as collection,
        pytest.raises(UsageError, match="path pattern"),
    ):
        collection.search("zwrot", paths=["x\\"])
    write(tmp_path / "docs" / ".semsearchignore", "!\n")
    with pytest.raises(UsageError, match=r"\.semsearchignore: .*'!'"):
        build_index(tmp_path / "docs", tmp_path / "third", embedder=fake_embedder)


@pytest.mark.slow  # whole processes: how the interpreter starts is what is tested
def test_a_closed_stdout_or_stderr_is_no_error(tmp_path, fake_index):
    """``>&-``: Python starts with ``sys.stdout`` None; the command runs, its output goes nowhere."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for closing in (">&-", "2>&-"):
        info = f"-m semsearch info --index {shlex.quote(str(fake_index))}"
        command = f"{shlex.quote(sys.executable)} {info} {closing}"
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0 and done.stderr == "", (closing, done.stderr)
    assert "up to date" in run("info", "--index", str(fake_index), home=tmp_path).stdout  # not closed


@pytest.mark.slow  # whole processes: PYTHONIOENCODING is read when the interpreter starts
def test_an_ascii_only_output_escapes_what_it_cannot_encode(tmp_path, fake_index):
    env = {"PYTHONIOENCODING": "ascii"}
    shown = run("info", "--index", str(fake_index), home=tmp_path, env=env)
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    assert "\\u2264 300 tokens" in shown.stdout  # "≤" escaped, the line still printed
    data = run("info", "--index", str(fake_index), "--json", home=tmp_path, env=env)
    assert data.stdout.isascii() and json.loads(data.stdout)["docs_root"].endswith("docs")
    error = run("ask", "zwrot", "--index", str(tmp_path / "nowhere ą"), home=tmp_path, env=env)
    assert "nowhere \\u0105" in one_line(error)


@pytest.mark.parametrize(
    "args",
    [
        ["--install-completion", "nosuchshell"],
        ["--install-completion=nosuchshell"],
        ["--show-completion", "tcsh"],
    ],
)
def test_completion_for_an_unknown_shell_is_refused_and_writes_nothing(tmp_path, args):
    home = tmp_path / "home"
    home.mkdir()
    line = one_line(run(*args, home=home))
    assert "unknown shell" in line and "bash, zsh, fish" in line
    assert list(home.iterdir()) == []


def test_completion_for_a_named_shell_is_that_shell(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    done = run("--install-completion", "zsh", home=home)
    assert done.returncode == 0 and "zsh completion installed" in done.stdout, done.stderr
    assert (home / ".zshrc").is_file() and not (home / ".bashrc").exists()


@pytest.mark.parametrize("question", ["ą" * 10, "ą" * 3000, "a a a a", "ĄĄą ą?"])
def test_one_letter_repeated_is_no_question_whatever_its_length(fake_index, fake_embedder, question):
    with Collection(fake_index, embedder=fake_embedder) as collection:
        with pytest.raises(UsageError, match="no words to search for, only 'ą' repeated|only 'a' repeated"):
            collection.search(question)
        assert collection.search("ąą zwrot").question == "ąą zwrot"  # a real word beside them: searched
        assert collection.search("aa").question == "aa"  # two letters may be a name


def test_a_question_cut_inside_its_one_word_says_how_many_characters_are_searched(capsys):
    render.question_cut("ą" * 3000, "ą" * 1018, 512, terminal.SHOWN)
    assert "only its first 1,018 of its 3,000 characters are searched" in capsys.readouterr().err


@pytest.mark.slow  # the real model, in fresh processes
def test_hostile_folder_through_the_real_cli_prints_nothing_raw(tmp_path):
    """``build -v``, ``ask`` (snippets, --full, --context), ``info`` and ``eval`` of a folder of
    hostile names, headings and text: no raw control character on stdout or stderr."""
    rng = random.Random(2022)
    docs, index = tmp_path / "docs", str(tmp_path / "index")
    headings = _hostile_folder(docs, rng, 8)
    questions = tmp_path / "q.jsonl"
    rows = [{"question": f"zwrot {hostile(rng)}", "source": "x.md", "kind": hostile(rng)} for _ in range(4)]
    questions.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    runs = [
        ["build", str(docs), "--index", index, "-v"],
        ["ask", "zwrot dostawa", "--index", index, "-v"],
        ["ask", "zwrot dostawa", "--index", index, "--full", "-k", "8"],
        ["ask", headings[0], "--index", index],
        ["info", "--index", index],
        ["eval", str(questions), "--index", index],
    ]
    for args in runs:
        done = run(*args, home=tmp_path, env={"SEMSEARCH_INDEX": ""})
        assert done.returncode in (0, 1), (args, done.stderr)
        assert_printable(done.stdout, f"stdout of {args[0]}")
        assert_printable(done.stderr, f"stderr of {args[0]}")
    assert "\\x1b" in done.stdout or "\\u20" in done.stdout


def test_a_line_to_a_pipe_is_written_as_rich_writes_it_there(monkeypatch, capsys):
    """Output that goes to no terminal skips Rich (``terminal._say``): the same characters as
    Rich's console would write, for hostile text, styles, wide and combining characters, spaces
    kept at either end; a tab, which Rich expands to its tab stops, is left to Rich."""
    import io

    from rich.console import Console

    rng = random.Random(7)
    extra = ["日本語", "e\u0301", "  two spaces  ", "\u00a0", "", "a\u200bb", "\t", "x\ty"]
    for _ in range(300):
        parts = [
            (text, rng.choice(["bold", "dim", "bold red"])) if rng.random() < 0.4 else text
            for text in (rng.choice([hostile(rng), rng.choice(extra)]) for _ in range(rng.randint(0, 4)))
        ]
        expected = io.StringIO()
        rich_console = Console(file=expected, highlight=False, soft_wrap=True, markup=False, emoji=False)
        rich_console.print(terminal._line(*parts), style=rng.choice([None, "dim"]))
        terminal._say(*parts)
        terminal._say(*parts, stderr=True)
        out, err = capsys.readouterr()
        assert out == err == expected.getvalue(), parts
    monkeypatch.setenv("FORCE_COLOR", "1")  # asked for styles: Rich writes them
    terminal.console.cache_clear()
    terminal._say(("styled", "bold"))
    assert "\x1b[1m" in capsys.readouterr().out
