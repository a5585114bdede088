"""The off-topic bank's vectors: shipped for the default model, cached for any other."""

from __future__ import annotations

import numpy as np
import pytest

from semsearch.build.pipeline import build_index
from semsearch.encode.embedders import DEFAULT_MODEL, load_embedder
from semsearch.gate.bank import bank_vectors, cache_folder, offtopic_bank, vectors_name
from tests.helpers import REPO, write


class Counting:
    """A real embedder that counts the queries it embeds."""

    def __init__(self, embedder):
        self._embedder = embedder
        self.spec, self.dim, self.max_input_tokens = embedder.spec, embedder.dim, embedder.max_input_tokens
        self.queries = 0

    def embed_queries(self, texts):
        self.queries += len(texts)
        return self._embedder.embed_queries(texts)

    def embed_passages(self, texts):
        return self._embedder.embed_passages(texts)

    def passage_tokens(self, text):
        return self._embedder.passage_tokens(text)


@pytest.mark.slow
def test_the_shipped_vectors_are_the_default_models_own():
    embedder = load_embedder(DEFAULT_MODEL)
    counting = Counting(embedder)
    shipped = bank_vectors(counting)
    assert counting.queries == 0  # read from the package, not embedded
    fresh = embedder.embed_queries([question for _, question in offtopic_bank()])
    assert shipped.shape == (len(offtopic_bank()), embedder.dim)
    # Each row is its question's vector: the same direction as embedding it here. Not bit for bit:
    # the engine's arithmetic differs by CPU (seen: rows 0.99990-0.99998 apart on an AVX-512 Xeon,
    # identical on the machine that made the file), while two different bank questions are at
    # most 0.95 alike, so a shuffled or another model's file fails by far.
    assert float(np.min(np.sum(shipped * fresh, axis=1))) > 0.9995


@pytest.mark.slow
def test_a_one_file_folder_embeds_its_titles_but_no_bank_question(tmp_path):
    write(tmp_path / "docs" / "a.md", "# Zwroty\n\n## Termin\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    counting = Counting(load_embedder(DEFAULT_MODEL))
    build_index(tmp_path / "docs", tmp_path / "index", embedder=counting)
    assert counting.queries == 1  # the one section title asked as a question


def test_another_models_bank_vectors_are_cached_after_its_first_build(tmp_path, fake_embedder, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    write(tmp_path / "docs" / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    counting = Counting(fake_embedder)
    build_index(tmp_path / "docs", tmp_path / "first", embedder=counting)
    assert counting.queries == len(offtopic_bank()) + 1
    assert (cache_folder() / vectors_name(fake_embedder.spec, fake_embedder.dim)).is_file()
    counting.queries = 0
    build_index(tmp_path / "docs", tmp_path / "second", embedder=counting)
    assert counting.queries == 1


def test_a_damaged_cache_file_is_embedded_again(tmp_path, fake_embedder, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = cache_folder() / vectors_name(fake_embedder.spec, fake_embedder.dim)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"garbage")
    vectors = bank_vectors(fake_embedder)
    assert vectors.shape == (len(offtopic_bank()), fake_embedder.dim)
    np.testing.assert_allclose(np.load(path), vectors)


@pytest.mark.slow  # embeds every evaluation question
def test_no_bank_question_duplicates_an_evaluation_question():
    """The bank must not know the eval sets' questions (issue 14): no bank row may be a near-copy,
    paraphrase or translation of a question in tests/data/*.jsonl or in the shared sets beside
    the checkout (../shared/data/*/questions.jsonl, when present). See ``bank.near_duplicates``."""
    from semsearch.evaluation.questions import load_questions
    from semsearch.gate.bank import near_duplicates

    root = REPO
    ours = sorted((root / "tests" / "data").glob("*.jsonl"))
    shared = sorted((root.parent / "shared" / "data").glob("*/questions.jsonl"))
    embedder = load_embedder(DEFAULT_MODEL)
    bank = offtopic_bank()
    # The margin reads each bank row against its nearest questions in the pool, so a larger pool
    # can hide a pair: the team's own sets are checked alone too, whatever lies beside the checkout.
    for files in (ours, ours + shared):
        questions = [q.question for f in files for q in load_questions(f)]
        pairs = near_duplicates(bank_vectors(embedder), embedder.embed_queries(questions))
        assert [(bank[i][1], questions[j]) for i, j, *_ in pairs] == []
