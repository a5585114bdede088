"""Hybrid search, --path filters and --context prompts, end to end with the real default model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from semsearch.collection import Collection
from semsearch.encode.embedders import load_embedder
from semsearch.evaluation.quality import evaluate
from semsearch.evaluation.questions import load_questions
from semsearch.ingest.tokens import count_tokens
from semsearch.retrieve.named import missing_outside, named_rows
from semsearch.retrieve.opening import load_index
from semsearch.retrieve.searcher import Searcher
from tests.helpers import DATA

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def measured(sample_index):
    """Top-1 per mode on the identifier and the plain-language question sets of docs/."""
    index = load_index(sample_index)
    embedder = load_embedder(index.model)
    identifier = load_questions(DATA / "docs_identifier_questions.jsonl")
    plain = load_questions(DATA / "docs_questions.jsonl")
    return {
        mode: (
            evaluate(Collection.opened(index, embedder=embedder), identifier, mode=mode).metrics,
            evaluate(Collection.opened(index, embedder=embedder), plain, mode=mode).by_kind["paraphrase"],
        )
        for mode in ("hybrid", "dense")
    }


@pytest.mark.slow
def test_hybrid_finds_identifiers_that_embeddings_miss(measured):
    hybrid, dense = measured["hybrid"][0], measured["dense"][0]
    assert hybrid["questions"] >= 15
    assert hybrid["top1"] >= 0.9, hybrid
    assert hybrid["top1"] >= dense["top1"] + 0.2, (hybrid["top1"], dense["top1"])


@pytest.mark.slow
def test_hybrid_costs_nothing_on_paraphrases(measured):
    assert measured["hybrid"][1]["top1"] >= measured["dense"][1]["top1"] - 0.03


def test_keyword_mode_ranks_by_bm25(fake_sample_index):
    result = run("ask", "PAY-630", "--index", fake_sample_index, "--mode", "keyword", "--json")
    assert result.exit_code == 0, result.output
    first = json.loads(result.stdout)["results"][0]
    assert "PAY-630" in first["text"] and first["keyword_score"] > 0


def test_keyword_mode_says_when_no_passage_holds_a_word_of_the_question(fake_sample_index):
    """An outside probe: it said "no passage reaches this question's threshold", with no score."""
    result = run("ask", "xyzzy plugh", "--index", fake_sample_index, "--mode", "keyword")
    assert result.exit_code == 1
    assert "No answer: no passage holds any word of the question" in result.stdout


@pytest.mark.slow
def test_path_filter_applies_before_top_k(sample_index):
    """The best passages for this question are in zwroty.md; filtered to dostawa.md, the answer
    still comes from there, however far down the unfiltered ranking it is."""
    question = "W jakim terminie mogę zwrócić towar?"
    unfiltered = run("ask", question, "--index", sample_index, "--json", "-k", "3")
    assert unfiltered.exit_code == 0, unfiltered.output
    top3 = [r["source"] for r in json.loads(unfiltered.stdout)["results"]]
    assert len(top3) == 3 and "zwroty.md" in top3 and "dostawa.md" not in top3, top3
    result = run(
        "ask", question, "--index", sample_index, "--json", "--path", "dostawa.md", "--min-score", "-1"
    )
    assert result.exit_code == 0, result.output
    sources = [r["source"] for r in json.loads(result.stdout)["results"]]
    assert len(sources) == 3 and set(sources) == {"dostawa.md"}, sources
    both = run(
        "ask", question, "--index", sample_index, "--json", "--path", "dost*.md", "--path", "zwroty.md"
    )
    assert both.exit_code == 0, both.output
    sources = {r["source"] for r in json.loads(both.stdout)["results"]}
    assert "zwroty.md" in sources and sources <= {"dostawa.md", "zwroty.md"}, sources


def test_a_path_matching_no_file_is_a_clear_error(fake_sample_index):
    result = run("ask", "zwrot", "--index", fake_sample_index, "--path", "nie-ma/**")
    assert result.exit_code == 2
    assert "no indexed file matches the path pattern(s) nie-ma/**" in result.stderr


def test_context_prompt_puts_the_best_source_last_and_fits_the_budget(fake_sample_index):
    question = "Ile mam dni na odstąpienie od umowy?"
    result = run("ask", question, "--index", fake_sample_index, "--context", "-k", "3", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    prompt, sources = data["prompt"], data["sources"]
    assert len(sources) == 3 and data["tokens"] == count_tokens(prompt) <= 3000
    assert "only the numbered sources" in prompt and "do not contain the answer" in prompt
    assert "[1] is the most relevant and is listed last" in prompt.split("\n")[0]  # the order, said first
    assert prompt.rstrip().endswith(f"Question: {question}")
    positions = [prompt.index(f"[{n}] {s['source']} › ") for n, s in enumerate(sources, 1)]
    assert positions == sorted(positions, reverse=True)  # [1], the best, is last before the question
    plain = run("ask", question, "--index", fake_sample_index, "--context", "-k", "3")
    assert plain.stdout == prompt


def test_context_budget_drops_the_least_relevant_sources(fake_sample_index):
    question = "Ile mam dni na odstąpienie od umowy?"
    result = run(
        "ask",
        question,
        "--index",
        fake_sample_index,
        "--context",
        "-k",
        "5",
        "--max-context-tokens",
        "450",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (
        data["tokens"] <= 450
        and 1 <= len(data["sources"]) < 5
        and data["left_out"] == 5 - len(data["sources"])
    )
    assert "[1] " in data["prompt"]
    tiny = run(
        "ask", question, "--index", fake_sample_index, "--context", "--max-context-tokens", "120", "--json"
    )
    assert json.loads(tiny.stdout)["tokens"] <= 120  # even the best source is cut to fit


@pytest.mark.slow
def test_no_context_prompt_when_nothing_passes(sample_index):
    result = run("ask", "Jaka jest pogoda w Krakowie?", "--index", sample_index, "--context")
    assert result.exit_code == 1
    assert "Question:" not in result.stdout and "Sources" not in result.stdout


@pytest.fixture(scope="module")
def events_index(tmp_path_factory):
    """Node.js's events.md (tests/data/api_corpus) indexed with the real default model."""
    from semsearch.build.pipeline import build_index

    docs = tmp_path_factory.mktemp("api") / "docs"
    docs.mkdir()
    (docs / "events.md").write_bytes((DATA / "api_corpus" / "node" / "events.md").read_bytes())
    build_index(docs, docs.parent / "index")
    return docs.parent / "index"


@pytest.mark.slow
@pytest.mark.parametrize(
    "question, section, top",
    [
        # dense alone ranks emitter.prependOnceListener() second
        ("What does events.once() return?", "Events › events.once(emitter, name[, options])", 3),
        # dense alone puts emitter.off() first; chunks that merely call emitter.once() do not win
        (
            "What does emitter.once() return?",
            "Events › Class: EventEmitter › emitter.once(eventName, listener)",
            1,
        ),
    ],
)
def test_a_code_name_puts_its_own_section_first(events_index, question, section, top):
    """The first ``top`` results lie in the section the question names (or its subsections)."""
    result = run("ask", question, "--index", events_index, "--json", "-k", "3")
    assert result.exit_code == 0, result.output
    sections = [r["section"] for r in json.loads(result.stdout)["results"]]
    assert all(s.startswith(section) for s in sections[:top]), sections


def test_a_code_no_document_holds_is_named_as_missing(fake_sample_index):
    """Asked about PAY-517 and PAY-999, the passage on PAY-517 answers: the reader is told that
    no passage speaks of PAY-999 (and § 99 likewise); a code present is not listed."""
    mixed = "Czy PAY-517 i PAY-999 to ten sam błąd?"
    both = run("ask", mixed, "--index", fake_sample_index, "-k", "1")
    assert both.exit_code == 0, both.output
    assert (
        "Not found in the searched documents: PAY-999. The passages above do not mention it." in both.stdout
    )
    as_json = json.loads(
        run("ask", "Co mówi § 99 albo PAY-517?", "--index", fake_sample_index, "--json").stdout
    )
    assert as_json["missing"] == ["§ 99"] and as_json["unheld"] == []
    known = json.loads(run("ask", "Co oznacza błąd PAY-517?", "--index", fake_sample_index, "--json").stdout)
    assert known["missing"] == [] and known["answered"]
    filtered = run("ask", "Co oznacza błąd PAY-517?", "--index", fake_sample_index, "--path", "regulamin.md")
    # not in the file searched, and where it is
    assert "Not found in the searched documents: PAY-517 (in platnosci.md, not searched)." in filtered.stdout
    prompt = run("ask", mixed, "--index", fake_sample_index, "--context")
    assert prompt.exit_code == 0 and "Not found in the searched documents: PAY-999." in prompt.stderr
    assert "Not found" not in prompt.stdout  # the prompt on stdout stays what the model reads
    prompt_json = run("ask", mixed, "--index", fake_sample_index, "--context", "--json")
    assert json.loads(prompt_json.stdout)["missing"] == ["PAY-999"]
    # a refusal under --context --json is still JSON on stdout (a probe got nothing to parse)
    refused = run(
        "ask", "PAY-517", "--index", fake_sample_index, "--path", "regulamin.md", "--context", "--json"
    )
    assert refused.exit_code == 1 and json.loads(refused.stdout)["answered"] is False
    assert json.loads(refused.stdout)["missing_elsewhere"] == {"PAY-517": ["platnosci.md"]}


def test_a_question_naming_only_what_no_file_holds_is_no_answer(fake_sample_index):
    """Everything the question names verbatim is in no indexed file: whatever ranks first speaks
    of something else, so the gate refuses (exit 1) and says what the documents never mention."""
    unknown = run("ask", "Co oznacza błąd PAY-999?", "--index", fake_sample_index, "-k", "1")
    assert unknown.exit_code == 1, unknown.output
    assert "the indexed documents never mention PAY-999" in unknown.output
    as_json = json.loads(
        run("ask", "Co oznacza błąd PAY-999?", "--index", fake_sample_index, "--json").stdout
    )
    assert as_json["answered"] is False and as_json["unheld"] == ["PAY-999"] and as_json["results"] == []
    # the user's own cosine cutoff is a plain cosine cut: the rule is the gate's
    cut = run("ask", "Co oznacza błąd PAY-999?", "--index", fake_sample_index, "--min-score", "-1", "--json")
    assert cut.exit_code == 0 and json.loads(cut.stdout)["unheld"] == []


@pytest.mark.slow
def test_a_code_name_no_document_holds_is_named_as_missing(events_index):
    """Asked about a method events.md does not have, the nearest method ranks first: the reader
    is told it is not the one asked about; a method the file documents is not listed."""
    unknown = json.loads(
        run("ask", "What does emitter.offAll() do?", "--index", events_index, "--json").stdout
    )
    assert unknown["missing"] == ["emitter.offAll"] and unknown["unheld"] == ["emitter.offAll"]
    assert unknown["answered"] is False  # nothing in the folder names it: the gate refuses
    human = run("ask", "What does events.twice() return?", "--index", events_index, "-k", "1")
    assert human.exit_code == 1 and "never mention events.twice" in human.output
    for known in ("What does events.once() return?", "When is emitter.off() called?"):
        assert json.loads(run("ask", known, "--index", events_index, "--json").stdout)["missing"] == [], known


def test_missing_outside_against_masks(fake_sample_index):
    index = load_index(fake_sample_index)
    holding = index.keyword_index().rows_with("PAY-517")
    assert len(holding) > 0
    everywhere = np.ones(len(index.chunks), dtype=bool)
    elsewhere = everywhere.copy()
    elsewhere[holding] = False
    named = named_rows(index.keywords, Searcher(index).parse("PAY-517 czy PAY-999?"))
    assert tuple(missing_outside(index.chunks, named)) == ("PAY-999",)
    assert tuple(missing_outside(index.chunks, named, everywhere)) == ("PAY-999",)
    assert tuple(missing_outside(index.chunks, named, elsewhere)) == ("PAY-517", "PAY-999")
    sources = sorted({index.chunks[int(row)].source for row in holding})
    assert missing_outside(index.chunks, named, elsewhere) == {"PAY-517": sources, "PAY-999": []}


@pytest.mark.slow
def test_the_rest_of_the_question_orders_the_chunks_holding_the_name(events_index):
    """Seven chunks lie under events.once(…): its code examples score highest on the name
    itself (they were first, the answer fourth), "return" picks the one stating what it returns."""
    question = "What does events.once() return?"
    answer = "resolve with an array of all the arguments emitted"
    hybrid = run("ask", question, "--index", events_index, "--json", "-k", "1")
    assert hybrid.exit_code == 0, hybrid.output
    assert answer in json.loads(hybrid.stdout)["results"][0]["text"]


def test_eval_decides_a_question_naming_only_what_no_file_holds_as_ask_does(fake_sample_index):
    from semsearch.evaluation.quality import evaluate
    from semsearch.evaluation.questions import Question
    from semsearch.retrieve.opening import embedder_for

    index = load_index(fake_sample_index)
    questions = [
        Question(1, "Co oznacza błąd PAY-999?"),
        Question(2, "Co oznacza błąd PAY-517?", sources=("platnosci.md",)),
    ]
    results = evaluate(Collection.opened(index, embedder=embedder_for(index)), questions).results
    assert [r.passes for r in results] == [False, True]
    assert results[0].names_unheld and not results[1].names_unheld
