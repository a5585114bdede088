"""The no-answer gate (issue 14): relevance = best cosine minus the question's baseline (its
similarity to the off-topic bank less its word evidence), cut per corpus at build time (see
``threshold``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semsearch.encode.keywords import build_keyword_index, tokenize
from semsearch.evaluation.quality import QuestionResult
from semsearch.evaluation.questions import Question
from semsearch.gate.calibration import (
    OFFTOPIC_QUANTILE,
    ONTOPIC_QUANTILE,
    best_rows,
    calibrate,
    choose_cut,
    language_offsets,
)
from semsearch.gate.threshold import (
    GATE,
    RULES,
    answer_threshold,
    background_similarity,
    baseline,
    language_centroids,
    nearest_languages,
    top_mean,
)
from semsearch.retrieve.opening import load_index
from semsearch.retrieve.searcher import Searcher
from tests.helpers import pierogi_chunks


def unit(*rows):
    matrix = np.asarray(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_background_similarity_is_the_mean_of_the_three_nearest_bank_questions():
    bank = unit([1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0])
    query = unit([1, 0, 0])[0]
    expected = (1 + 1 / np.sqrt(2) + 0) / 3
    assert background_similarity(query, bank) == pytest.approx(expected, abs=1e-6)
    assert background_similarity(query, bank, legacy=True) == pytest.approx(1.0)
    assert background_similarity(query, np.zeros((0, 3), np.float32)) == -1.0


def test_answer_threshold_adds_the_cut_to_the_background_legacy_takes_the_higher():
    assert answer_threshold(0.02, 0.80) == pytest.approx(0.82)
    assert answer_threshold(0.77, 0.80, legacy=True) == 0.80
    assert answer_threshold(0.85, 0.80, legacy=True) == 0.85


def test_top_mean_takes_what_there_is():
    assert top_mean(np.array([[0.1, 0.5, 0.3, 0.9]])).tolist() == pytest.approx([(0.9 + 0.5 + 0.3) / 3])
    assert top_mean(np.array([[0.4, 0.2]])).tolist() == pytest.approx([0.3])


def test_the_cut_lies_between_the_two_references():
    off = np.linspace(-0.08, 0.0, 51)
    on = np.linspace(0.02, 0.10, 51)
    high_off, low_on = np.percentile(off, OFFTOPIC_QUANTILE), np.percentile(on, ONTOPIC_QUANTILE)
    assert (high_off, low_on) == pytest.approx((-0.012, 0.028))  # p85 of off, p10 of on
    assert choose_cut(off, on) == pytest.approx((high_off + low_on) / 2)
    assert choose_cut(off, np.empty(0)) == pytest.approx(high_off)
    assert choose_cut(np.empty(0), on) == pytest.approx(low_on)
    assert choose_cut(np.empty(0), np.empty(0)) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_best_rows_against_argsort(seed):
    rng = np.random.default_rng(seed)
    vectors = unit(*rng.normal(size=(40, 6)))
    queries = unit(*rng.normal(size=(7, 6)))
    brute = np.argsort(-(queries @ vectors.T), axis=1)[:, :3]
    for block in (9, 2, None):  # blocks smaller than the corpus, than k, and the default
        best, rows = best_rows(vectors, queries, k=3, block=block)
        assert best == pytest.approx((queries @ vectors.T).max(axis=1))
        assert [sorted(r) for r in rows.tolist()] == [sorted(r) for r in brute.tolist()]


def test_word_coverage_against_brute_force():
    texts = ["zwrot towaru w 14 dni", "pogoda w krakowie", "zwrot pieniędzy przelewem", "kurier dpd"]
    keywords = build_keyword_index(texts, None)
    holders = [set(tokenize(t)) for t in texts]

    def brute(question, rows):
        words = set(tokenize(question))
        weight = {w: np.log((len(texts) + 1) / (sum(w in h for h in holders) + 0.5)) for w in words}
        return max(sum(weight[w] for w in words if w in holders[r]) for r in rows) / sum(weight.values())

    for question, rows in [("zwrot towaru", [0, 2]), ("zwrot towaru", [2]), ("narty w alpach", [1, 3])]:
        assert keywords.coverage(question, [texts[r] for r in rows]) == pytest.approx(brute(question, rows))
    assert keywords.coverage("zwrot towaru w 14 dni", texts[:1]) == pytest.approx(1.0)
    assert keywords.coverage("narty alpy", texts) == 0.0
    assert keywords.coverage("zwrot", []) == 0.0


def test_word_evidence_lowers_the_baseline_and_gate_2_has_none():
    assert baseline(RULES[GATE], 0.84, 1.0) < baseline(RULES[GATE], 0.84, 0.0)
    assert baseline(RULES[2], 0.84, 1.0) == pytest.approx(0.84)  # indexes built with gate 2 read as before


def test_eval_decides_as_ask_does():
    """``QuestionResult.passes_at`` and ``Index.search`` both go through ``answer_threshold``."""
    question = Question(line=1, question="q")
    for legacy in (False, True):
        result = QuestionResult(question, object(), 0.84, None, 0.81, 0.02, legacy=legacy)
        assert result.passes == (answer_threshold(0.02, 0.81, legacy) <= 0.84)
    assert QuestionResult(question, object(), 0.84, None, 0.81, 0.02).relevance == pytest.approx(0.03)


def test_calibration_records_the_cut_and_keeps_every_language_as_background(fake_embedder, monkeypatch):
    from semsearch.gate import calibration as calibrating
    from semsearch.ingest.chunking import embedding_text

    bank = [("pl", f"pogoda jutro {i}") for i in range(8)]
    bank += [("en", f"weather tomorrow {i}") for i in range(8)]
    monkeypatch.setattr(calibrating, "offtopic_bank", lambda: bank)
    chunks = pierogi_chunks()
    vectors = fake_embedder.embed_passages([embedding_text(c) for c in chunks])
    calibration = calibrate(fake_embedder, vectors, chunks)
    assert calibration.record.gate == GATE
    assert calibration.record.value == pytest.approx(calibration.margin, abs=1e-6)
    assert {bank[i][0] for i in calibration.background_rows} == {"pl", "en"}
    assert calibration.languages == [language for language, _ in bank]
    assert set(calibration.record.language_offsets) <= {"pl", "en"}
    assert json.dumps(calibration.record.to_json())


@pytest.mark.parametrize("seed", range(3))
def test_language_centroids_and_nearest_languages_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(40, 8)).astype(np.float32)
    languages = [["pl", "en", "de"][i % 3] for i in range(40)]
    names, centroids = language_centroids(vectors, languages)
    assert names == ["de", "en", "pl"]
    for name, centroid in zip(names, centroids, strict=True):
        mean = vectors[[i for i, language in enumerate(languages) if language == name]].mean(axis=0)
        assert centroid == pytest.approx(mean / np.linalg.norm(mean), abs=1e-5)
    queries = rng.normal(size=(25, 8)).astype(np.float32)
    expected = [names[int(np.argmax([q @ c for c in centroids]))] for q in queries]
    assert nearest_languages(queries, names, centroids) == expected
    assert nearest_languages(queries, [], np.empty((0, 8))) == [""] * 25


def test_language_offsets_are_a_share_of_each_languages_median_gap():
    relevance = np.array([0.30, 0.32, 0.34, 0.36, 0.38, 0.10, 0.12, 0.14, 0.16, 0.18, 0.9, 0.9])
    languages = ["pl"] * 5 + ["de"] * 5 + ["cs"] * 2  # two Czech questions: too few to measure
    overall = float(np.median(relevance))
    offsets = language_offsets(relevance, languages, 0.5)
    assert offsets == pytest.approx({"pl": 0.5 * (0.34 - overall), "de": 0.5 * (0.14 - overall)})
    assert language_offsets(relevance, languages, 0.0) == {}
    assert language_offsets(np.empty(0), [], 0.5) == {}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("question", "answered"),
    [
        ("Ile mam dni na zwrot towaru?", True),  # issue 14: refused by the nearest-bank-question rule
        ("Chcę odzyskać to, co zapłaciłem", True),
        ("Jaka jest pogoda w Krakowie?", False),
        ("How long do I boil an egg?", False),  # an English question about a Polish shop's docs
        ("asdfghjkl", False),  # an outside probe: keyboard mash, lorem ipsum and "test" were answered
        ("lorem ipsum dolor sit amet", False),
        ("test", False),
        ("hasło", True),  # a one-word search for a term the documents use stays answered
        ("reklamacja", True),
    ],
)
def test_the_gate_on_the_sample_docs(sample_index, question, answered):
    from semsearch.retrieve.opening import embedder_for

    index = load_index(sample_index)
    assert index.meta.margin.gate == GATE
    vector = embedder_for(index).embed_queries([question])[0]
    result = Searcher(index).search(question, vector, k=3)
    assert bool(result.hits) == answered, (result.threshold, [h.score for h in result.hits])


@pytest.mark.slow
def test_a_question_in_another_language_than_the_docs_gets_its_loss_back(sample_index):
    """Gate 4: the bank measures each language's loss on the corpus; a German question on the
    Polish sample docs has a lower baseline than a Polish one (by half the languages' gap)."""
    from semsearch.retrieve.opening import embedder_for

    index = load_index(sample_index)
    assert len(index.meta.offtopic.languages) == len(index.offtopic)
    assert index.meta.margin.titles_language == "pl"
    german, polish = embedder_for(index).embed_queries(
        ["Wie viele Tage habe ich, um eine Bestellung zurückzugeben?", "Ile mam dni na zwrot towaru?"]
    )
    offsets = index.meta.margin.language_offsets
    assert index.gate.language_offset(german) == pytest.approx(offsets["de"])
    assert index.gate.language_offset(polish) == pytest.approx(offsets["pl"])
    assert offsets["pl"] - offsets["de"] > 0.01


@pytest.mark.slow
def test_an_index_built_with_gate_2_is_read_with_its_own_rule(sample_index, tmp_path):
    """Gate 2's cut was derived for background similarity alone: reading it with gate 3's
    weights (or gate 4's language offsets) would move every question's threshold. Its next
    build recalibrates it."""
    import shutil

    from semsearch.retrieve.opening import embedder_for

    copy = tmp_path / "index"
    shutil.copytree(sample_index, copy)
    meta = json.loads((copy / "meta.json").read_text())
    meta["min_score"]["gate"] = 2
    (copy / "meta.json").write_text(json.dumps(meta))
    old, new = load_index(copy), load_index(sample_index)
    question = "Ile mam dni na zwrot towaru?"
    vector = embedder_for(new).embed_queries([question])[0]
    similarity = background_similarity(vector, new.background)
    assert old.gate.baseline(question, vector, old.cosines(vector)) == pytest.approx(similarity)
    offset = new.gate.language_offset(vector)
    assert (
        new.gate.baseline(question, vector, new.cosines(vector)) < 0.75 * similarity + offset
    )  # its words are in the docs
    assert Searcher(old).search(question, vector, 3).threshold == pytest.approx(old.gate.margin + similarity)


@pytest.mark.slow
def test_word_evidence_comes_from_the_files_searched(sample_index):
    """An outside probe: under --path konto.md, "PAY-517" (in platnosci.md) still lowered the
    threshold. Evidence is read in the allowed rows only; all rows allowed is no filter."""
    from semsearch.retrieve.opening import embedder_for

    index = load_index(sample_index)
    question = "Co oznacza błąd PAY-517?"
    vector = embedder_for(index).embed_queries([question])[0]
    everywhere = np.ones(len(index.chunks), dtype=bool)
    without_code = everywhere.copy()
    without_code[index.keyword_index().rows_with("PAY-517")] = False
    unfiltered = index.gate.baseline(question, vector, index.cosines(vector))
    assert index.gate.baseline(question, vector, index.cosines(vector), allowed=everywhere) == pytest.approx(
        unfiltered
    )
    assert (
        index.gate.baseline(question, vector, index.cosines(vector), allowed=without_code)
        > unfiltered + 0.005
    )
    nothing = np.zeros(len(index.chunks), dtype=bool)
    assert (
        index.gate.baseline(question, vector, index.cosines(vector), allowed=nothing) >= unfiltered
    )  # no evidence at all


@pytest.mark.slow
def test_inputs_in_no_language_are_background_only_for_words_the_documents_never_use(sample_index):
    index = load_index(sample_index)
    languages = index.meta.offtopic.languages
    mash = [r for r in index.meta.offtopic.background_rows if languages[r] == "-"]
    assert len(mash) >= 20  # the bank's keyboard mash and test words are kept on these docs
    assert len(index.gate.background_for("asdfghjkl")) == len(index.background)
    assert len(index.gate.background_for("hasło")) == len(index.background) - len(mash)
    assert "-" not in index.meta.margin.language_offsets
