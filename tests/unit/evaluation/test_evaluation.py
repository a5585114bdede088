from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from semsearch.cli.render.eval import eval_json, print_eval
from semsearch.collection import Collection
from semsearch.encode.keywords import build_keyword_index
from semsearch.errors import QuestionsError
from semsearch.evaluation.quality import evaluate, suggest_margin
from semsearch.evaluation.questions import Question, is_hit, load_questions
from semsearch.ingest.chunking import Chunk
from semsearch.retrieve.index import Index
from semsearch.retrieve.opening import load_index
from semsearch.store.records import MarginRecord, ModelRecord
from tests.helpers import DATA, meta_record


def chunk(i: int, source: str, text: str) -> Chunk:
    return Chunk(
        id=f"{source}#{i}",
        source=source,
        headings=("T", f"S{i}"),
        text=text,
        start_line=i,
        end_line=i,
        tokens=5,
    )


def test_hit_requires_every_expectation_given():
    c = chunk(0, "a.md", "Zwrot   środków w ciągu 14 DNI.")
    assert is_hit(
        Question(1, "q", answers=("zwrot środków w ciągu 14 dni",)), c
    )  # case and whitespace folded
    assert is_hit(Question(1, "q", sources=("b.md", "a.md")), c)
    assert not is_hit(Question(1, "q", sources=("b.md",)), c)
    assert not is_hit(Question(1, "q", answers=("zwrot środków",), sources=("b.md",)), c)
    assert not is_hit(Question(1, "q", answers=("30 dni",)), c)
    assert is_hit(Question(1, "q", answers=("30 dni", "14 dni")), c)  # one of several acceptable texts


class TableEmbedder:
    """Maps each known question to a fixed unit vector (pure-logic test of the metrics)."""

    spec = "fake:table"
    dim = 3
    max_input_tokens = 512

    def __init__(self, table):
        self.table = table

    def embed_queries(self, texts):
        rows = np.array([self.table[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture
def tiny(tmp_path):
    chunks = [
        chunk(0, "a.md", "alpha answer"),
        chunk(1, "b.md", "beta answer"),
        chunk(2, "c.md", "gamma answer"),
    ]
    vectors = np.eye(3, dtype=np.float32)
    meta = meta_record(margin=MarginRecord(0.5), model=ModelRecord("fake:table", 3), chunks=3)
    no_bank = np.zeros((0, 3), np.float32)
    index = Index(
        path=tmp_path,
        meta=meta,
        chunks=chunks,
        vectors=vectors,
        offtopic=no_bank,
        background=no_bank,
        keywords=build_keyword_index([c.text for c in chunks], None),
    )
    embedder = TableEmbedder(
        {
            "q-a": [1, 0.1, 0],  # a first: hit at 1
            "q-b": [0.9, 0.8, 0],  # a first, b second: hit at 2
            "q-c": [0.2, 0.1, 1],  # c first, but expected text is not there: miss
            "q-none-low": [0.3, 0.3, 0.3],  # best 0.577 ≥ 0.5: wrongly answered
            "q-off": [0.6, -0.2, 0.5],  # best 0.744, but it is the off-topic bank question itself
        }
    )
    questions = [
        Question(1, "q-a", sources=("a.md",)),
        Question(2, "q-b", sources=("b.md",)),
        Question(3, "q-c", answers=("delta",)),
        Question(4, "q-none-low"),
    ]
    return index, embedder, questions


def test_metrics_on_a_hand_checked_case(tiny):
    index, embedder, questions = tiny
    report = evaluate(Collection.opened(index, embedder=embedder), questions, k=3)
    m = report.metrics
    assert (m["questions"], m["answerable"], m["unanswerable"]) == (4, 3, 1)
    assert m["top1"] == pytest.approx(1 / 3, abs=1e-4)
    assert m["top3"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["mrr"] == pytest.approx((1 + 1 / 2 + 0) / 3, abs=1e-4)
    # First scores: q-a 0.995, q-b 0.747, q-c 0.976; all pass 0.5. q-none 0.577 passes too.
    assert m["answered"] == 1.0
    assert m["rejected"] == 0.0
    assert m["lowest_correct_first_score"] == pytest.approx(0.995, abs=1e-3)
    assert m["highest_unanswerable_score"] == pytest.approx(0.577, abs=1e-3)
    assert [r.question.question for r in report.misses] == ["q-b", "q-c", "q-none-low"]
    # Answerable best scores 0.747, 0.976, 0.995 and the unanswerable 0.577: any value in
    # (0.577, 0.747] separates them; the suggestion lies in that gap.
    assert 1 / np.sqrt(3) < report.suggested_margin <= 0.9 / np.sqrt(0.9**2 + 0.8**2)


def test_an_answerable_question_the_gate_refused_is_a_miss_with_its_threshold(tiny, capsys, monkeypatch):
    """Right passage first but below the threshold: the summary counts it as not answered, so the
    misses must show it, marked as refused, with the cosine and the threshold it missed."""
    index, embedder, _ = tiny
    embedder.table["q-weak"] = [0.45, -0.6, -0.6]  # a first, cosine 0.469 < the floor 0.5
    asked = [Question(1, "q-a", sources=("a.md",)), Question(2, "q-weak", ("a",))]
    report = evaluate(Collection.opened(index, embedder=embedder), asked)
    assert report.metrics["top1"] == 1.0 and report.metrics["answered"] == 0.5
    assert [(r.question.question, r.rank, r.refused) for r in report.misses] == [("q-weak", 1, True)]
    (miss,) = eval_json(report)["misses"]
    assert (miss["rank"], miss["answered"], miss["refused"]) == (1, False, True)
    assert miss["score"] == pytest.approx(0.45 / np.sqrt(0.45**2 + 0.72), abs=1e-4)
    assert miss["threshold"] == 0.5
    monkeypatch.setenv("COLUMNS", "200")
    print_eval(report)
    row = next(line for line in capsys.readouterr().out.splitlines() if "q-weak" in line)
    assert "refused by the no-answer gate" in row and "0.469 < threshold 0.500" in row


def test_a_question_refused_for_a_name_no_file_holds_says_so_not_a_threshold(tiny, capsys, monkeypatch):
    """Refused whatever its cosine: the miss names what the files never mention (an outside probe
    read "first score 0.863 < threshold 0.837")."""
    index, embedder, _ = tiny
    embedder.table["Co robi PAY-999?"] = [1.0, 0.0, 0.0]  # a's direction: well above the threshold
    report = evaluate(
        Collection.opened(index, embedder=embedder), [Question(1, "Co robi PAY-999?", sources=("a.md",))]
    )
    (miss,) = report.misses
    assert miss.unheld == ("PAY-999",) and miss.read_score > miss.threshold and miss.refused
    monkeypatch.setenv("COLUMNS", "200")
    print_eval(report)
    row = next(line for line in capsys.readouterr().out.splitlines() if "PAY-999" in line)
    assert "refused: the documents never mention PAY-999" in row and "< threshold" not in row


def test_suggestion_with_one_kind_of_question_only(tiny):
    index, embedder, questions = tiny
    only_answerable = evaluate(Collection.opened(index, embedder=embedder), questions[:3])
    q_b_score = 0.9 / np.sqrt(0.9**2 + 0.8**2)
    assert q_b_score - 1e-3 < only_answerable.suggested_margin <= q_b_score  # the highest that answers all
    only_unanswerable = evaluate(Collection.opened(index, embedder=embedder), questions[3:])
    assert 1 / np.sqrt(3) < only_unanswerable.suggested_margin < 1 / np.sqrt(3) + 1e-3
    assert suggest_margin([]) is None
    # As --calibrate records it, to six places: a server's scores, summed in another order and
    # apart in the seventh place, suggest the same margin (and eval's trade-off rows one order).
    for margin in (only_answerable.suggested_margin, only_unanswerable.suggested_margin):
        assert margin == round(margin, 6) and margin != round(margin, 3)


def test_background_rule_counts_in_answered_and_rejected(tiny):
    index, embedder, questions = tiny
    without_bank = evaluate(
        Collection.opened(index, embedder=embedder), [*questions, Question(5, "q-off")]
    ).metrics
    assert without_bank["rejected"] == 0.0
    bank = np.array([[0.6, -0.2, 0.5]], dtype=np.float32)
    index = dataclasses.replace(index, background=bank / np.linalg.norm(bank))  # its gate made anew
    # Answerable questions lie nearer their chunks than the bank question; both unanswerable
    # ones lie nearer the bank question (q-none-low: 0.645 > 0.577) than any chunk.
    m = evaluate(Collection.opened(index, embedder=embedder), [*questions, Question(5, "q-off")]).metrics
    assert m["rejected"] == 1.0
    assert m["answered"] == 1.0


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "line 2: not valid JSON"),
        ('["a list"]', "line 2: expected a JSON object"),
        ('{"answer": "x"}', "line 2: 'question' must be"),
        ('{"question": "q", "source": 3}', "line 2: 'source' must be"),
        ('{"question": "q", "answer": ""}', "line 2: 'answer' must be"),
        ('{"question": "?!"}', "line 2: the question '\\?!' has no words"),  # as ask refuses it
    ],
)
def test_malformed_lines_are_reported_with_their_number(tmp_path, line, message):
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "fine", "extra": 1}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(QuestionsError, match=message):
        load_questions(path)


def test_question_file_forms(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"question": " a ", "source": "x.md", "kind": "ignored"}\n\n'
        '{"question": "b", "source": ["x.md", "y.md"], "answer": "t"}\n{"question": "c"}\n'
        '{"question": "d", "answer": ["u", "v"]}\n',
        encoding="utf-8",
    )
    a, b, c, d = load_questions(path)
    assert d.answers == ("u", "v")
    assert (a.question, a.sources, a.answerable) == ("a", ("x.md",), True)
    assert (b.line, b.sources, b.answers) == (3, ("x.md", "y.md"), ("t",))
    assert not c.answerable
    with pytest.raises(QuestionsError, match="not found"):
        load_questions(tmp_path / "missing.jsonl")
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(QuestionsError, match="line 1: not valid JSON \\(JSON nested too deeply"):
        load_questions(path)


runner = CliRunner()
SAMPLE_QUESTIONS = DATA / "docs_questions.jsonl"


def assert_eval_json_consistent(data: dict, questions_file: Path, min_score: float) -> None:
    """The values of ``eval --json``, not only its keys: counts are the question file's, shares
    are ordered as they must be, and the misses are the questions the summary says were missed."""
    rows = {
        n: json.loads(line) for n, line in enumerate(questions_file.open(encoding="utf-8"), 1) if line.strip()
    }
    answerable = {n for n, row in rows.items() if "answer" in row or "source" in row}
    assert (data["questions"], data["answerable"], data["unanswerable"]) == (
        len(rows),
        len(answerable),
        len(rows) - len(answerable),
    )
    assert (data["mode"], data["k"], data["calibrated"]) == ("hybrid", 3, False)
    assert set(data["gate"]) == {"rule", "value", "suggested"}
    assert data["gate"]["rule"] == "margin over the off-topic bank"
    assert data["gate"]["value"] == pytest.approx(min_score, abs=1e-6)
    # The margin has one name: not "min_score", which `ask --min-score` uses for a cosine cutoff.
    assert "min_score" not in data and "suggested_margin" not in data
    shares = ("top1", "top3", "answered", "answered_correct", "rejected")
    assert all(0 <= data[key] <= 1 for key in shares), data
    assert data["recall"] == {"1": data["top1"], "3": data["top3"]}
    top1, top3, mrr = data["top1"], data["top3"], data["mrr"]  # rank 1 gives 1, 2–3 ½–⅓, 4–10 ≤ ¼
    assert 0 < top1 + (top3 - top1) / 3 - 1e-3 <= mrr <= top1 + (top3 - top1) / 2 + (1 - top3) / 4 + 1e-3
    assert data["answered_correct"] <= min(data["answered"], data["top1"])
    kinds = {row["kind"] for row in rows.values()}
    assert set(data["by_kind"]) == kinds
    assert sum(kind["questions"] for kind in data["by_kind"].values()) == len(rows)
    for name, kind in data["by_kind"].items():
        of_kind = {n for n, row in rows.items() if row["kind"] == name}
        assert (kind["answerable"], kind["unanswerable"]) == (
            len(of_kind & answerable),
            len(of_kind - answerable),
        )
    first = round(sum(k["top1"] * k["answerable"] for k in data["by_kind"].values() if k["answerable"]))
    assert first == round(data["top1"] * len(answerable))

    misses = data["misses"]
    assert all(rows[m["line"]]["question"] == m["question"] for m in misses)
    missed_answerable = [m for m in misses if m["line"] in answerable]
    right_and_answered = round(data["answered_correct"] * len(answerable))
    assert len(missed_answerable) == len(answerable) - right_and_answered
    assert all(m["rank"] is None or 1 <= m["rank"] <= 10 for m in missed_answerable)
    assert sum(m["rank"] != 1 for m in missed_answerable) == len(answerable) - first
    refused = [m for m in missed_answerable if m["refused"]]
    assert len(refused) == round((1 - data["answered"]) * len(answerable))
    assert all(not m["answered"] and m["score"] < m["threshold"] for m in refused)
    assert all(m["refused"] or m["rank"] != 1 for m in missed_answerable)
    wrongly_answered = [m for m in misses if m["line"] not in answerable]
    assert all(
        m["answered"] and not m["refused"] and m["rank"] is None and m["expected"] == "no answer"
        for m in wrongly_answered
    )
    assert len(wrongly_answered) == round((1 - data["rejected"]) * data["unanswerable"])
    assert all(m["score"] <= data["highest_unanswerable_score"] for m in wrongly_answered)
    assert data["lowest_correct_first_score"] is not None and data["gate"]["suggested"] is not None


@pytest.mark.slow
def test_eval_cli_json_and_calibrate(sample_index, tmp_path):
    import shutil

    index_dir = tmp_path / "index"
    shutil.copytree(sample_index, index_dir)
    result = runner.invoke(app, ["eval", str(SAMPLE_QUESTIONS), "--index", str(index_dir), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert_eval_json_consistent(data, SAMPLE_QUESTIONS, load_index(index_dir).gate.margin)
    assert not (index_dir / "meta.json").read_text().count('"calibrate"')
    info = json.loads(runner.invoke(app, ["info", "--index", str(index_dir), "--json"]).stdout)
    assert {key: info["gate"][key] for key in ("rule", "value")} == {
        key: data["gate"][key] for key in ("rule", "value")
    }  # the margin under one name
    refused = next(m for m in data["misses"] if m["refused"])
    asked = runner.invoke(app, ["ask", refused["question"], "--index", str(index_dir), "--json"])
    assert asked.exit_code == 1  # refused by `ask` as by `eval`, at the same cosine threshold
    assert json.loads(asked.stdout)["threshold"] == pytest.approx(refused["threshold"], abs=1e-6)

    calibrated = runner.invoke(app, ["eval", str(SAMPLE_QUESTIONS), "--index", str(index_dir), "--calibrate"])
    assert calibrated.exit_code == 0, calibrated.output
    meta = json.loads((index_dir / "meta.json").read_text())
    assert meta["calibrated"]["value"] == pytest.approx(data["gate"]["suggested"], abs=1e-6)
    assert meta["calibrated"]["questions"] == data["questions"]
    assert meta["min_score"]["source"] == "build"
    assert load_index(index_dir).gate.margin == pytest.approx(data["gate"]["suggested"], abs=1e-6)
    again = runner.invoke(app, ["eval", str(SAMPLE_QUESTIONS), "--index", str(index_dir), "--calibrate"])
    assert again.exit_code == 0
    assert json.loads((index_dir / "meta.json").read_text())["min_score"]["source"] == "build"


def test_eval_cli_errors(fake_sample_index, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    result = runner.invoke(app, ["eval", str(bad), "--index", str(fake_sample_index)])
    assert result.exit_code == 2
    assert "bad.jsonl, line 1" in result.stderr
    assert (
        runner.invoke(app, ["eval", str(SAMPLE_QUESTIONS), "--index", str(tmp_path / "none")]).exit_code == 2
    )


def test_eval_summary_shows_each_recall_once_and_no_python_none(fake_sample_index, tmp_path):
    """An outside probe: `-k 1,3,10,50` printed top-50 beside top-1 and top-3 (top-10 only on
    the next line), and a file of unanswerable questions printed "MRR@10 None"."""
    identifiers = DATA / "docs_identifier_questions.jsonl"
    result = runner.invoke(
        app, ["eval", str(identifiers), "--index", str(fake_sample_index), "-k", "1,3,10,50"]
    )
    assert result.exit_code == 0, result.output
    first, recall = result.stdout.splitlines()[1:3]
    assert "top-1" in first and "MRR@10 0." in first and "top-50" not in first
    assert "@10 " in recall and "@50 " in recall
    unanswerable = tmp_path / "none.jsonl"
    unanswerable.write_text('{"question": "Jaka jest pogoda w Krakowie?"}\n', encoding="utf-8")
    result = runner.invoke(app, ["eval", str(unanswerable), "--index", str(fake_sample_index)])
    assert "MRR@10 —" in result.stdout and "None" not in result.stdout
