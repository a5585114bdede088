"""The keyword side: tokenizer rules, and BM25 scores equal to bm25s's own on random corpora."""

from __future__ import annotations

import numpy as np
import pytest

from semsearch.encode.keywords import (
    KeywordIndex,
    build_keyword_index,
    detect_language,
    heading_name,
    tokenize,
)
from semsearch.errors import IndexCorruptError


def test_tokens_fold_diacritics_and_keep_codes_and_references():
    tokens = tokenize("Błąd PAY-517, faktura FV/2026/04/118 i § 7 ust. 2", "pl")
    assert "pay517" in tokens and "517" in tokens  # a code stays whole and gives its parts
    assert "fv202604118" in tokens
    assert tokenize("PAY517", "pl")[0] == tokenize("pay-517", "pl")[0]  # separators optional
    assert "4.2" in tokenize("wersja 4.2", "pl") and "42" not in tokenize("wersja 4.2", "pl")
    assert "§_7" in tokens and "ust_2" in tokens  # a number is tied to the word before it
    assert "blad" in tokens  # case-folded, Latin diacritics removed: people type without them
    assert tokenize("Czy mogę zapłacić przy odbiorze?", "pl") == tokenize(
        "czy moge zaplacic przy odbiorze", "pl"
    )
    assert tokenize("Привет, 你好", "ru") == ["привет", "你好"]  # other scripts as they are


def test_code_names_stay_findable():
    call = tokenize("What does events.once() return?", "en")
    assert {"eventsonce", "event", "onc"} <= set(call)  # the whole name, and its parts
    assert "eventsonce" in tokenize("`events.once(emitter, name[, options])`", "en")
    assert "emitteronce" not in call  # another object's once() is another name
    flag = tokenize("node --max-old-space-size=1536 index.js", "en")
    assert {"maxoldspacesize", "max", "old", "space", "size", "indexjs"} <= set(flag)  # whole, parts
    assert "maxoldspacesize" in tokenize("what is max-old-space-size", "en")  # dashes optional
    path = tokenize("delete node_modules/.package-lock.json", "en")
    assert "node_modulespackagelockjson" in path and "lock" in path  # a path is one name too
    assert tokenize("ERR_INVALID_ARG_TYPE", "en") == ["err_invalid_arg_type"]


@pytest.mark.parametrize(
    "heading, name",
    [
        ("events.once(emitter, name[, options])", "events.once"),
        ("emitter[Symbol.for('nodejs.rejection')](err, eventName[, ...args])", "emitter"),
        ("prefer-offline", "prefer-offline"),
        ("Class: EventEmitter", "EventEmitter"),
        ("Event: 'newListener'", "newListener"),
        ("lockfileVersion", "lockfileVersion"),
        ("package.json vars", None),
        ("§ 7. Odstąpienie od umowy", None),
        ("Handling events only once", None),
        ("", None),
    ],
)
def test_a_heading_that_is_one_name(heading, name):
    assert heading_name(heading) == name


def test_rows_named_are_the_rows_under_a_heading_that_is_the_name(tmp_path):
    texts = [
        "Creates a Promise that is fulfilled when the emitter emits",
        "Edge case: events.once() can miss an event",
        "emitter.once() adds a one-time listener; events.once() waits",
        "Returns a copy of the listeners",
    ]
    headings = [
        ("Events", "events.once(emitter, name[, options])"),
        ("Events", "events.once(emitter, name[, options])", "Awaiting multiple events"),
        ("Events", "emitter.once(eventName, listener)"),
        ("Events", "package.json vars"),
    ]
    build_keyword_index(texts, "en", headings).save(tmp_path)
    loaded = KeywordIndex.load(tmp_path, len(texts), "en")
    assert loaded.rows_named("events.once").tolist() == [0, 1]  # the section and its subsection
    assert loaded.rows_named("emitter.once").tolist() == [2]
    assert loaded.rows_named("package.json").tolist() == []  # a heading in words names nothing
    assert loaded.rows_with("events.once").tolist() == [1, 2]  # mentions, wherever they are
    assert loaded.scores("#eventsonce").max() == 0  # a question never scores the marks


def test_polish_inflections_share_a_stem():
    assert tokenize("zapłaciłem", "pl") == tokenize("zapłaciłam", "pl")
    assert tokenize("płatności", "pl") == tokenize("płatność", "pl")
    assert tokenize("reklamacji", "pl") == tokenize("reklamacja", "pl")
    assert tokenize("zapłaciłem", None) == ["zaplacilem"]  # no stemmer for an unknown language


def test_english_uses_its_own_stemmer():
    assert tokenize("syncing devices", "en") == tokenize("synced device", "en")


def _random_corpus(rng: np.random.Generator, n: int) -> list[str]:
    words = ["zwrot", "zwrotu", "pieniędzy", "PAY-517", "§", "7", "dostawa", "kurier", "faktura", "a", "b"]
    return [" ".join(rng.choice(words, size=int(rng.integers(1, 30)))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(10))
def test_scores_equal_bm25s_on_random_corpora(seed, tmp_path):
    import bm25s  # the reference, and scipy with it: imported by a build, not by collecting the suite

    rng = np.random.default_rng(seed)
    texts = _random_corpus(rng, int(rng.integers(1, 80)))
    headings = [("Rozdział", f"emitter.once({i})", "PAY-517") for i in range(len(texts))]
    index = build_keyword_index(texts, "pl", headings)  # heading names change no BM25 score
    reference = bm25s.BM25()
    reference.index([tokenize(t, "pl") for t in texts], show_progress=False)
    index.save(tmp_path)
    loaded = KeywordIndex.load(tmp_path, len(texts), "pl")
    for question in _random_corpus(rng, 5) + ["nic wspólnego"]:
        known = [t for t in tokenize(question, "pl") if t in reference.vocab_dict]
        expected = reference.get_scores(known) if known else np.zeros(len(texts))
        np.testing.assert_allclose(index.scores(question), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(loaded.scores(question), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("seed", range(10))
def test_sparse_scores_are_the_whole_arrays_nonzero_rows_bit_for_bit(seed):
    """What an engine's candidates are ordered by: the rows holding a token, and the very scores
    ``token_scores`` gives them (a token asked twice counts twice; an unknown one adds nothing)."""
    rng = np.random.default_rng(seed)
    texts = _random_corpus(rng, int(rng.integers(1, 80)))
    index = build_keyword_index(texts, "pl")
    for question in [*_random_corpus(rng, 5), "nic wspólnego", "zwrot zwrot kurier", ""]:
        tokens = tokenize(question, "pl")
        whole = index.token_scores(tokens)
        rows, scores = index.sparse_token_scores(tokens)
        held = sorted({int(r) for t in tokens for r in index._column(t)[0]})
        assert rows.tolist() == held
        assert scores.dtype == whole.dtype and scores.tobytes() == whole[rows].tobytes()


def test_inconsistent_files_are_refused(tmp_path):
    build_keyword_index(["jeden dwa", "trzy"], None).save(tmp_path)
    (tmp_path / "keywords.vocab.txt").write_text("jeden\n", encoding="utf-8")  # truncated
    with pytest.raises(ValueError):
        KeywordIndex.load(tmp_path, 2, None)
    build_keyword_index(["jeden dwa", "trzy"], None).save(tmp_path)
    too_few_rows = KeywordIndex.load(tmp_path, 1, None)  # every column is checked where it is read
    with pytest.raises(IndexCorruptError, match="chunks the index does not hold"):
        too_few_rows.scores("trzy")
    with pytest.raises(IndexCorruptError, match="chunks the index does not hold"):
        too_few_rows.rows_with("trzy")
    assert too_few_rows.scores("jeden")[0] > 0  # a column within range still reads


def test_rows_with_a_code_come_from_its_column(tmp_path):
    texts = ["Błąd **PAY-517** przy płatności", "PAY-402 i PAY-5170", "kod pay-517 małymi", "nic"]
    build_keyword_index(texts, "pl").save(tmp_path)
    loaded = KeywordIndex.load(tmp_path, len(texts), "pl")
    assert loaded.rows_with("PAY-517").tolist() == [0, 2]
    assert loaded.rows_with("PAY517").tolist() == [0, 2]
    assert loaded.rows_with("ABC-123").tolist() == []
    assert loaded.vocab.get("pay517") is not None and loaded.vocab.get("pay51") is None


def test_rows_with_all_parts_of_a_reference(tmp_path):
    texts = [
        "interes (art. 6 ust. 1 lit. f RODO)",
        "zgoda (art. 6 ust. 1 lit. a RODO)",
        "umowa (Art. 6 ust. 1 lit. b RODO), a także lit. a innej ustawy",  # parts need not touch
        "§ 7. Odstąpienie od umowy",
        "zobacz §7 i art. 7",
    ]
    build_keyword_index(texts, "pl").save(tmp_path)
    loaded = KeywordIndex.load(tmp_path, len(texts), "pl")
    assert loaded.rows_with_all(["art. 6", "ust. 1", "lit. a"]).tolist() == [1, 2]
    assert loaded.rows_with_all(["art. 6", "ust. 1", "lit. f"]).tolist() == [0]
    assert loaded.rows_with_all(["§ 7"]).tolist() == [3, 4]
    assert loaded.rows_with_all(["art. 9", "ust. 1"]).tolist() == []
    assert loaded.rows_with_all(["RODO"]).tolist() == []  # a plain word is no reference part


def test_the_corpus_language_is_what_most_of_its_texts_are_written_in():
    polish = ["Zwrot pieniędzy następuje w ciągu czternastu dni od otrzymania oświadczenia."] * 5
    english = ["Returns the listener array for the event named eventName; see emitter.once()."] * 3
    code = ["```js\nconst { once } = require('node:events');\n```"]
    assert detect_language(polish + english + code) == "pl"
    assert detect_language(english + code) == "en"  # code-heavy English docs stay English
    assert detect_language(["台北捷運的第一條路線是哪一年通車的？"] * 2) == "zh"
    assert detect_language([]) is None
    assert detect_language(["   ", ""]) is None


def test_rows_with_tokens_against_set_intersection():
    import random

    from semsearch.encode.keywords import build_keyword_index, tokenize

    rng = random.Random(11)
    words = ["alfa", "beta", "gamma", "delta", "epsilon", "zeta"]
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 6))) for _ in range(300)]
    index = build_keyword_index(texts, None)
    held = [set(tokenize(text)) for text in texts]
    for _ in range(200):
        asked = rng.sample(words, rng.randint(1, 4))
        expected = [row for row, tokens in enumerate(held) if set(asked) <= tokens]
        assert index.rows_with_tokens(asked).tolist() == expected
    assert index.rows_with_tokens(["alfa", "nowhere"]).tolist() == []
