"""What the PostgreSQL store computes in the database, checked against numpy on the same index:
the candidates' cosines, BM25 sums and the median, the page figures, and the ranking built on
them against the folder index's. On a real server (``postgres_server``), so slow."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semsearch.collection import Collection
from semsearch.evaluation.questions import load_questions
from semsearch.retrieve.engine import EngineSearcher
from semsearch.retrieve.opening import load_index
from semsearch.retrieve.search import median
from semsearch.store.file_records import file_row_starts
from semsearch.store.postgres import files as remote_files
from semsearch.store.postgres.files import RemoteFiles
from semsearch.store.postgres.queries import FILTER_EXACT_ROWS
from tests.helpers import DATA, HashingEmbedder
from tests.postgres import connected

pytestmark = pytest.mark.slow

QUESTIONS = [
    "Ile kosztuje dostawa do paczkomatu?",
    "Jak zwrócić towar kupiony na raty?",
    "Co oznacza kod PAY-517?",
    "reklamacja uszkodzonej przesyłki",
]


@pytest.fixture
def opened(fake_sample_index, fake_sample_postgres):
    """The same index opened from its folder and from PostgreSQL, forced to search by candidates
    (an index above ``EXACT_ROWS`` is; this one has 156 passages)."""
    folder, postgres = load_index(fake_sample_index), load_index(fake_sample_postgres)
    postgres.store._queries.exact_rows = 0
    yield folder, postgres
    postgres.chunks.close()


def test_a_read_gives_back_what_the_folder_index_holds(opened, fake_sample_postgres):
    folder, postgres = opened
    assert postgres.meta.files == folder.meta.files and postgres.meta.margin == folder.meta.margin
    assert list(postgres.chunks) == list(folder.chunks.load())
    assert np.array_equal(np.asarray(postgres.vectors), folder.vectors)
    assert np.array_equal(postgres.vectors[[5, 1, 5]], folder.vectors[[5, 1, 5]])
    assert np.array_equal(postgres.offtopic, folder.offtopic)
    assert postgres.chunks.sha256() == postgres.meta.chunks_digest
    for token in ("dostaw", "pay517", "zwrot", "#nothing", "nie-ma-takiego"):
        for side in ("keywords", "pages"):
            ours = getattr(postgres, side) if side == "keywords" else postgres.pages.keywords
            theirs = getattr(folder, side) if side == "keywords" else folder.pages.keywords
            assert [a.tolist() for a in ours._column(token)] == [a.tolist() for a in theirs._column(token)]
            assert ours.document_frequency(token) == theirs.document_frequency(token)
    fresh = load_index(fake_sample_postgres)
    counted = fresh.keywords  # a word's weight reads its count, not its column
    words = ["dostaw", "zwrot", "nie-ma-takiego"]
    assert counted.idf(words) == folder.keywords.idf(words)
    assert counted.holds_any_word_of(["dostaw"]) and not counted.holds_any_word_of(["nie-ma-takiego"])
    assert counted.vocab._cache == {} and counted.vocab._counts["dostaw"] > 0
    fresh.chunks.close()
    assert np.array_equal(postgres.pages.starts, folder.pages.starts)
    assert np.array_equal(postgres.pages.topics, folder.pages.topics)
    assert postgres.keywords.vocab.has_prefix("dost") and not postgres.keywords.vocab.has_prefix("qqq")


def test_the_file_records_are_read_when_asked_for_and_are_the_folder_indexs(
    opened, fake_sample_postgres, monkeypatch
):
    """Opening reads no file record (the record's meta holds none); each lookup, the iteration
    in the build's order, the rows' starts and a filter's mask equal the folder index's."""
    folder, postgres = opened
    with connected(fake_sample_postgres) as connection:
        assert json.loads(connection.execute("SELECT meta FROM semsearch_index").fetchone()[0])["files"] == {}
    files, theirs = postgres.meta.files, folder.meta.files
    assert isinstance(files, RemoteFiles) and len(files) == len(theirs) > 3
    assert list(files) == list(theirs) and list(files.items()) == list(theirs.items())
    monkeypatch.setattr(remote_files, "BATCH", 3)  # streamed a few at a time, in the build's order
    assert list(files) == list(theirs) and list(files.values()) == list(theirs.values())
    for source in [*theirs, "missing.md", "../dostawa.md"]:
        assert files.get(source) == theirs.get(source) and (source in files) == (source in theirs)
    assert np.array_equal(file_row_starts(files), file_row_starts(theirs))
    assert len(file_row_starts(theirs)) == sum(r.has_text for r in theirs.values())
    assert files.loaded() == theirs and postgres.meta.with_files_read().files == theirs
    for paths in (["dostawa.md"], ["*.md"], ["zwroty.md", "faq/**"]):
        assert np.array_equal(postgres.allowed_rows(paths), folder.allowed_rows(paths))
    assert not folder.allowed_rows(["dostawa.md"]).all()


def test_the_candidates_are_numpys_top_rows_and_the_figures_numpys(opened):
    folder, postgres = opened
    embedder = HashingEmbedder()
    mask = folder.allowed_rows(["dostawa.md", "zwroty.md"])
    for question in QUESTIONS:
        vector = embedder.embed_queries([question])[0]
        tokens = folder.keywords.token_scores  # noqa: F841 - the folder's BM25, below
        parsed = EngineSearcher(postgres).parse(question)
        words = parsed.tokens_in(folder.keywords.language)
        cosine = folder.cosines(vector)
        keyword = folder.keywords.token_scores(words)
        for allowed, filter_exact_rows in ((None, 0), (mask, FILTER_EXACT_ROWS), (mask, 0)):
            postgres.store._queries.filter_exact_rows = filter_exact_rows  # 0: through the HNSW graph
            found = postgres.store.candidates(vector, words, 10, allowed, np.array([3, 77]))
            scores = dict(zip(found.rows.tolist(), found.cosine.tolist(), strict=True))
            assert all(scores[r] == pytest.approx(cosine[r], abs=1e-6) for r in scores)
            searched = cosine if allowed is None else np.where(allowed, cosine, -np.inf)
            assert set(np.argsort(-searched, kind="stable")[:10].tolist()) <= set(scores)
            assert {3, 77, int(np.argmax(cosine)), int(np.argmax(keyword))} <= set(scores)
            kept = keyword if allowed is None else np.where(allowed, keyword, 0)
            assert set(np.flatnonzero(kept)[np.argsort(-kept[kept > 0], kind="stable")][:10].tolist()) <= set(
                scores
            )
            by_row = dict(zip(found.rows.tolist(), found.keyword.tolist(), strict=True))
            assert all(by_row[r] == pytest.approx(keyword[r], abs=1e-5) for r in by_row)
            assert found.median == pytest.approx(median(cosine), abs=1e-6)
            assert found.best == pytest.approx(cosine.max(), abs=1e-6)
            assert found.keyword_best == pytest.approx(keyword.max(), abs=1e-5)


def test_the_page_figures_are_numpys(opened):
    folder, postgres = opened
    pages = folder.pages
    vector = HashingEmbedder().embed_queries(["Jak zwrócić towar kupiony na raty?"])[0]
    cosine = folder.cosines(vector)
    of_row = pages.page_of_rows()
    means = np.bincount(of_row, weights=cosine) / np.diff(pages.starts)
    words = (
        EngineSearcher(postgres)
        .parse("Jak zwrócić towar kupiony na raty?")
        .tokens_in(pages.keywords.language)
    )
    page_keywords = pages.keywords.token_scores(words)
    asked = np.array([0, 2, 5])
    figures = postgres.store.page_figures(vector, words, asked)
    assert figures.mean == pytest.approx(means[asked], abs=1e-6)
    assert figures.mean_median == pytest.approx(np.median(means), abs=1e-6)
    assert figures.mean_best == pytest.approx(means.max(), abs=1e-6)
    assert figures.keyword == pytest.approx(page_keywords[asked], abs=1e-5)
    assert figures.keyword_best == pytest.approx(page_keywords.max(), abs=1e-5)
    for slot, page in enumerate(asked):
        own = np.sort(cosine[pages.starts[page] : pages.starts[page + 1]])[::-1][:2]
        assert figures.top_two[slot][: len(own)] == pytest.approx(own, abs=1e-6)


def test_questions_searched_by_candidates_rank_and_judge_as_on_the_folder(
    fake_sample_index, fake_sample_postgres
):
    """Every question of the sample's sets, in each mode, with and without a filter: the same
    passages and decisions, searched by candidates (the whole index scored: ``test_postgres``)."""
    embedder = HashingEmbedder()
    asked = [q.question for name in ("docs_questions.jsonl", "docs_identifier_questions.jsonl")
             for q in load_questions(DATA / name)]  # fmt: skip
    differing = 0
    with (
        Collection(fake_sample_index, embedder=embedder) as folder,
        Collection(fake_sample_postgres, embedder=embedder) as postgres,
    ):
        postgres.index.store._queries.exact_rows = 0
        for mode in ("hybrid", "dense", "keyword"):
            for paths in ((), ("dostawa.md", "regulamin.md")):
                for question in asked:
                    one = folder.search(question, 5, mode=mode, paths=paths)
                    two = postgres.search(question, 5, mode=mode, paths=paths)
                    differing += [h.row for h in one.hits] != [h.row for h in two.hits] or (
                        one.answered != two.answered
                    )
    assert differing <= 2  # of 774 searches (1 when measured: a fifth passage)


def test_info_and_the_chunks_check_read_every_passage(fake_sample_postgres):
    index = load_index(fake_sample_postgres)
    index.verify()
    assert len(list(index.chunks)) == len(index.chunks) == index.meta.chunks
    index.chunks.close()
