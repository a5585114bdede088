"""Candidate gates (issue 14), computed from the pickled features (bench/gate/features.py).

    PYTHONPATH=. python bench/gate/candidates.py

Each candidate = a per-question score F and a label-free, per-corpus cut t derived at build time
from two reference distributions: the bank questions (off-topic; leave-one-out where F reads the
bank) in the corpus's language, and the corpus's section titles asked as questions (on-topic).
Printed per set: answered / rejected off-topic / rejected near at that cut, and the best
min(answered, rejected off-topic) any cut could reach (an oracle, for reference).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.gate.common import REPORTED_ON, TUNED_ON, WORK  # noqa: E402


def topk(matrix: np.ndarray, k: int) -> np.ndarray:
    return np.sort(matrix, axis=1)[:, -k:].mean(axis=1)


def scores(kind: str, s: np.ndarray, sims: np.ndarray) -> np.ndarray:
    """F from best passage cosine ``s`` and similarities ``sims`` to the bank questions."""
    if kind == "raw":
        return s
    if kind == "margin-max":
        return s - sims.max(axis=1)
    if kind == "margin-top3":
        return s - topk(sims, 3)
    raise ValueError(kind)


def cut(rule: str, off: np.ndarray, on: np.ndarray) -> float:
    if rule == "zero":
        return 0.0
    if rule == "off-max":
        return float(off.max())
    if rule == "off-p90":
        return float(np.percentile(off, 90))
    if rule == "mid-medians":
        return float((np.median(off) + np.median(on)) / 2)
    if rule == "mid-p90-p10":
        return float((np.percentile(off, 90) + np.percentile(on, 10)) / 2)
    if rule == "equal-z":  # robust: medians and interquartile ranges
        mo, mt = np.median(off), np.median(on)
        so = np.subtract(*np.percentile(off, [75, 25]))
        st = np.subtract(*np.percentile(on, [75, 25]))
        return float((mo * st + mt * so) / (so + st))
    raise ValueError(rule)


def evaluate(d: dict, kind: str, rule: str, languages: str) -> dict:
    kinds = np.array([q["kind"] for q in d["questions"]])
    ans = np.array([q["answerable"] for q in d["questions"]])
    off_q, near_q = kinds == "offtopic", kinds == "near"
    bank_lang = np.array([language for language, _ in d["bank"]])
    bank_best = d["bank_cos"].max(axis=1)
    titles_best = d["title_cos"].max(axis=1)
    keep = bank_best < np.percentile(titles_best, 10)  # bank questions the corpus seems to answer: out
    medians = {lang: np.median(bank_best[keep & (bank_lang == lang)]) for lang in set(bank_lang)}
    corpus_lang = max(medians, key=medians.get)
    bv = d["bank_vec"][keep]
    lang_kept = bank_lang[keep]
    bb = bv @ bv.T
    np.fill_diagonal(bb, -np.inf)  # leave one out
    f_bank = scores(kind, bank_best[keep], bb)
    f_titles = scores(kind, titles_best, d["title_vec"] @ bv.T)
    f_q = scores(kind, d["first_score"], d["q_vec"] @ bv.T)
    ref = f_bank[lang_kept == corpus_lang] if languages == "corpus" else f_bank
    t = cut(rule, ref, f_titles)
    passes = (f_q >= t) | d["first_exact"]
    oracle = max(
        min((f_q[ans] >= x).mean(), (f_q[off_q] < x).mean()) for x in np.unique(np.r_[f_q[ans], f_q[off_q]])
    )
    return {
        "answered": passes[ans].mean(),
        "rej_off": (~passes[off_q]).mean(),
        "rej_near": (~passes[near_q]).mean() if near_q.any() else float("nan"),
        "oracle": oracle,
        "lang": corpus_lang,
    }


if __name__ == "__main__":
    names = (*TUNED_ON, *REPORTED_ON)
    data = {name: pickle.loads((WORK / f"feat-{name}.pkl").read_bytes()) for name in names}
    rules = ("off-max", "off-p90", "mid-medians", "mid-p90-p10", "equal-z")
    candidates = [("raw", r, "corpus") for r in rules]
    candidates += [
        (k, r, lang)
        for k in ("margin-max", "margin-top3")
        for r in ("zero", "off-max", "off-p90", "mid-medians", "mid-p90-p10", "equal-z")
        for lang in ("corpus", "all")
        if not (r == "zero" and lang == "all")
    ]
    print("answered / rejected off-topic / rejected near (oracle min(answered, rejected off-topic))")
    print(f"{'F':12s} {'cut':12s} {'bank ref':8s} " + " ".join(f"{n:>24s}" for n in data))
    rows = []
    for kind, rule, lang in candidates:
        results = {name: evaluate(d, kind, rule, lang) for name, d in data.items()}
        worst_tuned = min(min(results[n]["answered"], results[n]["rej_off"]) for n in TUNED_ON)
        rows.append((worst_tuned, kind, rule, lang, results))
        cells = " ".join(
            f"{r['answered']:.2f}/{r['rej_off']:.2f}/{r['rej_near']:.2f} ({r['oracle']:.2f})"
            for r in results.values()
        )
        print(f"{kind:12s} {rule:12s} {lang:8s} {cells}   worst tuned-on {worst_tuned:.2f}")
