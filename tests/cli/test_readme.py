"""Every ```console example in the project's documents, run for real: README.md, DESIGN.md,
CONTRIBUTING.md and bench/RESULTS.md show what semsearch prints.

Each `$ semsearch ...` line runs through the CLI (ask, info and eval on the sample index built
from docs/; build of a copy of docs/, in the slow lane). What the README shows after it must
match the real output: result lines by location (score within SCORE_TOLERANCE), snippet lines
exactly, "No answer" lines word for word, build lines
except their decimals (time, min score), and the exit code that an `echo "exit $?"` line states
(0 without one). A piped example (`| llm`) runs without the pipe: exit 0 and some output.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from semsearch.store.location import parse_location
from tests.helpers import REPO, SAMPLE_DOCS

README = REPO / "README.md"
DOCUMENTS = [README, REPO / "DESIGN.md", REPO / "CONTRIBUTING.md", REPO / "bench" / "RESULTS.md"]
README_MAX_LINES = 250  # a user's first page; design notes and measurements live elsewhere
SCORE_TOLERANCE = 0.005
RESULT_LINE = re.compile(r"^(\d+\.\d+|exact)  (\S.*)$")
DECIMAL = re.compile(r"\d+\.\d+")
DURATION = re.compile(r"\b(\d+ h \d+ min|\d+ min \d+ s|\d+(\.\d)? s)\b")
"""A time as ``cli/render/durations.py`` writes it (a build's: it moves with the machine)."""
ECHO_EXIT = ["echo", "exit $?"]

runner = CliRunner()


@dataclass
class Example:
    where: str  # "README.md:12": the document (relative to the repository) and its 1-based line
    command: str
    argv: list[str]
    output: list[str] = field(default_factory=list)
    piped: bool = False
    echoes_exit: bool = False

    @property
    def expected_exit(self) -> int:
        stated = [int(m[1]) for line in self.output if (m := re.fullmatch(r"exit (\d+)", line))]
        return stated[-1] if stated else 0

    @property
    def shown(self) -> list[str]:
        """The output the README shows, less the `exit N` line an `echo` printed."""
        return [line for line in self.output if not re.fullmatch(r"exit \d+", line)]


def parse_command(command: str, where: str) -> Example:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";|&")
    lexer.whitespace_split = True
    tokens = list(lexer)
    argv, rest = tokens, []
    for i, token in enumerate(tokens):
        if token in {";", "|", "&&", "||", "&"}:
            argv, rest = tokens[:i], tokens[i:]
            break
    example = Example(where=where, command=command, argv=argv)
    if rest[:1] == [";"] and rest[1:] == ECHO_EXIT:
        example.echoes_exit = True
    elif rest[:1] == ["|"] and len(rest) > 1:
        example.piped = True
    elif rest:
        raise ValueError(f"{where}: no rule to run `{command}`")
    return example


def console_examples(document: Path, root: Path = REPO) -> list[Example]:
    """The ```console examples of one document, each named by its place (`DESIGN.md:87`)."""
    examples: list[Example] = []
    in_console, current = False, None
    name = document.relative_to(root).as_posix()
    for number, line in enumerate(document.read_text(encoding="utf-8").split("\n"), 1):
        if line.startswith("```"):
            in_console, current = line.strip() == "```console", None
        elif in_console and line.startswith("$ "):
            current = parse_command(line[2:], f"{name}:{number}")
            examples.append(current)
        elif in_console:
            assert current is not None, f"{name}:{number}: output before any `$` command"
            current.output.append(line)
    return examples


EXAMPLES = [example for document in DOCUMENTS for example in console_examples(document)]


def params() -> list:
    """One test per example; a build embeds the whole sample (~25 s), so it runs in the slow lane."""
    return [
        pytest.param(
            example,
            id=example.where,
            marks=[pytest.mark.slow] if example.argv[1:2] == ["build"] else [],
        )
        for example in EXAMPLES
    ]


def test_the_readme_has_console_examples_and_each_runs_semsearch():
    assert len([e for e in EXAMPLES if e.where.startswith("README.md:")]) >= 5, EXAMPLES
    for example in EXAMPLES:
        assert example.argv[:1] == ["semsearch"], f"{example.where}: {example.command}"
        assert example.argv[1:2] in (["build"], ["ask"], ["info"], ["eval"]), example.command
        assert not (example.echoes_exit and not any(re.fullmatch(r"exit \d+", x) for x in example.output)), (
            f"{example.where}: echoes the exit code but shows none"
        )


def test_the_design_notes_examples_are_run_too():
    assert any(example.where.startswith("DESIGN.md:") for example in EXAMPLES), [e.where for e in EXAMPLES]


def test_a_console_example_is_found_in_any_document_with_its_place(tmp_path):
    document = tmp_path / "bench" / "RESULTS.md"
    document.parent.mkdir()
    document.write_text("Intro\n\n```sh\n$ make test\n```\n\n```console\n$ semsearch info\nModel: x\n```\n")
    (example,) = console_examples(document, root=tmp_path)
    assert example.where == "bench/RESULTS.md:8"
    assert (example.argv, example.output) == (["semsearch", "info"], ["Model: x"])


def test_an_example_on_postgres_runs_on_the_tests_own_schema(tmp_path):
    document = tmp_path / "README.md"
    document.write_text(
        "```console\n$ semsearch build docs --index 'postgresql://localhost/docs?schema=team_docs'\n"
        "Indexed 1 file into 2 chunks in 3 s → postgresql://localhost/docs?schema=team_docs (1 new)\n"
        "$ semsearch ask x -k 1\n0.900  docs/a.md:1  A (line 1)\n```\n"
    )
    build, ask = console_examples(document, root=tmp_path)
    assert (
        named_postgres(build) == "postgresql://localhost/docs?schema=team_docs"
        and named_postgres(ask) is None
    )
    moved = on_store(build, "postgresql://u:pw@/db?host=/tmp/s&schema=t1")
    assert moved.argv == [
        "semsearch",
        "build",
        "docs",
        "--index",
        "postgresql://u:pw@/db?host=/tmp/s&schema=t1",
    ]
    assert moved.output == [
        "Indexed 1 file into 2 chunks in 3 s → postgresql://u@/db?host=/tmp/s&schema=t1 (1 new)"
    ]
    assert build.argv[-1] == "postgresql://localhost/docs?schema=team_docs"  # the example itself unchanged


def test_the_readme_is_a_users_first_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < README_MAX_LINES, f"README.md has {len(lines)} lines: move details to DESIGN.md"
    headings = {line for line in lines if line.startswith("## ")}
    assert {"## Install", "## Commands", "## Exit codes"} <= headings, sorted(headings)


def test_every_relative_link_in_the_documents_leads_to_a_file():
    broken = []
    for document in DOCUMENTS:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", document.read_text(encoding="utf-8")):
            if not (document.parent / target).exists():
                broken.append(f"{document.relative_to(REPO)}: {target}")
    assert broken == []


def run(example: Example, extra: list[str], env: dict[str, str] | None = None):
    result = runner.invoke(
        app, example.argv[1:] + extra, env={"NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
    )
    assert result.exit_code == example.expected_exit, (
        f"{example.where}: `{example.command}` exited {result.exit_code}, "
        f"the document says {example.expected_exit}\n{result.output}"
    )
    return result


def results(lines: list[str]) -> list[tuple[float | None, str, list[str]]]:
    """(score, location, snippet lines) of each result in printed `ask` output (score None:
    ``exact``, a passage listed first for holding what the question names)."""
    found: list[tuple[float | None, str, list[str]]] = []
    for line in lines:
        if match := RESULT_LINE.match(line):
            found.append((None if match[1] == "exact" else float(match[1]), match[2], []))
        elif found and line.startswith(" ") and line.strip():
            found[-1][2].append(line.strip())
    return found


def assert_snippet_shown(readme: list[str], real: list[str], where: str) -> None:
    """The README shows each result's lines exactly as printed (an outside reader compared them)."""
    assert readme == real, f"{where}: the README shows {readme!r}, semsearch prints {real!r}"


CLOSEST_WORDS = "Closest, below the threshold: "
CLOSEST = re.compile(rf"^{CLOSEST_WORDS}(\S+) .* \(similarity (\d+\.\d+)\)$")


def cosines_of(example: Example, extra: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Each passage's cosine for the example's question, by ``file:line`` (``ask --json``, every
    passage shown): what a "Closest" line may be checked against when two passages tie."""
    argv = [*example.argv[1:], *extra, "--json", "-k", "50", "--min-score", "-1"]
    result = runner.invoke(app, argv, env={"NO_COLOR": "1", **(env or {})})
    assert result.exit_code == 0, result.output
    return {row["file_line"]: row["score"] for row in json.loads(result.stdout)["results"]}


def same_or_tied(line: str, real_line: str, cosines: dict[str, float] | None) -> bool:
    """Whether two "Closest" lines agree: the same passage, or (``cosines`` given) the README's
    passage scoring within SCORE_TOLERANCE of the one printed. The default model's engine rounds
    differently on another CPU (its vectors move by ~1e-4), which can swap two passages that tie."""
    if _masked(line) == _masked(real_line):
        return True
    shown, real = CLOSEST.match(line), CLOSEST.match(real_line)
    if not (shown and real and cosines) or shown[1] not in cosines:
        return False
    return abs(cosines[shown[1]] - float(real[2])) <= SCORE_TOLERANCE


def assert_output_matches(example: Example, stdout: str, cosines: dict[str, float] | None = None) -> None:
    """``cosines``: see ``same_or_tied`` (None: every line as printed)."""
    where = f"{example.where} `{example.command}`"
    shown = [line for line in example.shown if line.strip()]
    real = [line.rstrip() for line in stdout.split("\n") if line.strip()]
    if example.piped:
        assert real, f"{where}: printed nothing"
        return
    if any(line.startswith("No answer") for line in shown):
        assert real[:1] and real[0].startswith("No answer"), f"{where}: expected No answer, got {real}"
    expected_results, real_results = results(shown), results(real)
    assert len(expected_results) == len(real_results), (
        f"{where}: the README shows {len(expected_results)} results, it prints {len(real_results)}"
    )
    for (score, location, snippet), (real_score, real_location, real_snippet) in zip(
        expected_results, real_results, strict=True
    ):
        assert location == real_location, f"{where}: README {location!r}, real {real_location!r}"
        assert (
            (score == real_score)
            if None in (score, real_score)
            else abs(score - real_score) <= SCORE_TOLERANCE
        ), f"{where}: score {score}, real {real_score}"
        assert_snippet_shown(snippet, real_snippet, where)
    others = [line for line in shown if not RESULT_LINE.match(line) and not line.startswith(" ")]
    real_others = [line for line in real if not RESULT_LINE.match(line) and not line.startswith(" ")]
    # Build summaries and "No answer" lines: the same words and counts; decimals may move with
    # the machine: a build's time freely, a threshold or min score within SCORE_TOLERANCE.
    assert len(others) == len(real_others) and all(
        same_or_tied(line, real_line, cosines) for line, real_line in zip(others, real_others, strict=True)
    ), f"{where}:\nREADME {others}\nreal   {real_others}"
    for line, real_line in zip(others, real_others, strict=True):
        scores = [float(x) for x in re.findall(r"\d+\.\d{3}\b", line)]
        real_scores = [float(x) for x in re.findall(r"\d+\.\d{3}\b", real_line)]
        assert all(abs(a - b) <= SCORE_TOLERANCE for a, b in zip(scores, real_scores, strict=True)), (
            f"{where}:\nREADME {line}\nreal   {real_line}"
        )


def _masked(line: str) -> str:
    """A printed line with its times and decimals masked, for comparing words and counts."""
    return DECIMAL.sub("#", DURATION.sub("<time>", line))


def named_postgres(example: Example) -> str | None:
    """The ``postgresql:`` index an example names (``--index postgresql://…``), None when none."""
    return next((token for token in example.argv if token.startswith("postgresql:")), None)


def on_store(example: Example, url: str) -> Example:
    """``example`` with the ``postgresql:`` index it names replaced by ``url`` (the test's own
    schema), in its command and, as semsearch shows it (no password), in what it prints."""
    from semsearch.store.location import parse_location

    named = named_postgres(example)
    assert named is not None, example.where
    argv = [url if token == named else token for token in example.argv]
    shown, said = str(parse_location(named)), str(parse_location(url))
    return replace(example, argv=argv, output=[line.replace(shown, said) for line in example.output])


@pytest.mark.slow
@pytest.mark.parametrize("example", params())
def test_readme_example_is_what_semsearch_prints(example, request, tmp_path, monkeypatch):
    named = named_postgres(example)  # an example on PostgreSQL runs on the test's own schema
    if example.argv[1] == "build":
        # As in the README: the docs folder beside the default index folder, in the current one.
        shutil.copytree(SAMPLE_DOCS, tmp_path / "docs")
        monkeypatch.chdir(tmp_path)
        if named:
            example = on_store(example, request.getfixturevalue("postgres_index"))
        result, cosines = run(example, []), None
    else:
        index = request.getfixturevalue("sample_postgres" if named else "sample_index")
        monkeypatch.chdir(REPO)  # as in the README: in the project folder, beside docs/
        if named:
            example = on_store(example, index)
        extra = [] if named else ["--index", str(index)]
        result = run(example, extra)
        cosines = cosines_of(example, extra) if CLOSEST_WORDS in result.stdout else None
    assert_output_matches(example, result.stdout, cosines)


@pytest.mark.slow
@pytest.mark.parametrize(
    "example",
    [p for p in params() if p.values[0].where.startswith("README.md:") and not named_postgres(p.values[0])],
)
def test_readme_example_prints_the_same_on_a_postgres_index(example, request, tmp_path, monkeypatch):
    """README.md's examples again with ``SEMSEARCH_INDEX=postgresql://…``: what the folder index
    prints, character for character, but where a build names the index."""
    if example.argv[1] == "build":
        shutil.copytree(SAMPLE_DOCS, tmp_path / "docs")
        monkeypatch.chdir(tmp_path)
        url = request.getfixturevalue("postgres_index")
        result = run(example, [], env={"SEMSEARCH_INDEX": url})
        shown = str(parse_location(url))
        assert f"→ {shown} (" in result.stdout, result.stdout
        assert_output_matches(example, result.stdout.replace(f"→ {shown} (", "→ index/ ("))
        return
    monkeypatch.chdir(REPO)
    index = str(request.getfixturevalue("sample_index"))
    folder = run(example, ["--index", index])
    result = run(example, [], env={"SEMSEARCH_INDEX": request.getfixturevalue("sample_postgres")})
    assert result.stdout == folder.stdout
    cosines = cosines_of(example, ["--index", index]) if CLOSEST_WORDS in result.stdout else None
    assert_output_matches(example, result.stdout, cosines)


def python_examples() -> list[str]:
    """The README's ```python blocks."""
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_python_example_runs_against_the_sample_index(fake_sample_index, monkeypatch, capsys):
    examples = python_examples()
    assert examples, "the README shows how to use semsearch from Python"
    monkeypatch.chdir(fake_sample_index.parent)  # the example opens "index"
    for code in examples:
        exec(compile(code, "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("True ") and "reach this question's threshold" in lines[0]
    hits = lines[1:]
    assert 1 <= len(hits) <= 3 and all(re.match(r"0\.\d{3} \S+\.md › ", hit) for hit in hits), lines


def test_make_demo_ends_by_saying_how_to_put_semsearch_on_the_path():
    """The README's examples use a bare `semsearch`; after `make demo` it is in .venv/bin only."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^demo:.*\n((?:\t.*\n)+)", makefile, flags=re.M)
    assert recipe, "no demo target in the Makefile"
    last = recipe[1].splitlines()[-1]
    assert last.startswith("\t@echo ") and "source $(BIN)/activate" in last and "pipx install ." in last, last
    assert "source .venv/bin/activate" in README.read_text(encoding="utf-8")
