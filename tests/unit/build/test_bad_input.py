"""Bad input: a build finishes, says what it skipped or repaired and why, and keeps every good file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from semsearch.build.pipeline import build_index
from semsearch.cli.commands import app
from semsearch.retrieve.opening import load_index
from tests.helpers import DATA, REPO

runner = CliRunner()


@pytest.fixture
def messy(tmp_path):
    docs = tmp_path / "docs"
    outside = tmp_path / "outside"
    docs.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nNie do indeksowania.\n", encoding="utf-8")

    def write(name, data):
        path = docs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))

    write("good.md", "# Dobry\n\n## Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write("invalid-utf8.md", b"# Zepsuty\n\nCena \xff\xfe 10 z\xc5\x82.\n")
    write("binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write("empty.md", "")
    write("blank.md", "  \n\n")
    write("front-matter-only.md", "---\ntitle: Tylko metadane\n---\n")
    write("headings-only.md", "# Tytuł\n\n## Sekcja\n\n### Podsekcja\n")
    write("windows.md", "# Okna\r\n\r\n## CRLF\r\n\r\nLinia z Windows.\r\n")
    write("bom.md", "\ufeff# BOM\n\nTekst z BOM.\n")
    write("name with spaces ąę.md", "# Spacje\n\nNazwa ze spacjami i ogonkami.\n")
    write("new\nline.md", "# Nowa linia\n\nNazwa z nową linią.\n")
    write("drafts/draft.md", "# Szkic\n\nNie indeksować.\n")
    write("notes/keep.md", "# Notatki\n\nDo indeksu.\n")
    (docs / ".semsearchignore").write_text("drafts/\n", encoding="utf-8")
    os.symlink(outside / "secret.md", docs / "link-outside.md")
    os.symlink(docs / "good.md", docs / "link-inside.md")
    os.symlink(docs / "missing-target.md", docs / "dangling.md")
    os.symlink(docs, docs / "loop")  # a folder symlink loop
    os.symlink(outside, docs / "outside-folder")
    return docs


EXPECTED_SKIPS = {
    "binary.md": "binary file",
    "empty.md": "empty file",
    "blank.md": "empty file",
    "link-outside.md": "outside the docs folder",
    "dangling.md": "cannot read",
    "loop/": "symlinked folder",
    "outside-folder/": "symlinked folder",
    "front-matter-only.md": "no text",
    "headings-only.md": "no text",
}
INDEXED = {
    "bom.md",
    "good.md",
    "invalid-utf8.md",
    "link-inside.md",
    "name with spaces ąę.md",
    "new\nline.md",
    "notes/keep.md",
    "windows.md",
}


@pytest.mark.slow
def test_messy_folder_builds_through_the_cli_with_the_real_model(messy, tmp_path):
    result = runner.invoke(app, ["build", str(messy), "--index", str(tmp_path / "index"), "--json"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    report = json.loads(result.stdout)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    assert set(skipped) == set(EXPECTED_SKIPS)
    for path, reason in EXPECTED_SKIPS.items():
        assert reason in skipped[path], (path, skipped[path])
    assert any(w.startswith("invalid-utf8.md: invalid UTF-8") for w in report["warnings"])

    index = load_index(tmp_path / "index")
    assert {c.source for c in index.chunks} == INDEXED
    windows = next(c for c in index.chunks if c.source == "windows.md")
    assert (windows.text, windows.start_line, windows.headings) == ("Linia z Windows.", 5, ("Okna", "CRLF"))
    bom = next(c for c in index.chunks if c.source == "bom.md")
    assert bom.headings == ("BOM",)
    assert "secret" not in json.dumps([c.to_dict() for c in index.chunks]).lower()

    info = runner.invoke(app, ["info", "--index", str(tmp_path / "index"), "--json"])
    assert info.exit_code == 0
    data = json.loads(info.stdout)
    assert {s["path"] for s in data["skipped"]} >= {"binary.md", "empty.md"}
    assert data["without_text"] == ["front-matter-only.md", "headings-only.md"]
    assert data["changed_since_build"] == []

    human = runner.invoke(app, ["build", str(messy), "--index", str(tmp_path / "index")])
    assert human.exit_code == 0
    assert "skipped binary.md: binary file" in human.stderr


def test_exclude_patterns_and_ignore_file(messy, tmp_path, fake_embedder):
    report = build_index(messy, tmp_path / "index", embedder=fake_embedder, excludes=["notes/", "*spaces*"])
    sources = {c.source for c in load_index(tmp_path / "index").chunks}
    assert "notes/keep.md" not in sources
    assert "name with spaces ąę.md" not in sources
    assert "drafts/draft.md" not in sources  # from .semsearchignore
    assert "good.md" in sources
    assert report.excluded == ["drafts/", "name with spaces ąę.md", "notes/"]  # folders not entered


@pytest.mark.slow
def test_verbose_build_lists_what_was_excluded(messy, tmp_path):
    result = runner.invoke(
        app, ["build", str(messy), "--index", str(tmp_path / "index"), "-v", "--exclude", "notes/"]
    )
    assert result.exit_code == 0, result.output
    assert "excluded   notes/" in result.stderr and "excluded   drafts/" in result.stderr
    again = runner.invoke(app, ["build", str(messy), "--index", str(tmp_path / "index"), "--json"])
    assert json.loads(again.stdout)["excluded"] == ["drafts/", "notes/"]  # the recorded --exclude too
    typo = runner.invoke(
        app, ["build", str(messy), "--index", str(tmp_path / "index"), "--exclude", "ntoes/"]
    )
    assert "--exclude 'ntoes/' matched no Markdown file or folder" in typo.stderr  # a probe: no note


def test_unmatched_excludes_against_each_pattern_alone():
    from semsearch.ingest.sources import unmatched_excludes

    excluded = ["drafts/", "notes/old.md", "a b.md"]
    patterns = ["drafts/", "*.md", "old*", "nomatch*", "!keep.md", "sub/**"]
    assert unmatched_excludes(patterns, excluded) == ["nomatch*", "sub/**"]
    assert unmatched_excludes(["*"], []) == ["*"]


@pytest.mark.slow
def test_ask_warns_when_files_changed_since_the_build(messy, tmp_path):
    runner.invoke(app, ["build", str(messy), "--index", str(tmp_path / "index")])
    (messy / "good.md").write_text("# Dobry\n\nZmieniony.\n", encoding="utf-8")
    (messy / "added.md").write_text("# Nowy\n\nNowy plik.\n", encoding="utf-8")
    result = runner.invoke(app, ["ask", "zwrot pieniędzy", "--index", str(tmp_path / "index"), "--json"])
    changed = "2 file(s) changed since the index was built (good.md, link-inside.md)"
    assert changed in result.stderr  # the link to good.md changed with it
    assert "added.md" not in result.stderr  # ask looks at the recorded files alone: build finds new ones
    json.loads(result.stdout)  # the JSON on stdout stays clean


BUILD_AND_REPORT_PEAK = """
import resource, sys
from pathlib import Path
from tests.helpers import HashingEmbedder
from semsearch.build.pipeline import build_index
report = build_index(Path(sys.argv[1]), Path(sys.argv[2]), embedder=HashingEmbedder())
print(report.chunks, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def _build_peak(docs, index) -> tuple[int, int]:
    """Chunks and peak RSS (bytes) of a build in a fresh process, with the fast fake embedder."""
    out = subprocess.run(
        [sys.executable, "-c", BUILD_AND_REPORT_PEAK, str(docs), str(index)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    chunks, peak = out.stdout.split()
    return int(chunks), int(peak)


@pytest.mark.slow
def test_a_file_of_tens_of_megabytes_keeps_memory_bounded(tmp_path):
    paragraph = "Zwrot środków następuje w ciągu czternastu dni od otrzymania oświadczenia. " * 6
    sections = [f"## Sekcja {i}\n\n" + "\n\n".join([paragraph] * 4) for i in range(11000)]
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "big.md").write_text("# Duży plik\n\n" + "\n\n".join(sections), encoding="utf-8")
    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "small.md").write_text("# Mały\n\nKrótki tekst.\n", encoding="utf-8")
    size = (tmp_path / "big" / "big.md").stat().st_size
    assert size > 20_000_000
    chunks, peak = _build_peak(tmp_path / "big", tmp_path / "big-index")
    _, baseline = _build_peak(tmp_path / "small", tmp_path / "small-index")
    assert chunks >= 11000
    assert peak - baseline < 10 * size, (
        f"{(peak - baseline) / 1e6:.0f} MB over baseline for {size / 1e6:.0f} MB"
    )


# Corrupt or foreign indexes: one line on stderr, exit 2, never a traceback, for every command.


def _edit_meta(change):
    def edit(folder):
        meta = json.loads((folder / "meta.json").read_text())
        change(meta)
        (folder / "meta.json").write_text(json.dumps(meta))

    return edit


CORRUPTIONS = [
    (lambda d: (d / "meta.json").write_text("{not json"), "unreadable metadata"),
    (lambda d: (d / "meta.json").write_text("[" * 100_000 + "]" * 100_000), "nested too deeply"),
    (lambda d: (d / "meta.json").unlink(), "no index"),
    (lambda d: (d / "chunks.json").unlink(), "chunks.json missing"),
    (lambda d: (d / "chunks.json").write_bytes((d / "chunks.json").read_bytes()[:-500]), "truncated"),
    (lambda d: (d / "chunks.offsets.npy").unlink(), "chunks.offsets.npy missing"),
    (lambda d: np.save(d / "vectors.npy", np.zeros((3, 64), dtype=np.float32)), "3 vectors"),
    (lambda d: np.save(d / "vectors.npy", np.zeros((3, 64), dtype=np.float64)), "expected float32"),
    (lambda d: (d / "vectors.npy").write_bytes((d / "vectors.npy").read_bytes()[:1000]), "vectors.npy"),
    (lambda d: (d / "vectors.npy").write_bytes(b"not numpy at all"), "vectors.npy"),
    (lambda d: (d / "offtopic.npy").unlink(), "offtopic.npy missing"),
    (_edit_meta(lambda m: m.update(format=99)), "newer semsearch"),
    (_edit_meta(lambda m: m.pop("min_score")), "incomplete metadata"),
    (_edit_meta(lambda m: m["min_score"].update(gate=[1, 2, 3])), "'min_score' missing or invalid"),
    (_edit_meta(lambda m: m["model"].update(dim=512)), "expected float32 (N, 512)"),
    (_edit_meta(lambda m: m["model"].update(spec="")), "'model' missing or invalid"),
    (_edit_meta(lambda m: m["offtopic"].update(background_rows=[10**6])), "inconsistent off-topic rows"),
]


COMMANDS = [["ask", "dostawa"], ["info"], ["eval", str(DATA / "docs_questions.jsonl")]]


@pytest.mark.parametrize("damage, message", CORRUPTIONS)
@pytest.mark.parametrize("command", COMMANDS)
def test_corrupt_index_is_one_clean_line(fake_sample_index, tmp_path, damage, message, command):
    """What the commands say of a damaged index is the index's, not the model's: the hashing fake's
    index (64 dimensions) is damaged here; the real model's below."""
    _assert_one_clean_line(fake_sample_index, tmp_path, damage, message, command)


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_a_corrupt_real_model_index_is_one_clean_line(sample_index, tmp_path, command):
    damage = _edit_meta(lambda m: m["model"].update(dim=512))
    _assert_one_clean_line(sample_index, tmp_path, damage, "expected float32 (N, 512)", command)


def _assert_one_clean_line(index, tmp_path, damage, message, command):
    broken = tmp_path / "index"
    shutil.copytree(index, broken)
    damage(broken)
    result = runner.invoke(app, [*command, "--index", str(broken)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert message in result.stderr
    assert "semsearch build" in result.stderr
    assert result.stderr.strip().count("\n") == 0  # one line


def test_an_unreadable_meta_json_gets_the_advice_build_gives(fake_sample_index, tmp_path):
    """An outside probe: ask said "rebuild it", build then refused to replace the folder."""
    broken = tmp_path / "index"
    shutil.copytree(fake_sample_index, broken)
    (broken / "meta.json").write_text("{not json")
    asked = runner.invoke(app, ["ask", "dostawa", "--index", str(broken)])
    built = runner.invoke(app, ["build", str(REPO / "docs"), "--index", str(broken)])
    assert asked.exit_code == built.exit_code == 2
    assert "remove it yourself" in asked.stderr and "remove it yourself" in built.stderr


def test_random_bytes_without_nul_are_binary_but_legacy_encoded_text_is_read(tmp_path):
    """An outside probe: 20 KB of random bytes 1-255 (no NUL) was indexed as 71 chunks of
    replacement characters and became the best match for off-topic questions."""
    import random

    from semsearch.ingest.sources import Skipped, SourceFile, read_source

    noise = tmp_path / "nonul.md"
    rng = random.Random(1)
    noise.write_bytes(bytes(rng.randint(1, 255) for _ in range(20_000)))
    skipped = read_source(noise, tmp_path)
    assert isinstance(skipped, Skipped) and skipped.reason == "binary file (mostly not text), not Markdown"
    legacy = tmp_path / "zwroty-cp1250.md"
    legacy.write_bytes((REPO / "docs" / "zwroty.md").read_text(encoding="utf-8").encode("cp1250"))
    read = read_source(legacy, tmp_path)
    assert isinstance(read, SourceFile) and read.warning and "invalid UTF-8" in read.warning


@pytest.mark.slow
def test_a_dry_run_writes_nothing_and_an_emptied_folder_names_the_index_left(tmp_path):
    """An outside probe: --dry-run failed on read-only media creating its lock file (and made
    the index's parent folders); after every document was deleted, build's error did not say
    that the index still answers from them."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nZwrot w ciągu 14 dni.\n", encoding="utf-8")
    dry = runner.invoke(
        app, ["build", str(docs), "--index", str(tmp_path / "new" / "sub" / "idx"), "--dry-run"]
    )
    assert dry.exit_code == 0, dry.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]  # no folder, no lock file
    assert runner.invoke(app, ["build", str(docs), "--index", str(tmp_path / "idx")]).exit_code == 0
    (docs / "a.md").unlink()
    emptied = runner.invoke(app, ["build", str(docs), "--index", str(tmp_path / "idx")])
    assert emptied.exit_code == 2 and "idx/ still holds its last build" in emptied.stderr


@pytest.mark.slow
def test_ask_gives_no_build_advice_when_every_indexed_file_is_gone(tmp_path):
    """A probe: after every document was deleted, ask advised a build, which then failed."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Zwroty\n\nZwrot w ciągu 14 dni.\n", encoding="utf-8")
    assert runner.invoke(app, ["build", str(docs), "--index", str(tmp_path / "idx")]).exit_code == 0
    (docs / "a.md").unlink()
    asked = runner.invoke(app, ["ask", "Ile mam dni na zwrot?", "--index", str(tmp_path / "idx")])
    assert "every indexed file was removed" in asked.stderr and "semsearch build" not in asked.stderr
    # ask looks at the files the index records alone (a crafted docs_root must not make it walk
    # the disk), so a new file is not seen there: a build finds it
    (docs / "b.md").write_text("# Nowy\n\nNowy plik.\n", encoding="utf-8")
    asked = runner.invoke(app, ["ask", "Ile mam dni na zwrot?", "--index", str(tmp_path / "idx")])
    assert "every indexed file was removed" in asked.stderr
    assert runner.invoke(app, ["build", str(docs), "--index", str(tmp_path / "idx")]).exit_code == 0
