"""A question is parsed once on its way in (``ParsedQuestion``), and each step of its search reads
that record: the ranking, the rows holding what it names, the names rule, the answer."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from semsearch.collection import Collection
from semsearch.evaluation.quality import evaluate
from semsearch.evaluation.questions import Question
from semsearch.retrieve import lexing
from semsearch.retrieve.question import ParsedQuestion

QUESTIONS = [
    "Wyskoczył mi błąd PAY-517 – co poszło nie tak?",  # a code
    "Co mówi § 7 regulaminu o zwrotach?",  # a reference
    "Czy events.once() działa w aplikacji?",  # a name as code writes it
    "Ile kosztuje dostawa do paczkomatu?",  # none of these
]
PARSERS = ("identifiers", "references", "code_names")


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """How often each parser ran, on which question, wherever a module holds it."""
    counted: Counter = Counter()
    for name in PARSERS:
        original = getattr(lexing, name)

        def counting(question, _name=name, _original=original):
            counted[_name, question] += 1
            return _original(question)

        for module in list(sys.modules.values()):
            if (
                getattr(module, "__name__", "").startswith("semsearch")
                and getattr(module, name, None) is original
            ):
                monkeypatch.setattr(module, name, counting)
    return counted


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "dense"])
def test_each_parser_reads_a_question_once_per_search(fake_sample_index, calls, mode):
    with Collection(fake_sample_index) as docs:
        answers = docs.search_many(QUESTIONS, 3, mode=mode)
        assert calls == Counter({(name, question): 1 for name in PARSERS for question in QUESTIONS})
        calls.clear()
        docs.search(QUESTIONS[0], 3, mode=mode, min_score=0.1)
        assert calls == Counter({(name, QUESTIONS[0]): 1 for name in PARSERS})
    assert answers[0].missing == () and answers[1].question == QUESTIONS[1]


def test_eval_parses_each_question_once(fake_sample_index, calls):
    with Collection(fake_sample_index) as docs:
        asked = [
            Question(question=text, sources=("platnosci.md",), line=n) for n, text in enumerate(QUESTIONS, 1)
        ]
        report = evaluate(docs, asked, k=3)
    assert len(report.results) == len(QUESTIONS)
    assert calls == Counter({(name, question): 1 for name in PARSERS for question in QUESTIONS})


def test_the_record_holds_what_the_parsers_find():
    parsed = ParsedQuestion.parse("Czy art. 6 ust. 1 i PAY-517 dotyczą events.once?", "pl")
    assert parsed.identifiers == ("PAY-517",)
    assert parsed.references == (("art. 6", "ust. 1"),)
    assert parsed.code_names == ("events.once",)
    assert parsed.names_exact and parsed.names_anything
    assert parsed.named_strings == ["PAY-517", "art. 6", "ust. 1", "events.once"]
    assert parsed.tokens_in("pl") == parsed.tokens and parsed.tokens
    plain = ParsedQuestion.parse("Jak zwrócić towar?")
    assert not plain.names_exact and not plain.names_anything and plain.named_strings == []


def test_the_question_is_cut_into_keywords_once_for_ranking_gate_and_snippets(fake_sample_index, monkeypatch):
    """Its keyword tokens are made once (``ParsedQuestion.tokens``): the ranking, the page
    evidence, the gate's word evidence and every snippet read them, none tokenizes the text again."""
    from semsearch.encode import keywords

    original, texts = keywords.tokenize, Counter()

    def counting(text, *args, **kwargs):
        texts[text] += 1
        return original(text, *args, **kwargs)

    for module in list(sys.modules.values()):
        if (
            getattr(module, "__name__", "").startswith("semsearch")
            and getattr(module, "tokenize", None) is original
        ):
            monkeypatch.setattr(module, "tokenize", counting)
    question = QUESTIONS[3]
    with Collection(fake_sample_index) as docs:
        answer = docs.search(question, 3, min_score=-1.0)
        snippets = [hit.snippet(answer.asked) for hit in answer.hits]
        refused = docs.search(question, 3)
    assert answer.hits and all(snippet.text for snippet in snippets)
    assert refused.parsed is not None and texts[question] == 2, texts  # once per search


def test_words_split_as_one_pattern_over_every_separator_and_unspaced_character():
    """``words`` (runs between separators, split at Chinese, Japanese and Korean characters
    only when the question holds one) against the single class of both, on random text."""
    import random
    import re

    one_pattern = re.compile(rf"[^\s\"'„”“«»()\[\]{{}},;:!?`{lexing.UNSPACED}]+")
    spaced = "ab1_.-Ł ,;:!?\"'„”«»()[]{}`\té\U0001f600"
    alphabet = spaced + "の中한\u3000\u30ff\u3400\u9fff\uac00\ud7af\uff01\uffef"  # range edges
    rng = random.Random(7)
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(40))) for _ in range(3000)]
    texts += ["iPhoneのバッテリー", "KotlinでAndroidアプリ", "plain ascii words, only"]
    unspaced = sum(lexing.has_unspaced(text) for text in texts)
    assert 0 < unspaced < len(texts)  # both paths are taken
    for text in texts:
        assert lexing.words(text) == one_pattern.findall(text), text
    assert lexing.words("iPhoneのバッテリー") == ["iPhone"]
