"""``eval`` for a first-time user (issue 40): with no question file it says what a row looks like,
where a sample is and how to start one; ``eval --init`` starts one from the folder's own headings,
never over a file."""

from __future__ import annotations

import json

from semsearch.evaluation.starter import draft_questions
from semsearch.ingest.chunk import Chunk
from tests.helpers import semsearch_here


def test_eval_without_a_question_file_says_what_one_holds_and_how_to_start(
    fake_sample_index, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    result = semsearch_here("eval", "--index", fake_sample_index)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()  # one line, as every error
    assert line.startswith("error: question file not found: questions.jsonl; a question file is JSON Lines")
    assert '{"question": ' in line and '"source": ' in line and '"answer": ' in line
    assert "tests/data/docs_questions.jsonl" in line and "`semsearch eval --init`" in line


def test_eval_init_drafts_questions_from_the_headings_and_eval_reads_them(
    fake_sample_index, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    written = semsearch_here("eval", "--init", "--index", fake_sample_index)
    assert written.returncode == 0, written.stderr
    assert written.stdout.startswith(
        "Wrote questions.jsonl: 30 draft questions from the headings of 10 files"
    )
    assert written.stdout.rstrip().endswith("then run `semsearch eval`.")
    rows = [
        json.loads(line) for line in (tmp_path / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    drafts, unanswerable = rows[:-1], rows[-1]
    indexed = {path.name for path in (fake_sample_index.parent.parent / "docs").glob("*.md")} or None
    assert all(row["source"].endswith(".md") and row["question"] and row["note"] for row in drafts)
    assert indexed is None or {row["source"] for row in drafts} <= indexed
    assert "source" not in unanswerable and "answer" not in unanswerable
    evaluated = semsearch_here("eval", "--index", fake_sample_index)
    assert evaluated.returncode == 0, evaluated.stderr
    assert evaluated.stdout.startswith("31 questions (30 answerable, 1 not)")


def test_eval_init_never_writes_over_a_file(fake_sample_index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "mine.jsonl"
    mine.write_text('{"question": "Ile mam dni na zwrot?"}\n', encoding="utf-8")
    result = semsearch_here("eval", "--init", mine.name, "--index", fake_sample_index)
    assert result.returncode == 2
    assert result.stderr == (
        "error: mine.jsonl already exists: --init writes a new file only "
        "(give another name: semsearch eval --init my-questions.jsonl)\n"
    )
    assert mine.read_text(encoding="utf-8") == '{"question": "Ile mam dni na zwrot?"}\n'
    both = semsearch_here("eval", "--init", "new.jsonl", "--calibrate", "--index", fake_sample_index)
    assert both.returncode == 2 and "--init and --calibrate exclude each other" in both.stderr
    assert not (tmp_path / "new.jsonl").exists()


def chunk(source: str, *headings: str) -> Chunk:
    return Chunk(
        id=f"{source}{headings}",
        source=source,
        headings=headings,
        text="x",
        start_line=1,
        end_line=1,
        tokens=1,
    )


def test_drafts_take_sections_before_titles_from_each_file_in_turn():
    chunks = [
        chunk("a.md", "A"),
        chunk("a.md", "A", "Zwroty"),
        chunk("a.md", "A", "Zwroty"),  # a section over two chunks: one draft
        chunk("a.md", "A", "Koszty", "Etykieta"),
        chunk("b.md", "B", "Dostawa"),
        chunk("c.md"),  # no heading: no draft
    ]
    drafts = draft_questions(chunks, per_file=2)
    assert [(row["source"], row["question"]) for row in drafts] == [
        ("a.md", "Zwroty"),
        ("b.md", "Dostawa"),
        ("a.md", "Etykieta"),  # a.md's title, "A", would come third
    ]
    assert len(draft_questions(chunks, per_file=3, limit=2)) == 2
