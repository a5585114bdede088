"""Page-level evidence of each question, for the no-answer gate (issue 36, item 6): collected
through `eval`'s own path and pickled, so that `pages.py` measures rules without ranking again.

    OMP_NUM_THREADS=1 RANK_WORK=/work/cache/gatepages PYTHONPATH=. \
        python bench/gate/page_features.py [SET ...]

$RANK_WORK holds the ranking bench's indexes (`bench/ranking_sets.py`; `idx/` may be a link to
another checkout's, they are only read) and its embedding cache. Per set, three kinds of rows,
each with the gate's relevance and page evidence (`features_of`):

- the set's own questions, through `Searcher.judge` (as `eval` decides; checked against
  `bench_ranking.gate_figures`, which runs `evaluate` itself);
- the off-topic bank questions the build kept, each leave-one-out as the build reads them;
- the corpus's section titles asked as questions (the build's on-topic reference).

With their relevance of the best cosine, the last two reproduce every index's margin exactly
(`pages.py` checks it). Written to $RANK_WORK/gate-pages/<set>.pkl.
"""

from __future__ import annotations

import pickle
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_ranking import gate_figures  # noqa: E402
from ranking_candidates import PREVIOUS  # noqa: E402
from ranking_sets import SETS, WORK, CachedModel, Case, load_case  # noqa: E402

from semsearch.encode.keywords import tokenize  # noqa: E402
from semsearch.encode.pages import PageIndex  # noqa: E402
from semsearch.gate.bank import NO_LANGUAGE, offtopic_bank  # noqa: E402
from semsearch.gate.calibration import section_titles  # noqa: E402
from semsearch.gate.decision import GATE_DEPTH, read_passage  # noqa: E402
from semsearch.gate.threshold import (  # noqa: E402
    EVIDENCE_PASSAGES,
    baseline,
    coverages,
    top_mean,
)
from semsearch.ingest.pages import page_names  # noqa: E402
from semsearch.retrieve.index import Index  # noqa: E402
from semsearch.retrieve.pages import page_evidence  # noqa: E402
from semsearch.retrieve.searcher import Searcher  # noqa: E402

OUT = WORK / "gate-pages"


@dataclass
class Row:
    """One question's gate figures and page evidence."""

    text: str
    kind: str
    """``answerable``, ``offtopic``, ``near`` (the set's questions), ``bank`` or ``title``."""
    relevance: float
    """The read passage's cosine less the question's baseline (eval's ``relevance``)."""
    exact: bool
    passes: bool
    features: dict = field(default_factory=dict)
    unheld: bool = False
    """Refused because nothing it names as code is in the folder (``Gate.decide``)."""


def page_coverage(pages: PageIndex, tokens: list[str]) -> np.ndarray:
    """Per page, the share of the question's distinct tokens (idf-weighted over pages) it holds."""
    distinct = sorted(set(tokens))
    held = np.zeros(pages.count)
    if not distinct:
        return held
    weights = pages.keywords.idf(distinct)
    for token, weight in zip(distinct, weights, strict=True):
        held[pages.keywords.rows_with_tokens([token])] += weight
    return held / sum(weights)


TITLE_TOKENS: dict[int, tuple[frozenset[str], ...]] = {}


def title_tokens(index: Index) -> tuple[frozenset[str], ...]:
    """Per page (in row order), the tokens of its names (its title and aliases); once per index."""
    if id(index) not in TITLE_TOKENS:
        TITLE_TOKENS[id(index)] = page_title_tokens(index)
    return TITLE_TOKENS[id(index)]


def page_title_tokens(index: Index) -> tuple[frozenset[str], ...]:
    language = index.pages.keywords.language
    found = []
    for source, record in sorted(index.meta.files.items(), key=lambda item: item[1].rows or (0, 0)):
        start, end = record.rows or (0, 0)
        if end > start:
            names = page_names(record.title or "", source, record.front_matter.fields)
            found.append(frozenset(t for name in names for t in tokenize(name, language)))
    if len(found) != index.pages.count:
        raise AssertionError("the pages and the file records disagree")
    return tuple(found)


def word_features(index: Index, tokens: list[str], read_page: int) -> dict:
    """What the pages' words say: page BM25, word coverage of pages and of titles."""
    pages = index.pages
    distinct = sorted(set(tokens))
    idf = dict(zip(distinct, pages.keywords.idf(distinct), strict=True))
    idf_sum = float(sum(idf.values()))
    bm25 = pages.keywords.token_scores(tokens).astype(np.float64)
    cover = page_coverage(pages, tokens)
    titles = np.array([sum(w for t, w in idf.items() if t in names) for names in title_tokens(index)])
    titles = titles / idf_sum if idf_sum else titles
    ordered = np.argsort(-bm25, kind="stable")
    return {
        "bm25": bm25,
        "idf_sum": idf_sum,
        "bm25_read_rel": float(bm25[read_page] / idf_sum) if idf_sum else 0.0,
        "bm25_best_rel": float(bm25.max() / idf_sum) if idf_sum else 0.0,
        "bm25_rank_read": int(np.flatnonzero(ordered == read_page)[0]) + 1,
        "best_bm25_page": int(ordered[0]),
        "cover_read_page": float(cover[read_page]),
        "cover_best_page": float(cover.max()),
        "title_cover_read": float(titles[read_page]),
        "title_cover_best": float(titles.max()),
    }


def features_of(index: Index, searcher: Searcher, text: str, cosine: np.ndarray, read_row: int) -> dict:
    """Page evidence for a question whose gate read row ``read_row`` (``cosine``: its cosine
    with every row)."""
    pages, page_of_row = index.pages, index.page_of_row()
    read_page = int(page_of_row[read_row])
    words = word_features(index, list(searcher.parse(text).tokens_in(pages.keywords.language)), read_page)
    bm25 = words.pop("bm25")
    mean = np.bincount(page_of_row, weights=cosine, minlength=pages.count) / np.diff(pages.starts)
    evidence = page_evidence(pages, page_of_row, cosine, bm25.astype(np.float32))
    keywords = index.keyword_index()
    best3 = np.argpartition(-cosine, EVIDENCE_PASSAGES - 1)[:EVIDENCE_PASSAGES]
    top10 = page_of_row[np.argsort(-cosine, kind="stable")[:10]]
    return words | {
        "pages": pages.count,
        "linked": pages.linked,
        "read_page": read_page,
        "read_score": float(cosine[read_row]),
        "cover_read_passage": float(keywords.coverage(text, [index.chunks[read_row].text])),
        "cover_passages": float(keywords.coverage(text, [index.chunks[int(r)].text for r in best3])),
        "mean_read": float(mean[read_page]),
        "mean_median": float(np.median(mean)),
        "best_mean_page": int(np.argmax(mean)),
        "topics_read": float(pages.topics[read_page]),
        "evidence_best": float(evidence.max()),
        "best_evidence_page": int(np.argmax(evidence)),
        "other_page_best": float(np.where(page_of_row == read_page, -np.inf, cosine).max()),
        "top10_pages": len(set(top10.tolist())),
        "top10_read_share": float((top10 == read_page).mean()),
    }


def eval_rows(case: Case, searcher: Searcher) -> list[Row]:
    """Every question of the set through ``Searcher.judge`` (eval's path)."""
    rows = []
    for i, question in enumerate(case.questions):
        judged = searcher.judge(question.question, case.vectors[i], 50)
        read = judged.read
        kind = "answerable" if question.answerable else (question.kind or "unanswerable")
        row = Row(question.question, kind, read.score - judged.baseline, read.exact, judged.verdict.answered)
        row.unheld = bool(judged.unheld)
        row.features = features_of(case.index, searcher, question.question, case.cosines[i], read.row)
        rows.append(row)
    return rows


def reference_row(
    index: Index, searcher: Searcher, kind: str, text: str, vector: np.ndarray, own: float
) -> Row:
    """A bank question or a section title as ``ask`` ranks it, with the baseline ``own`` the
    build gave it; ``relevance_best``: its best cosine less that baseline, as the build reads it."""
    cosine = np.asarray(index.cosines(vector), dtype=np.float32)
    read = read_passage(searcher.ranked(searcher.parse(text), vector, GATE_DEPTH, cosine=cosine))
    row = Row(text, kind, read.score - own, read.exact, read.score - own >= index.gate.margin)
    row.features = features_of(index, searcher, text, cosine, read.row)
    row.features["relevance_best"] = float(cosine.max()) - own
    return row


def own_baseline(index: Index, text: str, vector: np.ndarray, others: np.ndarray, offset: float) -> float:
    """The baseline the build gives a reference question (``calibration.calibrate_with``)."""
    cosine = np.asarray(index.cosines(vector), dtype=np.float32)
    best = np.argpartition(-cosine, EVIDENCE_PASSAGES - 1)[:EVIDENCE_PASSAGES]
    coverage = coverages(index.keywords, [text], best[None, :], index.chunks)[0]
    similarity = float(top_mean((others @ vector)[None, :])[0])
    return float(baseline(index.gate.rule, similarity, coverage, offset))


def reference_rows(case: Case, searcher: Searcher, model: CachedModel) -> tuple[list[Row], list[Row]]:
    """The kept bank questions (each against the rest of the bank, its language's offset taken
    off) and the section titles (the documents' language's offset taken off)."""
    index = case.index
    bank = offtopic_bank()
    kept = [r for r in index.meta.offtopic.background_rows if bank[r][0] != NO_LANGUAGE]
    vectors = np.asarray(index.gate.offtopic, dtype=np.float32)
    offsets = index.meta.margin.language_offsets
    bank_rows = []
    for r in kept:
        language, text = bank[r]
        others = vectors[[k for k in kept if k != r]]
        own = own_baseline(index, text, vectors[r], others, offsets.get(language, 0.0))
        bank_rows.append(reference_row(index, searcher, "bank", text, vectors[r], own))
    titles = section_titles(list(index.chunks))
    offset = offsets.get(index.meta.margin.titles_language or "", 0.0)
    title_rows = []
    for text, vector in zip(titles, model.embed_queries(titles), strict=True):
        own = own_baseline(index, text, vector, vectors[kept], offset)
        title_rows.append(reference_row(index, searcher, "title", text, vector, own))
    return bank_rows, title_rows


def collect(name: str, model: CachedModel) -> None:
    case = load_case(name, model, rebuild=False)
    if case.index.pages is None:
        print(f"{name}: no page side, skipped")
        return
    searcher = Searcher(case.index)
    bank, titles = reference_rows(case, searcher, model)
    found = {
        "margin": case.index.gate.margin,
        "questions": [asdict(row) for row in eval_rows(case, searcher)],
        "bank": [asdict(row) for row in bank],
        "titles": [asdict(row) for row in titles],
        "eval": gate_figures(case, model),
        "eval_previous": gate_figures(case, model, PREVIOUS),
    }
    answered = np.mean([r["passes"] for r in found["questions"] if r["kind"] == "answerable"])
    off = [not r["passes"] for r in found["questions"] if r["kind"] == "offtopic"]
    if answered != found["eval"]["answered"] or (off and np.mean(off) != found["eval"]["refused"]):
        raise SystemExit(f"{name}: the figures are not eval's ({found['eval']})")
    (OUT / f"{name}.pkl").write_bytes(pickle.dumps(found))
    previous = found["eval_previous"]
    refused = f"{np.mean(off):.3f} ({len(off)})" if off else "–"
    before = "–" if previous["refused"] is None else f"{previous['refused']:.3f}"
    print(
        f"{name}: answered {answered:.3f}, off-topic refused {refused}; with the ranking before "
        f"page evidence: answered {previous['answered']:.3f}, off-topic refused {before}",
        flush=True,
    )


def main() -> None:
    model = CachedModel()
    OUT.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[1:] or list(SETS):
        collect(name, model)


if __name__ == "__main__":
    main()
