"""Gate 4's choice (issue 14): the share of each language's loss given back, and the quantiles
of the cut, scanned on the tuned-on sets from the pickled features (bench/gate/features.py).

    GATE_INDEXES=DIR PYTHONPATH=. python bench/gate/languages.py

Per setting: answered / off-topic refused on docs, en, cooking (chosen by the worst of them, then
their mean), then the chosen setting on every set with each score's AUC and the best min(answered,
refused) any cut reaches with the labels. Word coverage comes from the library's own function
(``threshold.coverages``) over each index's keyword index; languages from ``language_centroids``.
"""

from __future__ import annotations

import itertools
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.gate.common import REPORTED_ON, TUNED_ON, WORK, index_dir  # noqa: E402
from semsearch.gate.calibration import language_offsets  # noqa: E402
from semsearch.gate.threshold import (  # noqa: E402
    EVIDENCE_PASSAGES,
    language_centroids,
    nearest_languages,
    top_mean,
)
from semsearch.gate.threshold import coverages as word_coverages  # noqa: E402
from semsearch.retrieve.opening import load_index  # noqa: E402


def prepared(name: str) -> dict:
    """A set's features with word coverage and languages added (bank: its own; titles: the one
    most titles lie nearest; questions: each its nearest)."""
    with open(WORK / f"feat-{name}.pkl", "rb") as handle:
        data = pickle.load(handle)
    index = load_index(index_dir(name))
    chunks = list(index.chunks)

    def coverage(texts, cosines):
        rows = np.argsort(-cosines, axis=1)[:, :EVIDENCE_PASSAGES]
        return word_coverages(index.keywords, texts, rows, chunks)

    data["q_cov"] = coverage([q["text"] for q in data["questions"]], data["q_cos"])
    data["bank_cov"] = coverage([q for _, q in data["bank"]], data["bank_cos"])
    data["title_cov"] = coverage(data["titles"], data["title_cos"])
    data["bank_lang"] = [language for language, _ in data["bank"]]
    names, centroids = language_centroids(data["bank_vec"], data["bank_lang"])
    data["q_lang"] = nearest_languages(data["q_vec"], names, centroids)
    found = nearest_languages(data["title_vec"], names, centroids)
    data["title_lang"] = max(set(found), key=found.count)
    return data


def gate(data: dict, share: float, bank_q: float, title_q: float, weight=0.75, evidence=0.03):
    """Question scores and the label-free cut, as ``calibration.calibrate_with`` computes them."""
    bank_best, title_best = data["bank_cos"].max(1), data["title_cos"].max(1)
    keep = bank_best < np.percentile(title_best, 10)
    background = data["bank_vec"][keep]
    within = background @ background.T
    np.fill_diagonal(within, -np.inf)
    bank = bank_best[keep] - weight * top_mean(within) + evidence * data["bank_cov"][keep]
    langs = [lang for lang, kept in zip(data["bank_lang"], keep, strict=True) if kept]
    offsets = language_offsets(bank, langs, share)
    bank = bank - np.array([offsets.get(lang, 0.0) for lang in langs])
    titles = (
        title_best
        - weight * top_mean(data["title_vec"] @ background.T)
        + evidence * data["title_cov"]
        - offsets.get(data["title_lang"], 0.0)
    )
    questions = (
        data["q_cos"].max(1)
        - weight * top_mean(data["q_vec"] @ background.T)
        + evidence * data["q_cov"]
        - np.array([offsets.get(lang, 0.0) for lang in data["q_lang"]])
    )
    return questions, (np.percentile(bank, bank_q) + np.percentile(titles, title_q)) / 2


def figures(data: dict, questions: np.ndarray, cut: float) -> tuple[float, float, float, float]:
    answerable = np.array([q["answerable"] for q in data["questions"]])
    offtopic = np.array([q["kind"] == "offtopic" for q in data["questions"]])
    passes = (questions >= cut) | data["first_exact"]
    pos, neg = questions[answerable], questions[offtopic]
    auc = float((pos[:, None] > neg[None, :]).mean())
    oracle = max(min((pos >= x).mean(), (neg < x).mean()) for x in np.r_[pos, neg])
    return passes[answerable].mean(), (~passes[offtopic]).mean(), auc, oracle


if __name__ == "__main__":
    sets = {name: prepared(name) for name in (*TUNED_ON, *REPORTED_ON)}
    rows = []
    for share, bank_q, title_q in itertools.product((0.0, 0.3, 0.5, 0.7, 1.0), (80, 85, 90, 95), (5, 10)):
        got = [figures(sets[n], *gate(sets[n], share, bank_q, title_q)) for n in TUNED_ON]
        worst = min(min(a, r) for a, r, _, _ in got)
        mean = float(np.mean([a + r for a, r, _, _ in got]) / 2)
        rows.append((worst, mean, share, bank_q, title_q, got))
    rows.sort(key=lambda row: row[:2], reverse=True)
    print("| share | bank q | titles q | " + " | ".join(TUNED_ON) + " |")
    print("|---|---|---|" + "---|" * len(TUNED_ON))
    for _, _, share, bank_q, title_q, got in rows[:12]:
        cells = " | ".join(f"{a:.2f}/{r:.2f}" for a, r, _, _ in got)
        print(f"| {share} | p{bank_q} | p{title_q} | {cells} |")
    _, _, share, bank_q, title_q, _ = rows[0]
    print(f"\nchosen: share {share}, bank p{bank_q}, titles p{title_q}")
    for name, data in sets.items():
        answered, refused, auc, oracle = figures(data, *gate(data, share, bank_q, title_q))
        split = "tuned-on" if name in TUNED_ON else "reported-on"
        print(f"{name:8s} {split:12s} answered {answered:.3f} refused {refused:.3f}", end=" ")
        print(f"AUC {auc:.3f} oracle {oracle:.3f}")
