"""The gate on small folders: real builds of folders of a few files drawn from each set, asked
the questions those files answer and the set's off-topic ones, through eval's own decision.

    PYTHONPATH=. python bench/gate/small_folders.py [--folders 40] [--only docs,poquad]

Folders: each file of `docs/` alone (as before), 3 files of PoQuAD, DRCD, k8s-pl and the
English guide drawn at random (``random.Random(0)``; only files some question is about), and
`kursownia` as it is (the design's three files). Every build goes through ``build_index``
with an embedder that takes each chunk's vector from the set's full index (the same chunk, the
same text: the same vector) and caches each query on disk, so no chunk is embedded twice.
Tuned on: `docs/`, PoQuAD; reported on: DRCD, k8s-pl, the English guide, kursownia.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ranking_sets import SETS, WORK, CachedModel, load_case  # noqa: E402

from semsearch.build.pipeline import build_index  # noqa: E402
from semsearch.collection import Collection  # noqa: E402
from semsearch.encode.embedders import load_embedder  # noqa: E402
from semsearch.evaluation.quality import evaluate  # noqa: E402
from semsearch.ingest.chunking import embedding_text  # noqa: E402
from semsearch.retrieve.opening import load_index  # noqa: E402

SMALL = {"docs": 1, "poquad": 3, "drcd": 3, "k8s-pl": 3, "en": 3, "kursownia": 0}
"""Files per folder (0: the set as it is)."""
TUNED_ON = ("docs", "poquad")


class MemoEmbedder:
    """The default model, with passages looked up among a full index's vectors and queries
    cached one file per text (a small folder's titles are new lists every time)."""

    def __init__(self, passages: dict[str, np.ndarray]):
        self._model = load_embedder()
        self.spec, self.dim = self._model.spec, self._model.dim
        self.max_input_tokens = self._model.max_input_tokens
        self._passages = passages

    def embed_passages(self, texts):
        missing = [t for t in texts if t not in self._passages]
        if missing:
            self._passages.update(zip(missing, self._model.embed_passages(missing), strict=True))
        return np.stack([self._passages[t] for t in texts])

    def embed_queries(self, texts):
        out = []
        for text in texts:
            path = WORK / "qtext" / f"{hashlib.sha256(text.encode()).hexdigest()[:24]}.npy"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                np.save(path, np.asarray(self._model.embed_queries([text]), dtype=np.float32)[0])
            out.append(np.load(path))
        return np.stack(out) if out else np.empty((0, self.dim), np.float32)

    def passage_tokens(self, text):
        return self._model.passage_tokens(text)

    def query_tokens(self, text):
        return self._model.query_tokens(text)


def folders(name: str, case, count: int) -> list[list[str]]:
    """The folders drawn from set ``name``: lists of files relative to its docs folder."""
    size = SMALL[name]
    files = sorted({chunk.source for chunk in case.index.chunks})
    if size == 0:
        return [files]
    asked = sorted({s for q in case.questions for s in q.sources if s in files})
    if size == 1:
        return [[f] for f in asked]
    rng = random.Random(0)
    return [sorted(rng.sample(asked, size)) for _ in range(count)]


def measure(name: str, count: int, model: CachedModel) -> dict:
    case = load_case(name, model, rebuild=False)
    memo = MemoEmbedder(
        {embedding_text(c): np.asarray(v) for c, v in zip(case.index.chunks, case.index.vectors, strict=True)}
    )
    docs_root = SETS[name][0]
    answered = refused = n_answerable = n_offtopic = 0
    offtopic = [q for q in case.questions if q.kind == "offtopic"]
    cuts = []
    for number, chosen in enumerate(folders(name, case, count)):
        work = WORK / "small" / name / str(number)
        shutil.rmtree(work, ignore_errors=True)
        for source in chosen:
            (work / "docs" / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(docs_root / source, work / "docs" / source)
        build_index(work / "docs", work / "index", embedder=memo)
        index = load_index(work / "index")
        own = [q for q in case.questions if q.answerable and set(q.sources) & set(chosen)]
        results = evaluate(Collection.opened(index, embedder=memo), own + offtopic, k=3).results
        answered += sum(r.passes for r in results if r.question.answerable)
        refused += sum(not r.passes for r in results if not r.question.answerable)
        n_answerable += len(own)
        n_offtopic += len(offtopic)
        cuts.append(index.gate.margin)
    return {
        "set": name,
        "split": "tuned on" if name in TUNED_ON else "reported on",
        "folders": len(cuts),
        "answered": answered / max(n_answerable, 1),
        "answerable": n_answerable,
        "refused": refused / max(n_offtopic, 1),
        "offtopic": n_offtopic,
        "cut": float(np.median(cuts)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--folders", type=int, default=40)
    parser.add_argument("--only")
    args = parser.parse_args()
    model = CachedModel()
    names = args.only.split(",") if args.only else list(SMALL)
    print("| set | split | files per folder | folders | answered | off-topic refused | median cut |")
    print("| --- | --- | ---: | ---: | --- | --- | ---: |")
    for name in names:
        r = measure(name, args.folders, model)
        size = SMALL[name] or "all"
        print(
            f"| {name} | {r['split']} | {size} | {r['folders']} | {r['answered']:.3f} ({r['answerable']}) "
            f"| {r['refused']:.3f} ({r['offtopic']}) | {r['cut']:+.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
