"""Everything the gate experiments read, per set, computed once and pickled under $GATE_WORK.

For the eval questions, the bank (every language) and the corpus's section titles asked as
questions: the full cosine row against every chunk, BM25 rows, and (eval questions) the hybrid
ranking eval uses (the row the gate reads, its cosine and exact flag, rank of the first correct
chunk).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.gate.common import SETS, WORK, CachedEmbedder, index_dir, questions_of  # noqa: E402
from semsearch.evaluation.questions import is_hit  # noqa: E402
from semsearch.gate.bank import bank_vectors, offtopic_bank  # noqa: E402
from semsearch.gate.calibration import section_titles  # noqa: E402
from semsearch.gate.decision import read_passage  # noqa: E402
from semsearch.retrieve.opening import load_index  # noqa: E402
from semsearch.retrieve.searcher import Searcher  # noqa: E402


def features(name: str, embedder: CachedEmbedder) -> dict:
    index = load_index(index_dir(name))
    questions = questions_of(name)
    qv = embedder.embed_queries([q.question for q in questions])
    bank = offtopic_bank()
    bv = np.asarray(bank_vectors(embedder), dtype=np.float32)  # the current bank, not the index's
    titles = section_titles(list(index.chunks))
    tv = embedder.embed_queries(titles)
    kw = index.keyword_index()
    out = {
        "name": name,
        "questions": [
            {"text": q.question, "kind": q.kind, "answerable": q.answerable, "lang": None} for q in questions
        ],
        "q_cos": qv @ index.vectors.T,
        "q_vec": qv,
        "q_bm25": np.stack([kw.scores(q.question) for q in questions]),
        "bank": bank,
        "bank_vec": bv,
        "bank_cos": bv @ index.vectors.T,
        "bank_bm25": np.stack([kw.scores(q) for _, q in bank]),
        "titles": titles,
        "title_vec": tv,
        "title_cos": tv @ index.vectors.T,
        "title_bm25": np.stack([kw.scores(t) for t in titles]),
        "chunk_source": [c.source for c in index.chunks],
        "corpus_language": index.corpus_language,
        "min_score": index.gate.margin,
        "background_rows": list(index.meta.offtopic.background_rows),
    }
    first, first_score, first_exact, ranks = [], [], [], []
    for q, v in zip(questions, qv, strict=True):
        searcher = Searcher(index)
        ranking = searcher.ranked(searcher.parse(q.question), v, 10, "hybrid")
        read = read_passage(ranking)  # the passage the gate reads, as ``ask`` and ``eval`` do
        first.append(read.row)
        first_score.append(read.score)
        first_exact.append(read.exact)
        rank = next((n for n, r in enumerate(ranking, 1) if is_hit(q, index.chunks[r.row])), None)
        ranks.append(rank if q.answerable else None)
    out.update(first=np.array(first), first_score=np.array(first_score), first_exact=np.array(first_exact))
    out["rank"] = ranks
    return out


if __name__ == "__main__":
    embedder = CachedEmbedder()
    for name in sys.argv[1:] or list(SETS):
        data = features(name, embedder)
        with open(WORK / f"feat-{name}.pkl", "wb") as handle:
            pickle.dump(data, handle)
        print(name, data["q_cos"].shape, len(data["titles"]))
