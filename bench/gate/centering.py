"""Centered vectors for the no-answer gate (issue 24), against today's relevance, on every set
with off-topic questions, from the ranking bench's cached indexes and embeddings.

    PYTHONPATH=. python bench/gate/centering.py [SET,SET...]

The 4-bit model puts every pair of texts in one language near a cosine of 0.8 (one common
direction). Centering takes that direction out before the cosine: passages less the corpus's mean
vector, questions and bank questions less the bank's mean. Per variant and set: AUC of answerable
against off-topic questions, the oracle (best min(answered, refused) any cut reaches with the
labels: a ceiling for any label-free cut), answered / refused at the build's cut (today's rule)
or at the bank's own 95th and 99th percentile (leave-one-out) as a label-free cut. "Today's
relevance" is the gate's own, through ``eval``'s path (the passage ``read_passage`` picks less
``Gate.baseline``: background, word evidence and language); the variants read the best cosine
over all passages; the last rows add a share of the centered best cosine to today's relevance (with the
question centered too, or raw).
"""

from __future__ import annotations

import sys

import numpy as np

from bench.ranking_sets import SETS, CachedModel, Case, load_case
from semsearch.collection import Collection
from semsearch.evaluation.quality import evaluate


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def top_mean(similarities: np.ndarray, k: int = 3) -> np.ndarray:
    return np.sort(similarities, axis=-1)[..., -k:].mean(axis=-1)


def oracle(on: np.ndarray, off: np.ndarray) -> float:
    return max(min((on >= c).mean(), (off < c).mean()) for c in np.concatenate([on, off]))


def auc(on: np.ndarray, off: np.ndarray) -> float:
    return float((on[:, None] > off[None, :]).mean() + 0.5 * (on[:, None] == off[None, :]).mean())


def relevances(passages, questions, bank, weight: float) -> tuple[np.ndarray, np.ndarray]:
    """Best cosine less ``weight`` x the mean of the 3 nearest bank questions: of the eval
    questions, and of the bank questions themselves (leave-one-out)."""
    among_bank = bank @ bank.T
    np.fill_diagonal(among_bank, -np.inf)
    asked = (questions @ passages.T).max(1) - weight * top_mean(questions @ bank.T)
    reference = (bank @ passages.T).max(1) - weight * top_mean(among_bank)
    return asked, reference


def today(case: Case, model: CachedModel) -> tuple[np.ndarray, float, float]:
    """The gate's relevance of each question through ``eval``'s own path (the hybrid ranking,
    the passage ``read_passage`` picks, ``Gate.baseline``), and answered / refused at the cut."""
    results = evaluate(Collection.opened(case.index, embedder=model), case.questions, k=3).results
    relevance = np.array([r.relevance for r in results])
    on = [r.passes for r in results if r.question.answerable]
    off = [not r.passes for r in results if r.question.kind == "offtopic"]
    return relevance, float(np.mean(on)), float(np.mean(off))


def row(label: str, on, off, reference=None, at_cut: str = "–") -> str:
    cells = [f"{auc(on, off):.3f}", f"{oracle(on, off):.3f}", at_cut]
    for q in (95, 99):
        if reference is None:
            cells.append("–")
            continue
        cut = np.percentile(reference, q)
        cells.append(f"{(on >= cut).mean():.2f} / {(off < cut).mean():.2f}")
    return f"| {label} | " + " | ".join(cells) + " |"


def measure(case: Case, model: CachedModel) -> list[str]:
    index = case.index
    passages = np.asarray(index.vectors, dtype=np.float32)
    bank = np.asarray(index.offtopic, dtype=np.float32)[list(index.meta.offtopic.background_rows)]
    on = np.array([q.answerable for q in case.questions])
    off = np.array([q.kind == "offtopic" for q in case.questions])
    mean = bank.mean(0)
    variants = {
        "raw": (passages, case.vectors, bank),
        "centered": (unit(passages - passages.mean(0)), unit(case.vectors - mean), unit(bank - mean)),
    }
    lines = [f"{case.name} ({on.sum()} answerable, {off.sum()} off-topic)", ""]
    lines += [
        "| variant | AUC | oracle | at the build's cut | at bank p95 | at bank p99 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    relevance, answered, refused = today(case, model)
    lines.append(
        row("today's relevance", relevance[on], relevance[off], at_cut=f"{answered:.2f} / {refused:.2f}")
    )
    for label, (p, q, b) in variants.items():
        for weight in (0.0, 0.75):
            asked, reference = relevances(p, q, b, weight)
            lines.append(row(f"{label}, background x {weight}", asked[on], asked[off], reference))
    centered, _ = relevances(*variants["centered"], 0.0)
    passages_only, _ = relevances(variants["centered"][0], case.vectors, bank, 0.0)
    for label, extra in (("centered", centered), ("centered passages, raw question", passages_only)):
        for share in (0.05, 0.1, 0.2):
            mixed = relevance + share * extra
            lines.append(row(f"today's + {share} x {label} best cosine", mixed[on], mixed[off]))
    return [*lines, ""]


def main() -> None:
    model = CachedModel()
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else list(SETS)
    for name in names:
        case = load_case(name, model, rebuild=False)
        if any(q.kind == "offtopic" for q in case.questions):
            print("\n".join(measure(case, model)))


if __name__ == "__main__":
    main()
