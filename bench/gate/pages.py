"""Page evidence for the no-answer gate (issue 36, item 6): does what the read passage's page,
or the best page, says of a question separate answerable questions from plausible off-topic
ones? Measured on the rows `page_features.py` pickled (run it first):

    OMP_NUM_THREADS=1 RANK_WORK=/work/cache/gatepages PYTHONPATH=. python bench/gate/page_features.py
    RANK_WORK=/work/cache/gatepages PYTHONPATH=. python bench/gate/pages.py [--all] [--bound] \\
        [--separation] [--reference both|bank]

Every candidate adds ``weight x F`` to the gate's relevance (the read passage's cosine less the
question's baseline), F a page-level feature of the question (``FEATURES``; ``REPLACEMENTS``
swap the gate's passage-level word evidence for a page-level one), optionally weighed by the
folder's ``linked`` as page evidence in the ranking is, and derives the cut label-free as the
build does: midway between the 85th percentile of the kept bank questions' score (each
leave-one-out, its language's offset taken off) and the 10th percentile of the section titles'
(``--reference bank``: the titles read without F; see ``REFERENCES``). With weight 0 this
reproduces every index's margin exactly (checked). A passage holding what the question names
verbatim answers, and a question naming only codes the folder lacks is refused, as today.

Printed per set: answerable questions answered and off-topic refused, today → candidate, with
the answerable questions it refuses that today answers (the repo's bar: none on any set); by
default each family's setting the tuned-on sets would choose (``chosen``), ``--all`` every one.
Tuned on: docs, en, cooking, api, poquad, foam; reported on: the rest (`ranking_sets.py`).
``--bound``: off-topic refused with the labels' help, at the highest cut that keeps every
answerable question answered today (a ceiling for any label-free cut on the same score).
``--separation``: each feature's AUC alone, answerable against off-topic and against the bank.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ranking_sets import SETS, TUNE  # noqa: E402

WORK = Path(os.environ.get("RANK_WORK", "/work/cache/gatepages")) / "gate-pages"
OFFTOPIC_QUANTILE, ONTOPIC_QUANTILE = 85, 10  # the build's (gate/calibration.py)
GATE_COVERAGE_WEIGHT = 0.03  # gate 4's word-evidence weight (gate/threshold.py, RULES[4])
TODAY = "today (no page evidence)"

Feature = Callable[[dict], float]
FEATURES: dict[str, Feature] = {
    # the read passage's page's BM25 (whole page and its names), over the question's own
    # maximum: the sum of its distinct tokens' idf over pages
    "page BM25 / question's idf": lambda f: f["bm25_read_rel"],
    # the same for the best page by BM25, whichever it is
    "best page BM25 / question's idf": lambda f: f["bm25_best_rel"],
    # the share of the question's idf-weighted tokens the read passage's page holds
    "page word coverage": lambda f: f["cover_read_page"],
    # the same for the page holding most of them
    "best page word coverage": lambda f: f["cover_best_page"],
    # the page holds more of the question's words than the passage alone
    "page less passage coverage": lambda f: f["cover_read_page"] - f["cover_read_passage"],
    # the share of the question's idf-weighted tokens a page's title or aliases hold, best page
    "best title coverage": lambda f: f["title_cover_best"],
    # the read page's mean cosine less the folder's median page mean
    "page mean cosine less folder median": lambda f: f["mean_read"] - f["mean_median"],
    # the read page is no hub: minus the share of the other pages' titles it mentions
    "minus the read page's topics": lambda f: -f["topics_read"],
    # the read passage's page is the best page by page evidence (retrieve/pages.py)
    "read page = best page by page evidence": lambda f: float(f["read_page"] == f["best_evidence_page"]),
    # the read passage's page is the best page by page BM25
    "read page = best page by BM25": lambda f: float(f["read_page"] == f["best_bm25_page"]),
    # the best page's evidence as the ranking adds it (retrieve/pages.py, weighed by linked)
    "best page evidence": lambda f: f["evidence_best"],
    # few pages among the 10 passages nearest by cosine: they gather on a page about the question
    "minus the pages among the 10 nearest passages": lambda f: -f["top10_pages"] / 10,
    # the read passage's page's share of the 10 nearest passages
    "the read page's share of the 10 nearest passages": lambda f: f["top10_read_share"],
    # the read passage's lead over the best passage of any other page
    "read passage's lead over other pages": lambda f: f["read_score"] - f["other_page_best"],
}
WEIGHTS = (0.01, 0.02, 0.05, 0.1)
REPLACEMENTS: dict[str, Feature] = {
    # the gate's word evidence read in the read passage's page, not in its best 3 passages
    "word evidence from the read page": lambda f: f["cover_read_page"] - f["cover_passages"],
    # ... in the page holding most of the question's words
    "word evidence from the best page": lambda f: f["cover_best_page"] - f["cover_passages"],
}
"""Candidates replacing the gate's word evidence (the best of 3 passages) by a page's: the
difference, at the gate's own weight (x1) or more (x2, x3)."""
REFERENCES = ("both", "bank")
"""How a candidate's cut is derived: from both references, as the build does (``both``), or
with the section titles read without the feature (``bank``: a title's words are its own page's,
so a word feature lifts the titles more than any question, and with them the cut)."""

Candidate = tuple[str, str, Feature | None, float, bool]
"""Its family, its label, its feature, its weight, and whether weighed by ``linked``."""


def candidates() -> list[Candidate]:
    found: list[Candidate] = [("today", TODAY, None, 0.0, False)]
    for name, feature in FEATURES.items():
        for linked in (False, True):
            for weight in WEIGHTS:
                label = f"{name} x {weight}" + (" x linked" if linked else "")
                found.append((name, label, feature, weight, linked))
    for name, feature in REPLACEMENTS.items():
        for times in (1, 2, 3):
            weight = round(GATE_COVERAGE_WEIGHT * times, 3)
            found.append((name, f"{name}, not the passages x {weight}", feature, weight, False))
    return found


def score(row: dict, candidate: Candidate, best: bool = False) -> float:
    """The row's relevance (``best``: of its best cosine, as the build's references read it)
    plus the candidate's term."""
    _, _, feature, weight, linked = candidate
    relevance = row["features"]["relevance_best"] if best else row["relevance"]
    if feature is None or not weight:
        return relevance
    return relevance + weight * (row["features"]["linked"] if linked else 1.0) * feature(row["features"])


def calibrated_cut(data: dict, candidate: Candidate, reference: str = "both") -> float:
    """The build's cut on the candidate's score (see the module docstring)."""
    bank = [score(r, candidate, best=True) for r in data["bank"]]
    plain = (*candidate[:2], None, 0.0, False)
    titles = [score(r, candidate if reference == "both" else plain, best=True) for r in data["titles"]]
    return float((np.percentile(bank, OFFTOPIC_QUANTILE) + np.percentile(titles, ONTOPIC_QUANTILE)) / 2)


def outcome(data: dict, candidate: Candidate, reference: str) -> dict[str, np.ndarray]:
    """Per kind of question, each one's decision under the candidate (its cut label-free)."""
    cut = calibrated_cut(data, candidate, reference)
    found: dict[str, list[bool]] = {}
    for row in data["questions"]:
        answered = (row["exact"] or score(row, candidate) >= cut) and not row["unheld"]
        found.setdefault(row["kind"], []).append(answered)
    return {kind: np.array(values) for kind, values in found.items()}


def changed(today: dict, then: dict, kind: str) -> tuple[int, int]:
    """Questions of ``kind`` the candidate answers that today refuses, and the other way round."""
    before, after = today.get(kind, np.ones(0, bool)), then.get(kind, np.ones(0, bool))
    return int((after & ~before).sum()), int((before & ~after).sum())


def totals(today: dict, found: dict, names: list[str]) -> tuple[int, int]:
    """Answerable questions lost, and off-topic refusals gained (net), over the sets ``names``."""
    lost = sum(changed(today[n], found[n], "answerable")[1] for n in names)
    gained = 0
    for n in names:
        answered, refused = changed(today[n], found[n], "offtopic")
        gained += refused - answered
    return lost, gained


def share(values: np.ndarray | None, refused: bool = False) -> str:
    if values is None or not len(values):
        return "–"
    return f"{np.mean(~values if refused else values):.3f}"


def cell(today: dict, then: dict) -> str:
    """Answered and off-topic refused, today → candidate; answered questions lost."""
    lost = changed(today, then, "answerable")[1]
    answered = f"{share(today['answerable'])}→{share(then['answerable'])}"
    refused = f"{share(today.get('offtopic'), True)}→{share(then.get('offtopic'), True)}"
    return f"{answered}, {refused}" + (f" (-{lost})" if lost else "")


def measure(sets: dict[str, dict], reference: str) -> dict[str, dict[str, dict]]:
    """Every candidate's outcome on every set (label -> set -> ``outcome``)."""
    return {c[1]: {n: outcome(d, c, reference) for n, d in sets.items()} for c in candidates()}


def chosen(sets: dict[str, dict], results: dict) -> list[str]:
    """Per family, the setting the tuned-on sets alone would choose: the most off-topic
    refusals gained with no answered question lost, else the fewest lost."""
    tuned = [n for n in sets if SETS[n][2] == TUNE]
    best: dict[str, tuple] = {}
    for family, label, *_ in candidates()[1:]:
        lost, gained = totals(results[TODAY], results[label], tuned)
        key = (lost == 0 and gained > 0, gained if lost == 0 else -lost, -lost)
        if family not in best or key > best[family][0]:
            best[family] = (key, label)
    return [label for _, label in best.values()]


def table(sets: dict[str, dict], results: dict, labels: list[str]) -> list[str]:
    names = list(sets)
    tuned = [n for n in names if SETS[n][2] == TUNE]
    head = " | ".join(f"{n} ({SETS[n][2]})" for n in names)
    lines = [
        f"| candidate | {head} | tuned on: answered lost, off-topic refused gained | all sets |",
        "| --- |" + " --- |" * (len(names) + 2),
    ]
    today = results[TODAY]
    for label in labels:
        found = results[label]
        cells = " | ".join(cell(today[n], found[n]) for n in names)
        lost_tuned, gained_tuned = totals(today, found, tuned)
        lost, gained = totals(today, found, names)
        lines.append(f"| {label} | {cells} | -{lost_tuned}, {gained_tuned:+d} | -{lost}, {gained:+d} |")
    return lines


def bound(sets: dict[str, dict]) -> list[str]:
    """Off-topic refused at the highest cut keeping every answerable question answered today
    (besides those refused for naming only codes the folder lacks, as today)."""
    names = [n for n, d in sets.items() if any(r["kind"] == "offtopic" for r in d["questions"])]
    lines = ["| candidate | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for candidate in candidates():
        cells = []
        for n in names:
            rows = sets[n]["questions"]
            answered = [r for r in rows if r["kind"] == "answerable" and r["passes"] and not r["exact"]]
            lowest = min(score(r, candidate) for r in answered)  # exact ones answer at any score
            off = [r for r in rows if r["kind"] == "offtopic"]
            refused = sum(r["unheld"] or (not r["exact"] and score(r, candidate) < lowest) for r in off)
            cells.append(f"{refused}/{len(off)}")
        lines.append(f"| {candidate[1]} | " + " | ".join(cells) + " |")
    return lines


def auc(positive: list[float], negative: list[float]) -> float:
    a, b = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
    return float((a > b).mean() + 0.5 * (a == b).mean())


def separation(sets: dict[str, dict]) -> list[str]:
    """Each feature alone: AUC of answerable against off-topic questions, and against the bank."""
    names = list(sets)
    lines = [
        "| feature (AUC: answerable vs off-topic / vs bank) | " + " | ".join(names) + " |",
        "| --- |" + " --- |" * len(names),
    ]
    today: Feature = lambda f: 0.0  # noqa: E731  (read as the relevance itself, below)
    for label, feature in {"relevance (today)": today, **FEATURES}.items():
        cells = []
        for n in names:

            def value(row: dict, feature: Feature = feature) -> float:
                return row["relevance"] if feature is today else feature(row["features"])

            rows = sets[n]["questions"]
            answerable = [value(r) for r in rows if r["kind"] == "answerable"]
            off = [value(r) for r in rows if r["kind"] == "offtopic"]
            bank = auc(answerable, [value(r) for r in sets[n]["bank"]])
            cells.append((f"{auc(answerable, off):.2f}" if off else "–") + f" / {bank:.2f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def load_sets(names: list[str]) -> dict[str, dict]:
    """The pickled sets, tuned-on first; each checked to reproduce its index's margin."""
    loaded = {
        n: pickle.loads((WORK / f"{n}.pkl").read_bytes()) for n in names if (WORK / f"{n}.pkl").exists()
    }
    ordered = sorted(loaded, key=lambda n: SETS[n][2] != TUNE)
    for n in ordered:
        cut = calibrated_cut(loaded[n], candidates()[0])
        if abs(cut - loaded[n]["margin"]) > 1e-5:
            raise SystemExit(f"{n}: the reproduced cut {cut} is not the index's {loaded[n]['margin']}")
    return {n: loaded[n] for n in ordered}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--all", action="store_true", help="every setting, not each family's chosen one")
    parser.add_argument("--bound", action="store_true")
    parser.add_argument("--separation", action="store_true")
    parser.add_argument("--reference", choices=REFERENCES, default="both", help="see REFERENCES")
    parser.add_argument("--only", help="comma-separated set names")
    args = parser.parse_args()
    sets = load_sets(args.only.split(",") if args.only else list(SETS))
    results = measure(sets, args.reference)
    labels = [c[1] for c in candidates()] if args.all else [TODAY, *chosen(sets, results)]
    print("\n".join(table(sets, results, labels)))
    if args.bound:
        print("\n" + "\n".join(bound(sets)))
    if args.separation:
        print("\n" + "\n".join(separation(sets)))


if __name__ == "__main__":
    main()
