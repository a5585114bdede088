"""The library's front door, used as a program would: no CLI."""

from __future__ import annotations

import threading

import pytest

import semsearch
from semsearch import Collection
from tests.helpers import SAMPLE_DOCS


def test_the_package_exports_its_api_and_imports_it_lazily():
    assert set(semsearch.__all__) >= {"Collection", "Answer", "Hit", "build_index", "SemsearchError"}
    for name in semsearch.__all__:
        assert getattr(semsearch, name) is not None
    with pytest.raises(AttributeError):
        semsearch.nothing_here  # noqa: B018


@pytest.mark.slow
def test_search_returns_hits_with_locations_and_says_why(sample_index):
    with Collection(sample_index) as docs:
        answer = docs.search("Ile kosztuje dostawa do paczkomatu?", k=2)
        refused = docs.search("Jaka jest pogoda w Krakowie?")
    assert answer.answered and 1 <= len(answer.hits) <= 2
    first = answer.hits[0]
    assert first.source == "dostawa.md" and first.location.startswith("dostawa.md › ")
    assert first.lines[0] <= first.lines[1] and first.text.strip()
    assert first.score >= answer.threshold and "reach this question's threshold" in answer.reason
    assert (
        not refused.answered
        and refused.hits == []
        and refused.reason.startswith("nothing in the indexed documents matches")
    )


@pytest.mark.slow
def test_many_questions_in_one_batch_equal_one_at_a_time(sample_index):
    questions = ["Ile kosztuje dostawa do paczkomatu?", "Co oznacza błąd PAY-517?", "Jaka jest pogoda?"]
    with Collection(sample_index) as docs:
        batch = docs.search_many(questions, k=3)
        single = [docs.search(q, k=3) for q in questions]
    assert [[h.location for h in a.hits] for a in batch] == [[h.location for h in a.hits] for a in single]
    assert [a.answered for a in batch] == [True, True, False]


def test_two_threads_search_one_collection_at_once(fake_sample_store):
    questions = ["Ile kosztuje dostawa do paczkomatu?", "Jak zmienić hasło do konta?"] * 6
    with Collection(fake_sample_store) as docs:
        expected = {q: [h.location for h in docs.search(q).hits] for q in set(questions)}
        results: list[tuple[str, list[str]]] = []
        errors: list[BaseException] = []

        def work(part):
            try:
                for q in part:
                    results.append((q, [h.location for h in docs.search(q).hits]))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(questions[i::2],)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors and len(results) == len(questions)
    assert all(locations == expected[q] and locations for q, locations in results)


def test_a_closed_collection_and_bad_arguments_are_library_errors(fake_sample_index):
    docs = Collection(fake_sample_index)
    with pytest.raises(semsearch.UsageError):
        docs.search("   ")
    with pytest.raises(semsearch.UsageError):
        docs.search("dostawa", k=0)
    with pytest.raises(semsearch.UsageError):
        docs.search("dostawa", mode="fuzzy")
    docs.close()
    with pytest.raises(semsearch.UsageError, match="is closed"):
        docs.search("Ile kosztuje dostawa do paczkomatu?")


def test_a_missing_index_is_a_library_error(tmp_path):
    with pytest.raises(semsearch.IndexMissingError):
        Collection(tmp_path / "nowhere")


@pytest.mark.slow
def test_build_then_search_through_the_front_door(tmp_path):
    report = semsearch.build_index(SAMPLE_DOCS, tmp_path / "index")
    assert report.chunks > 100
    with Collection(tmp_path / "index") as docs:
        assert docs.search("Co oznacza błąd PAY-517?").hits[0].source == "platnosci.md"


def test_eval_decides_exactly_as_ask_does(fake_sample_store):
    """One decision path: for every sample question, eval's "answered" equals the front door's."""
    from semsearch.evaluation.quality import evaluate
    from semsearch.evaluation.questions import load_questions
    from tests.helpers import DATA

    questions = load_questions(DATA / "docs_questions.jsonl")
    with Collection(fake_sample_store) as docs:
        report = evaluate(docs, questions)
        answers = docs.search_many([q.question for q in questions], k=1)
    assert len(report.results) == len(answers) == len(questions)
    assert [r.passes for r in report.results] == [a.answered for a in answers]
    assert {a.answered for a in answers} == {True, False}  # both outcomes are compared


def test_k_changes_what_is_shown_never_whether_there_is_an_answer(fake_sample_store):
    """An outside probe: with keywords fused into the ranking, "error 404 page not found" was
    refused at k=1 (its first passage below the line) and answered at k=3 (a passage further
    down above it), and the "best" score told differed with k."""
    from semsearch.evaluation.quality import evaluate
    from semsearch.evaluation.questions import load_questions
    from tests.helpers import DATA

    questions = load_questions(DATA / "docs_questions.jsonl") + load_questions(
        DATA / "docs_identifier_questions.jsonl"
    )
    texts = [q.question for q in questions] + ["error 404 page not found", "Ile kosztuje iPhone 15?"]
    with Collection(fake_sample_store) as docs:
        vectors = docs.embedder.embed_queries(texts)  # once: the front door's search, below it
        by_k = {
            k: [docs.searcher.search(t, v, k) for t, v in zip(texts, vectors, strict=True)]
            for k in (1, 3, 10)
        }
        passes = [r.passes for r in evaluate(docs, questions).results]
    for k, answers in by_k.items():
        assert [a.answered for a in answers] == [a.answered for a in by_k[1]], k
        assert [a.best_score for a in answers] == [a.best_score for a in by_k[1]], k
        assert all(a.hits[: len(b.hits)] == b.hits for a, b in zip(answers, by_k[1], strict=True) if b.hits)
    assert [a.answered for a in by_k[3][: len(questions)]] == passes  # eval decides as ask does at any k
    assert {a.answered for a in by_k[3]} == {True, False}


def test_search_filters_on_front_matter_as_ask_does(fake_sample_store):
    from semsearch import Condition

    question = "Jak złożyć reklamację?"
    with Collection(fake_sample_store) as docs:
        unfiltered = docs.search(question, k=1)
        by_text = docs.search(question, k=3, where=["updated>=2026-01-01"])
        by_object = docs.search(question, k=3, where=Condition("updated", ">=", "2026-01-01"))
        with pytest.raises(semsearch.UsageError, match="needs a number or a date"):
            docs.search(question, where=["title>x"])
    assert unfiltered.hits[0].source == "reklamacje.md"
    assert by_text == by_object and by_text.hits
    assert {hit.source for hit in by_text.hits} <= {"regulamin.md", "prywatnosc.md"}


def test_one_path_pattern_may_be_a_bare_string(fake_sample_index):
    question = "Jak złożyć reklamację?"
    with Collection(fake_sample_index) as docs:
        as_text = docs.search(question, k=3, paths="regulamin.md")
        as_list = docs.search(question, k=3, paths=["regulamin.md"])
        with pytest.raises(semsearch.UsageError, match="list of questions"):
            docs.search_many(question)
    assert as_text == as_list and as_text.hits
    assert {hit.source for hit in as_text.hits} == {"regulamin.md"}


@pytest.mark.parametrize(
    "call",
    [
        lambda docs: docs.search(None),
        lambda docs: docs.search(b"zwrot"),
        lambda docs: docs.search("zwrot", min_score="0.5"),
        lambda docs: docs.search("zwrot", min_score=True),
        lambda docs: docs.search("zwrot", where=[3]),
        lambda docs: docs.search("zwrot", paths=[None]),
        lambda docs: docs.search("zwrot", paths={"a.md": 1}),
        lambda docs: docs.search("zwrot", where=5),
        lambda docs: docs.search("zwrot", where={"tags": "faq"}),
        lambda docs: docs.search("zwrot", k="3"),
        lambda docs: docs.search("zwrot", k=2.5),
        lambda docs: docs.search("zwrot", k=True),
        lambda docs: docs.search_many(None),
        lambda docs: docs.search("Jak złożyć reklamację?").hits[0].snippet(None),
        lambda docs: Collection(None),
        lambda docs: Collection(5),
        lambda docs: Collection(docs.path, model=5),
    ],
)
def test_wrong_types_are_library_errors_not_python_ones(fake_sample_index, call):
    with Collection(fake_sample_index) as docs, pytest.raises(semsearch.UsageError):
        call(docs)


def test_search_many_reads_a_generator_and_where_none_is_no_filter(fake_sample_index):
    questions = ["Ile kosztuje dostawa do paczkomatu?", "Jak złożyć reklamację?"]
    with Collection(fake_sample_index) as docs:
        from_generator = docs.search_many(q for q in questions)
        from_list = docs.search_many(questions, where=None, paths=None)
    assert len(from_generator) == 2 and from_generator == from_list
