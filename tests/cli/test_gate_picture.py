"""`eval` draws the no-answer gate (issue 25, point 7): where the first passages of answerable and
unanswerable questions land beside the gate's line, and what moving the line would answer and
refuse, as plain lines that read in a log and through `| cat`, and as --json fields."""

from __future__ import annotations

import json
import math
import re

import pytest
from click.testing import Result
from typer.testing import CliRunner

from semsearch.cli.commands import app
from semsearch.cli.render.gate_picture import BAR, print_picture
from semsearch.cli.render.terminal import console
from semsearch.evaluation.picture import gate_picture
from semsearch.evaluation.quality import QuestionResult
from semsearch.evaluation.questions import Question
from tests.helpers import DATA, pierogi_chunks

runner = CliRunner()
QUESTIONS = DATA / "docs_questions.jsonl"
ROW = re.compile(r"^  ([+-]\d\.\d{3}) to ([+-]\d\.\d{3})  +(#*) ?(\d+) +(o*) ?(\d+) *(<- suggested)?$")
GATE_LINE = re.compile(r"^  -+ gate: margin ([+-]\d\.\d{3}), answered above, refused below -+$")


def picture_lines(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("The gate, by each first passage"))
    end = next(n for n, line in enumerate(lines) if line.startswith("  Moving the line"))
    notes = ("  (a mark per ", "  Not by the line")
    return [line for line in lines[start + 2 : end] if not line.startswith(notes)]


@pytest.fixture(scope="module")
def evaluated(fake_sample_index) -> tuple[Result, dict]:
    """``eval`` of the sample questions on the fake sample index, printed and as --json (run once
    for the tests that read them; consoles made afresh, as for a test of its own)."""
    index = str(fake_sample_index)
    console.cache_clear()
    printed = runner.invoke(app, ["eval", str(QUESTIONS), "--index", index])  # not a terminal: plain
    data = json.loads(runner.invoke(app, ["eval", str(QUESTIONS), "--index", index, "--json"]).stdout)
    console.cache_clear()
    return printed, data


def test_the_picture_counts_each_groups_first_passages_on_either_side_of_the_gate(evaluated):
    printed, data = evaluated
    assert printed.exit_code == 0, printed.output
    margin, picture = data["gate"]["value"], data["gate_picture"]
    # Each question's place on the margin's scale, from its own row: score less threshold, plus margin.
    places = [(r["answerable"], r["score"] - r["threshold"] + margin) for r in data["results"]]
    answerable, unanswerable = [p for a, p in places if a], [p for a, p in places if not a]
    assert answerable and unanswerable
    lines = picture_lines(printed.stdout)
    gate = [n for n, line in enumerate(lines) if GATE_LINE.match(line)]
    assert len(gate) == 1 and float(GATE_LINE.match(lines[gate[0]])[1]) == round(margin, 3)
    rows = [ROW.match(line) for line in lines if not GATE_LINE.match(line)]
    assert all(rows), [line for line in lines if not ROW.match(line)]
    assert len(rows) == len(picture["bins"]) and len(rows) >= 3
    tolerance = 1e-5  # the rows give three decimals, the --json places six
    for n, (row, json_bin) in enumerate(zip(rows, picture["bins"], strict=True)):
        low, high = float(row[1]), float(row[2])
        assert (low, high) == (round(json_bin["low"], 3), round(json_bin["high"], 3))
        inside = [p for p in answerable if json_bin["low"] - tolerance <= p < json_bin["high"] - tolerance]
        outside = [p for p in unanswerable if json_bin["low"] - tolerance <= p < json_bin["high"] - tolerance]
        assert (
            (int(row[4]), int(row[6]))
            == (len(inside), len(outside))
            == (
                json_bin["answerable"],
                json_bin["unanswerable"],
            )
        ), row[0]
        per_mark = max(
            1, math.ceil(max(max(b["answerable"], b["unanswerable"]) for b in picture["bins"]) / BAR)
        )
        assert (len(row[3]), len(row[5])) == (-(-len(inside) // per_mark), -(-len(outside) // per_mark))
        above_line = n < gate[0]
        assert (low >= round(margin, 3)) if above_line else (high <= round(margin, 3)), row[0]
    assert sum(int(r[4]) + int(r[6]) for r in rows) == len(places)  # every question drawn once
    # The line is the gate: the answerable questions drawn above it are those answered.
    # The line is the gate: the answerable questions drawn above it are those it answers, but for
    # those decided apart from it (answered below it, refused above it), which it counts.
    assert sum(int(r[4]) for r in rows[: gate[0]]) == sum(p >= margin for p in answerable)
    results = data["results"]
    apart = {
        "exact": sum(r["answered"] and r["score"] < r["threshold"] for r in results),
        "names_unheld": sum(not r["answered"] and r["score"] >= r["threshold"] for r in results),
        "no_passage": 0,
    }
    assert picture["decided_apart"] == apart
    drawn = printed.stdout.splitlines()
    start = next(n for n, line in enumerate(drawn) if line.startswith("The gate, by"))
    end = next(n for n, line in enumerate(drawn) if line == "By kind:")
    assert end - start > 10 and all(len(line) < 80 for line in drawn[start:end])  # fits, never wraps


def test_the_trade_off_shows_the_margin_in_force_and_the_one_calibrate_would_write(evaluated):
    printed, data = evaluated[0].stdout, evaluated[1]
    rows = data["gate_picture"]["tradeoff"]
    assert [row["margin"] for row in rows] == sorted(row["margin"] for row in rows) and len(rows) >= 7
    in_force = [row for row in rows if row["in_force"]]
    assert len(in_force) == 1 and in_force[0]["margin"] == data["gate"]["value"]
    assert in_force[0]["answered"] == round(data["answered"] * data["answerable"])
    assert in_force[0]["rejected"] == round(data["rejected"] * data["unanswerable"])
    suggested = [row for row in rows if row["suggested"]]
    assert [row["margin"] for row in suggested] == [data["gate"]["suggested"]]
    for row in rows:  # each margin's figures, from the questions' own rows and thresholds
        shift = row["margin"] - data["gate"]["value"]
        passes = [
            r for r in data["results"] if not r["unheld"] and r["score"] >= r["threshold"] + shift - 1e-6
        ]
        assert row["answered"] == sum(r["answerable"] for r in passes)
        assert row["rejected"] == data["unanswerable"] - sum(not r["answerable"] for r in passes)
        shown = f"    {row['margin']:+.3f}".ljust(13) + f"{row['answered']} ("
        assert any(line.startswith(shown) for line in printed.splitlines()), shown
    assert re.search(r"^    [+-]\d\.\d{3} .* <- in force$", printed, flags=re.M)
    assert re.search(r"^    [+-]\d\.\d{3} .* <- suggested by --calibrate$", printed, flags=re.M)


def result(place: float, answerable: bool, baseline: float = 0.2) -> QuestionResult:
    question = Question(1, "q", answers=("przepis",) if answerable else ())
    chunk = pierogi_chunks(1)[0]
    return QuestionResult(question, chunk, place + baseline, 1 if answerable else None, baseline, 0.15)


def test_with_the_groups_apart_the_gate_line_is_drawn_between_them(capsys):
    results = [result(p, True) for p in (0.31, 0.33, 0.36, 0.52)] + [
        result(p, False, baseline=0.4) for p in (-0.05, 0.02, 0.04, 0.11)
    ]
    picture = gate_picture(results, margin=0.15, suggested=0.21)
    print_picture(picture)
    lines = capsys.readouterr().out.splitlines()
    gate = next(n for n, line in enumerate(lines) if GATE_LINE.match(line))
    rows = [(n, ROW.match(line)) for n, line in enumerate(lines) if ROW.match(line)]
    assert all(m[5] == "" for n, m in rows if n < gate) and sum(int(m[4]) for n, m in rows if n < gate) == 4
    assert all(m[3] == "" for n, m in rows if n > gate) and sum(int(m[6]) for n, m in rows if n > gate) == 4
    assert picture.width == 0.05 and picture.bins[0].high > 0.52 and picture.bins[-1].low <= -0.05
    assert [(t.answered, t.rejected) for t in picture.tradeoff if t.margin in (0.15, 0.21)] == [
        (4, 4),
        (4, 4),
    ]
    suggested = next(line for line in lines if line.endswith("<- suggested"))
    low, high = (float(x) for x in ROW.match(suggested).group(1, 2))
    assert low <= 0.21 < high
