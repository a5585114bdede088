"""The order among passages holding what a question names: the rest of the question decides."""

from __future__ import annotations

import numpy as np
import pytest

from semsearch.encode.keywords import build_keyword_index, tokenize
from semsearch.retrieve.exact import exact_scores, exact_scores_of, rest_tokens
from semsearch.retrieve.question import ParsedQuestion
from semsearch.retrieve.search import fuse, median, rank

WORDS = ["events.once", "once", "return", "returns", "PAY-517", "§", "7", "zwrot", "emitter", "promise"]


@pytest.mark.parametrize(
    "question, named",
    [
        ("What does events.once() return?", ["events.once"]),
        ("Co mówi § 7 regulaminu?", ["§ 7"]),
        ("Czego dotyczy art. 6 ust. 1 lit. a RODO?", ["art. 6", "ust. 1", "lit. a"]),
        ("Płatność odrzucona z kodem PAY-517", ["PAY-517"]),
        ("How do I return a parcel?", []),
        ("iPhoneのバッテリーを長持ちさせる方法は？", ["iPhone"]),  # not the whole unspaced question
        ("如何使用fs.readFile读取文件？", ["fs.readFile"]),
        ("\x1b[31mrot\x1b[0m Wie setze ich ein Cookie?", []),  # an escape sequence names nothing
        ("Czy \x9b31mPAY-517\x9b0m działa?", ["PAY-517"]),  # nor does its 8-bit form (C1 CSI)
    ],
)
def test_what_a_question_names_exactly(question, named):
    assert ParsedQuestion.parse(question).named_strings == named


@pytest.mark.parametrize("seed", range(10))
def test_exact_scores_equal_fused_bm25_of_the_question_without_its_names(seed):
    """Brute force: bm25s over the question's tokens minus every token of a named string."""
    rng = np.random.default_rng(seed)
    texts = [
        " ".join(rng.choice(WORDS, size=int(rng.integers(1, 20)))) for _ in range(int(rng.integers(2, 40)))
    ]
    index = build_keyword_index(texts, "en")
    import bm25s  # the reference, and scipy with it: imported by a build, not by collecting the suite

    reference = bm25s.BM25()
    reference.index([tokenize(t, "en") for t in texts], show_progress=False)
    cosine = rng.uniform(0.7, 0.9, len(texts))
    for text in ["What does events.once() return?", "Co mówi § 7 o zwrot?", "PAY-517 returns promise"]:
        question = ParsedQuestion.parse(text, "en")
        named = {t for name in question.named_strings for t in tokenize(name, "en")}
        kept = [t for t in tokenize(text, "en") if t not in named and t in reference.vocab_dict]
        bm25 = reference.get_scores(kept) if kept else np.zeros(len(texts))
        expected = fuse(cosine, np.asarray(bm25, dtype=np.float32))
        np.testing.assert_allclose(exact_scores(index, question, cosine), expected, rtol=1e-5, atol=1e-6)
        assert not set(rest_tokens(index, question)) & named


@pytest.mark.parametrize("seed", range(10))
def test_exact_scores_of_some_rows_are_the_whole_arrays(seed):
    """An engine's candidates: the rows' own cosines and the figures over every row give the
    scores ``exact_scores`` gives those rows over the whole index."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(2, 60))
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 20)))) for _ in range(count)]
    index = build_keyword_index(texts, "en")
    cosine = rng.uniform(0.6, 0.9, len(texts)).astype(np.float32)
    rows = np.flatnonzero(rng.random(len(texts)) < 0.3)
    for text in ["What does events.once() return?", "Co mówi § 7 o zwrot?", "PAY-517 returns promise"]:
        question = ParsedQuestion.parse(text, "en")
        whole = exact_scores(index, question, cosine)
        some = exact_scores_of(index, question, cosine[rows], rows, median(cosine), float(cosine.max()))
        np.testing.assert_allclose(some, whole[rows], rtol=1e-6, atol=1e-7)


def test_the_word_beside_the_name_picks_among_rows_holding_the_name():
    """Every row holds events.once; the code example repeats it, the answer says "returns"."""
    texts = [
        "events.once events.once events.once once once emitter",  # an example: the name, over and over
        "events.once Returns a promise",
        *["nothing here"] * 5,
    ]
    index = build_keyword_index(texts, "en")
    cosine = np.array([0.82, 0.80, *[0.70] * 5])  # the example is closer, as embeddings had it
    question = ParsedQuestion.parse("What does events.once() return?", "en")
    whole = fuse(cosine, index.scores(question.text))
    assert whole[0] > whole[1]  # BM25 on the whole question prefers the example
    exact = np.array([0, 1])
    ranking = whole.copy()
    ranking[exact] = exact_scores(index, question, cosine)[exact]
    assert rank(ranking, 3, first=exact).tolist()[:2] == [1, 0]
    assert rank(whole, 3, first=exact).tolist()[:2] == [0, 1]


def test_a_name_half_the_files_mention_puts_no_headings_rows_first(tmp_path, fake_embedder):
    """OpenTelemetry's docs mention OpenTelemetry in 87 of 109 files, and its glossary has an entry
    titled "OpenTelemetry": that entry was put first for every question naming the project. A
    name fewer than half the files mention still puts the section it titles first."""
    from semsearch.build.pipeline import build_index
    from semsearch.retrieve.opening import load_index
    from semsearch.retrieve.searcher import Ranking, Searcher
    from tests.helpers import write

    docs = tmp_path / "docs"
    write(docs / "glossary.md", "# Glossary\n\n## OpenTelemetry\n\nAn observability framework.\n")
    for topic in ("baggage", "sampling", "logs"):
        write(docs / f"{topic}.md", f"# {topic.title()}\n\nHow OpenTelemetry handles {topic}.\n")
    write(docs / "api.md", "# API\n\n## SpanProcessor\n\nCalled when a span starts and ends.\n")
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    index = load_index(tmp_path / "index")
    searcher = Searcher(index)
    subject = searcher.parse("What is baggage in OpenTelemetry used for?")
    assert subject.code_names == ("OpenTelemetry",)
    assert searcher.specific(subject.code_names) == []
    assert searcher.identifier_rows(subject).tolist() == []
    before = Searcher(index, Ranking(subject_names_first=True))
    glossary_entry = [row for row, chunk in enumerate(index.chunks) if chunk.source == "glossary.md"]
    assert before.identifier_rows(subject).tolist() == glossary_entry
    rare = searcher.parse("When is SpanProcessor called?")
    api = [row for row, chunk in enumerate(index.chunks) if chunk.source == "api.md"]
    assert searcher.identifier_rows(rare).tolist() == api


@pytest.mark.parametrize(
    ("mentioning", "files", "specific"),
    [
        (1, 1, True),
        (1, 2, True),
        (2, 2, False),
        (2, 5, True),
        (3, 5, False),
        (4, 9, True),
        (5, 9, False),
        (87, 109, False),
    ],
)
def test_a_name_is_specific_in_one_file_or_fewer_than_half(mentioning, files, specific):
    """An API reference written as one page still has its names put their sections first."""
    from semsearch.retrieve.searcher import _specific

    assert _specific(mentioning, files) is specific


def test_an_8_bit_escape_sequence_names_nothing():
    """``\\x9b31m`` (the C1 CSI) is read as ``\\x1b[31m`` is: "31mVisa" is no name (issue 39)."""
    plain = ParsedQuestion.parse("Czy Visa działa?", "pl")
    for escaped in (
        "Czy \x9b31mVisa\x9b0m działa?",
        "Czy \x1b[31mVisa\x1b[0m działa?",
        "Czy \x85Visa\x9c działa?",
    ):
        parsed = ParsedQuestion.parse(escaped, "pl")
        assert (parsed.proper_names, parsed.tokens) == (plain.proper_names, plain.tokens), escaped
