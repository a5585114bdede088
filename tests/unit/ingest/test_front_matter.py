"""Front matter as per-file metadata: read as the chunker sees it, stored by a build (also into
an index that predates it), a broken block a warning with its line; --quiet and --verbose."""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest
from typer.testing import CliRunner

from semsearch.build.pipeline import build_index
from semsearch.cli.commands import app
from semsearch.cli.render.info import info_json
from semsearch.ingest.frontmatter import front_matter_block, read_front_matter
from semsearch.ingest.markdown import parse_markdown
from semsearch.retrieve.opening import load_index
from semsearch.retrieve.summary import summarize
from tests.helpers import write

runner = CliRunner()

UMOWA = """---
type: umowa
year: 2024
tags: [faq, prawo]
date: 2024-05-01
lang: pl
---
# Umowa najmu

Najemca płaci czynsz do 10. dnia każdego miesiąca. Kaucja wynosi dwa czynsze.
"""
REGULAMIN = """---
type: regulamin
year: 2022
tags:
  - prawo
date: 2022-01-10
---
# Regulamin

Czynsz za lokal użytkowy płatny jest z góry do piątego dnia miesiąca.
"""
BROKEN = """---
type: umowa
year: [2023
---
# Zepsuta

Opłata za media rozliczana jest co kwartał.
"""
PLAIN = "# Bez metadanych\n\nCzynsz można zapłacić przelewem lub gotówką w biurze.\n"


def write_sample(folder):
    """Four files: two with front matter, one broken, one without."""
    for name, text in {
        "umowa.md": UMOWA,
        "regulamin.md": REGULAMIN,
        "broken.md": BROKEN,
        "plain.md": PLAIN,
    }.items():
        write(folder / name, text)
    return folder


@pytest.fixture
def docs(tmp_path):
    return write_sample(tmp_path / "docs")


PIECES = [
    "---",
    "----",
    "--",
    "...",
    "... ",
    "  ---",
    "    ---",
    "\t---",
    "--- x",
    "---  ",
    "a: 1",
    "",
    "# H",
    "```",
]


@pytest.mark.parametrize(
    ("longest", "sampled"),
    [(2, 300), pytest.param(3, 1000, marks=pytest.mark.slow)],
    ids=["up to two lines", "up to three lines"],
)
def test_the_block_is_the_one_the_chunker_leaves_out(longest, sampled):
    """Same block as markdown-it's front matter rule, over every arrangement of up to ``longest``
    tricky lines (three, 2,954 of them, in the slow lane) and a fixed random sample of longer ones."""
    chance = random.Random(20261202)
    every = [lines for count in range(1, longest + 1) for lines in itertools.product(PIECES, repeat=count)]
    arrangements = every + [chance.choices(PIECES, k=chance.randint(4, 6)) for _ in range(sampled)]
    for lines in arrangements:
        text = "\n".join(["---", *lines]) + "\ntext\n"
        block = front_matter_block(text)
        assert (block[0] if block else None) == parse_markdown(text).front_matter, text
    assert len(every) == sum(len(PIECES) ** count for count in range(1, longest + 1))
    assert front_matter_block("# Title\n---\na: 1\n---\n") is None


def test_values_become_what_json_holds():
    text = (
        "\ufeff---\r\ndate: 2024-05-01\r\nat: 2024-05-01 10:30:00\r\nyear: 2024\r\nratio: .nan\r\n"
        "nothing:\r\ndraft: no\r\nauthor:\r\n  name: Ala\r\n  born: 1990\r\n"
        "tags: [a, [b, c], null, {x: 1}]\r\n"
        "2024: rok\r\n---\r\n# T\r\n"
    )
    assert read_front_matter(text).fields == {
        "date": "2024-05-01",
        "at": "2024-05-01T10:30:00",
        "year": 2024,
        "draft": False,
        "author.name": "Ala",
        "author.born": 1990,
        "tags": ["a", "b", "c"],
        "2024": "rok",
    }


@pytest.mark.parametrize(
    "text, line, problem",
    [
        (BROKEN, 3, "not valid YAML"),
        ("---\n- a\n- b\n---\n", 2, "a list, not a mapping"),
        ("---\ntitle: ok\nbad: : :\n  - x\n---\n", 3, "not valid YAML"),
        ("---\n!!python/object:os.system x: 1\n---\n", 2, "not valid YAML"),  # safe_load refuses
        # dates that cannot exist (an outside probe: each stopped the whole build)
        ("---\ndate: 2024-13-45\n---\n", 2, "not valid YAML (month must be in 1..12)"),
        ("---\ndate: 2024-02-30\n---\n", 2, "not valid YAML (day is out of range for month)"),
        ("---\nwhen: 2024-01-01 25:00:00\n---\n", 2, "not valid YAML (hour must be in 0..23)"),
    ],
)
def test_a_broken_block_gives_no_fields_and_says_where(text, line, problem):
    front_matter = read_front_matter(text)
    assert front_matter.fields == {} and front_matter.line == line and problem in front_matter.problem


def test_a_build_stores_the_fields_and_warns_with_the_file_and_line(docs, tmp_path, fake_embedder):
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert report.files == 4  # the broken file is indexed, without fields
    assert [w for w in report.warnings if "front matter" in w] == [
        "broken.md:3: front matter is not valid YAML (expected ',' or ']', but got '<stream end>'); "
        "the file is indexed without its fields"
    ]
    index = load_index(tmp_path / "index")
    files = index.meta.to_json()["files"]
    assert files["umowa.md"]["front_matter"] == {
        "type": "umowa",
        "year": 2024,
        "tags": ["faq", "prawo"],
        "date": "2024-05-01",
        "lang": "pl",
    }
    assert "front_matter" not in files["plain.md"] and "front_matter" not in files["broken.md"]
    fields = info_json(summarize(index), [])["front_matter"]
    assert fields == {"date": 2, "tags": 2, "type": 2, "year": 2, "lang": 1}
    assert all("type:" not in chunk.text for chunk in index.chunks)  # metadata, not text
    again = build_index(docs, tmp_path / "index", embedder=fake_embedder)  # kept, and warned again
    assert again.up_to_date and load_index(tmp_path / "index").meta == index.meta
    assert any(w.startswith("broken.md:3: ") for w in again.warnings)


def test_an_edited_front_matter_is_read_again(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    write(docs / "broken.md", BROKEN.replace("[2023", "[2023]"))
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert report.changes.changed == 1 and not any("front matter" in w for w in report.warnings)
    assert load_index(tmp_path / "index").meta.files["broken.md"].front_matter.fields["year"] == [2023]


def test_an_index_from_before_front_matter_gains_it_on_a_rebuild_that_embeds_nothing(
    docs, tmp_path, fake_embedder
):
    index_dir = tmp_path / "index"
    build_index(docs, index_dir, embedder=fake_embedder)
    meta = json.loads((index_dir / "meta.json").read_text())
    del meta["front_matter"]
    for record in meta["files"].values():
        record.pop("front_matter", None)
        record.pop("front_matter_problem", None)
    (index_dir / "meta.json").write_text(json.dumps(meta))
    old = load_index(index_dir)
    assert not old.front_matter_recorded and info_json(summarize(old), [])["front_matter"] is None
    result = runner.invoke(app, ["ask", "czynsz", "--index", str(index_dir), "--where", "type=umowa"])
    assert result.exit_code == 2
    assert "predates front-matter filters" in result.stderr and "rebuild" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

    vectors = (index_dir / "vectors.npy").read_bytes()
    embedded = fake_embedder.passages_embedded
    report = build_index(docs, index_dir, embedder=fake_embedder)
    assert report.up_to_date and report.embedded == 0 and fake_embedder.passages_embedded == embedded
    assert (index_dir / "vectors.npy").read_bytes() == vectors
    rebuilt = load_index(index_dir)
    assert (
        rebuilt.front_matter_recorded
        and rebuilt.meta.files["regulamin.md"].front_matter.fields["year"] == 2022
    )
    mask = rebuilt.allowed_rows((), ["type=umowa"])
    assert {rebuilt.chunks[row].source for row in np.flatnonzero(mask)} == {"umowa.md"}


@pytest.mark.parametrize("condition", ["type", "type>umowa", "=x", "year<"])
def test_a_bad_where_is_a_one_line_usage_error(condition, tmp_path):
    result = runner.invoke(app, ["ask", "czynsz", "--index", str(tmp_path / "none"), "--where", condition])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: Invalid value for --where: "), lines


@pytest.mark.slow
def test_build_quiet_and_verbose(docs, tmp_path):
    index = str(tmp_path / "index")
    verbose = runner.invoke(app, ["build", str(docs), "--index", index, "--verbose"])
    assert verbose.exit_code == 0, verbose.output
    assert verbose.stdout.startswith("Indexed 4 files into 4 chunks")
    listed = [line for line in verbose.stderr.splitlines() if line.startswith("new ")]  # not progress
    assert listed == [
        "new        broken.md: 1 chunk",
        "new        plain.md: 1 chunk",
        "new        regulamin.md: 1 chunk; front matter: type, year, tags, date",
        "new        umowa.md: 1 chunk; front matter: type, year, tags, date, lang",
    ]
    assert "warning: broken.md:3: front matter is not valid YAML" in verbose.stderr
    (docs / "plain.md").unlink()
    write(docs / "empty.md", "")
    quiet = runner.invoke(app, ["build", str(docs), "--index", index, "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout.startswith("Indexed 3 files into 3 chunks")
    verbose = runner.invoke(app, ["build", str(docs), "--index", index, "-v"])
    assert "removed    plain.md" not in verbose.stderr  # removed by the quiet build already
    assert (
        "skipped    empty.md: empty file" in verbose.stderr
        and "unchanged  umowa.md: 1 chunk" in verbose.stderr
    )
    assert "warning: skipped" not in verbose.stderr  # listed once, with the other files
    both = runner.invoke(app, ["build", str(docs), "--index", index, "-q", "-v"])
    assert both.exit_code == 2 and "--quiet and --verbose exclude each other" in both.stderr
    default = runner.invoke(app, ["build", str(docs), "--index", index])  # as before: warnings, no list
    assert "warning: skipped empty.md: empty file" in default.stderr and "unchanged " not in default.stderr


@pytest.mark.slow
def test_ask_quiet_and_verbose(docs, tmp_path):
    index = tmp_path / "index"
    assert runner.invoke(app, ["build", str(docs), "--index", str(index), "-q"]).exit_code == 0
    write(docs / "plain.md", PLAIN + "\nZmiana.\n")  # the index is now stale: a warning
    question = ["ask", "Do kiedy trzeba zapłacić czynsz?", "--index", str(index), "--min-score", "-1"]
    default = runner.invoke(app, question)
    assert "file(s) changed since the index was built" in default.stderr
    quiet = runner.invoke(app, [*question, "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == default.stdout
    verbose = runner.invoke(app, [*question, "-v", "--where", "year>=2023", "--where", "tags=prawo"])
    assert verbose.exit_code == 0, verbose.output
    assert "umowa.md:10" in verbose.stdout
    assert "searched: 1 of 4 files, 1 of 4 chunks (--where year>=2023 --where tags=prawo)" in verbose.stderr
    assert "hybrid search: 1 passage(s) reach the cosine cutoff -1.000 you set" in verbose.stderr
