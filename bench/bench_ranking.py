"""semsearch's default ranking against plain cosine top-k with the same model, in one run and on
the same chunks, on every set with questions; then ranking candidates, each on every set.

    PYTHONPATH=. python bench/bench_ranking.py                 # plain cosine, previous default, default
    PYTHONPATH=. python bench/bench_ranking.py --candidates    # and every candidate
    PYTHONPATH=. python bench/bench_ranking.py --misses        # the default's misses, per set
    PYTHONPATH=. python bench/bench_ranking.py --changes       # questions won and lost, per set
    PYTHONPATH=. python bench/bench_ranking.py --gate          # the no-answer gate, before/after
    PYTHONPATH=. python bench/bench_ranking.py --json OUT.json

Figures per set, over its answerable questions: doc@1 (the first result is in a right file),
doc@3 (a right file among the first three distinct files of the ranking), chunk@1 (the first
result is the right chunk strictly: a right file and the labelled answer text in it; the
cooking set is labelled by file only, so there chunk@1 is doc@1). The previous default is the
default before this round's page evidence (``ranking_candidates.PREVIOUS``). Candidates are shown as
the change against the default (+won/-lost questions on doc@1). Which sets are tuned on and which
only reported on: `ranking_sets.py`. Indexes and embeddings are cached under $RANK_WORK.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking_candidates import (  # noqa: E402
    PREVIOUS,
    candidates,
    rows_default,
    rows_plain_cosine,
    rows_previous,
)
from ranking_sets import SETS, TUNE, CachedModel, Case, load_case  # noqa: E402

import semsearch.gate.decision as decision_module  # noqa: E402
from semsearch.collection import Collection  # noqa: E402
from semsearch.evaluation.files import first_relevant, ndcg, ranked_files  # noqa: E402
from semsearch.evaluation.quality import evaluate  # noqa: E402
from semsearch.evaluation.questions import is_hit  # noqa: E402
from semsearch.gate.decision import read_passage  # noqa: E402
from semsearch.retrieve.answer import Ranked  # noqa: E402
from semsearch.retrieve.named import named_rows  # noqa: E402
from semsearch.retrieve.names import all_unheld  # noqa: E402
from semsearch.retrieve.searcher import DEFAULT_RANKING, Ranking, Searcher  # noqa: E402


def outcomes(case: Case, rows_of) -> dict[str, np.ndarray]:
    """Per answerable question: right file first, in the first 3 files, right chunk first, and
    the file-level reciprocal rank and nDCG@5 (``evaluation.files``, as ``eval`` reports them)."""
    doc1, doc3, chunk1, mrr, ndcg5 = [], [], [], [], []
    for i in case.answerable:
        question = case.questions[i]
        rows = rows_of(case, i)
        files = ranked_files(case.index.chunks[int(r)].source for r in rows)
        right = set(question.sources)
        doc1.append(bool(files) and files[0] in right)
        doc3.append(bool(right.intersection(files[:3])))
        chunk1.append(len(rows) > 0 and is_hit(question, case.index.chunks[int(rows[0])]))
        rank = first_relevant(files, question.sources)
        mrr.append(1 / rank if rank else 0.0)
        ndcg5.append(ndcg(files, question.sources, question.partial))
    return {
        "doc@1": np.array(doc1),
        "doc@3": np.array(doc3),
        "chunk@1": np.array(chunk1),
        "mrr": np.array(mrr),
        "ndcg@5": np.array(ndcg5),
    }


def figures(found: dict[str, np.ndarray]) -> dict[str, float]:
    return {name: round(float(values.mean()), 4) for name, values in found.items()}


def machine_load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def base_table(cases: list[Case], base: dict) -> list[str]:
    lines = [
        "| set | split | questions | doc@1 cosine / previous / default "
        "| doc@3 cosine / previous / default | chunk@1 cosine / previous / default |",
        "| --- | --- | ---: | --- | --- | --- |",
    ]
    for case in cases:
        found = base[case.name]
        cos, old, ours = figures(found["cosine"]), figures(found["previous"]), figures(found["default"])
        cells = [
            f"{cos[m]:.3f} / {old[m]:.3f} / {ours[m]:.3f} ({ours[m] - cos[m]:+.3f})"
            for m in ("doc@1", "doc@3", "chunk@1")
        ]
        lines.append(f"| {case.name} | {case.split} | {len(case.answerable)} | " + " | ".join(cells) + " |")
    return lines


def file_table(cases: list[Case], base: dict) -> list[str]:
    """The file-level figures peers publish (Hit@1 is doc@1, Hit@3 doc@3), cosine -> default."""
    lines = [
        "| set | split | Hit@1 | Hit@3 | MRR@10 | nDCG@5 | passage@1 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for case in cases:
        cos, ours = figures(base[case.name]["cosine"]), figures(base[case.name]["default"])
        cells = [f"{cos[m]:.3f} → {ours[m]:.3f}" for m in ("doc@1", "doc@3", "mrr", "ndcg@5", "chunk@1")]
        lines.append(f"| {case.name} ({len(case.answerable)}) | {case.split} | " + " | ".join(cells) + " |")
    return lines


def candidate_row(name: str, cases: list[Case], base: dict, found: dict) -> str:
    cells = []
    for case in cases:
        ours, theirs = base[case.name]["default"], found[case.name]
        won = int((theirs["doc@1"] & ~ours["doc@1"]).sum())
        lost = int((ours["doc@1"] & ~theirs["doc@1"]).sum())
        d1 = theirs["doc@1"].mean() - ours["doc@1"].mean()
        c1 = theirs["chunk@1"].mean() - ours["chunk@1"].mean()
        cells.append(f"{d1:+.3f} (+{won}/-{lost}) {c1:+.3f}")
    return f"| {name} | " + " | ".join(cells) + " |"


def misses(case: Case, base: dict) -> list[str]:
    found = base[case.name]["default"]
    lines = []
    for n, i in enumerate(case.answerable):
        if not found["chunk@1"][n]:
            first = case.index.chunks[int(rows_default(case, i)[0])]
            kind = "wrong file" if not found["doc@1"][n] else "right file, other chunk"
            lines.append(f"  {case.name}: {case.questions[i].question!r} -> {first.location} ({kind})")
    return lines


def changes(case: Case, base: dict) -> list[str]:
    """The questions the default wins or loses against the previous default, doc@1 or chunk@1."""
    old, ours = base[case.name]["previous"], base[case.name]["default"]
    lines = []
    for n, i in enumerate(case.answerable):
        moved = [m for m in ("doc@1", "chunk@1") if old[m][n] != ours[m][n]]
        if moved:
            sign = "+" if ours[moved[0]][n] else "-"
            first = case.index.chunks[int(rows_default(case, i)[0])]
            lines.append(
                f"  {case.name} {sign}{'/'.join(moved)}: {case.questions[i].question!r} -> {first.location}"
            )
    return lines


def gate_figures(
    case: Case, model: CachedModel, ranking: Ranking = DEFAULT_RANKING
) -> dict[str, float | None]:
    """Answered, off-topic refused and top-1 through ``semsearch eval``'s own path (``evaluate``:
    the default ranking unless ``ranking`` says otherwise, the gate reading ``read_passage``'s
    choice)."""
    results = evaluate(
        Collection.opened(case.index, embedder=model, ranking=ranking), case.questions, k=3
    ).results
    answerable = [r for r in results if r.question.answerable]
    offtopic = [r for r in results if r.question.kind == "offtopic"]
    return {
        "answered": float(np.mean([r.passes for r in answerable])),
        "refused": float(np.mean([not r.passes for r in offtopic])) if offtopic else None,
        "top1": float(np.mean([r.rank == 1 for r in answerable])),
        "offtopic": len(offtopic),
    }


def gate_of(case: Case, ranker, depth: int = decision_module.GATE_DEPTH) -> dict[str, float | None]:
    """Answered and off-topic refused when ``ranker`` orders the passages: ``eval``'s decision
    (``read_passage``, ``Gate.decide``) with the gate reading the first ``depth`` ranked
    passages (1: the first passage alone, as before this round)."""
    index, searcher = case.index, Searcher(case.index)
    answered, refused = [], []
    for i, question in enumerate(case.questions):
        text = question.question
        parsed = searcher.parse(text)
        exact_rows = set(searcher.identifier_rows(parsed).tolist())
        rows = [int(row) for row in ranker(case, i)]
        ranked = [Ranked(row, float(case.cosines[i][row]), row in exact_rows) for row in rows]
        kept, decision_module.GATE_DEPTH = decision_module.GATE_DEPTH, depth
        try:
            read = read_passage(ranked)
        finally:
            decision_module.GATE_DEPTH = kept
        baseline = index.gate.baseline(text, case.vectors[i], case.cosines[i].astype(np.float32))
        unheld = bool(all_unheld(named_rows(index.keywords, parsed)))
        passes = index.gate.decide(read.score, read.exact, baseline, unheld).answered
        if question.answerable:
            answered.append(passes)
        elif question.kind == "offtopic":
            refused.append(not passes)
    return {
        "answered": float(np.mean(answered)),
        "refused": float(np.mean(refused)) if refused else None,
    }


def gate_table(cases: list[Case], model: CachedModel) -> list[str]:
    """The gate before this round (``PREVIOUS``) and after, in one run."""
    lines = [
        "| set | split | answered before / after | off-topic refused before / after | top-1 before / after |",
        "| --- | --- | --- | --- | --- |",
    ]
    for case in cases:
        before = gate_figures(case, model, PREVIOUS)
        after = gate_figures(case, model)

        def pair(key: str, before=before, after=after) -> str:
            return "–" if before[key] is None else f"{before[key]:.3f} / {after[key]:.3f}"

        refused = pair("refused") + (f" ({after['offtopic']})" if after["offtopic"] else "")
        lines.append(f"| {case.name} | {case.split} | {pair('answered')} | {refused} | {pair('top1')} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--candidates", action="store_true")
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--changes", action="store_true", help="questions won and lost, per set")
    parser.add_argument("--only", help="comma-separated set names")
    parser.add_argument("--match", help="only the candidates whose name holds one of these (comma-separated)")
    parser.add_argument("--skip", help="leave out the candidates whose name holds this")
    parser.add_argument("--gate", action="store_true", help="the no-answer gate before and after")
    parser.add_argument("--gate-of", help="the gate's figures with this candidate's ranking (or default)")
    parser.add_argument(
        "--gate-depth",
        type=int,
        default=decision_module.GATE_DEPTH,
        help="with --gate-of: the gate reads the first N ranked passages",
    )
    parser.add_argument("--json")
    args = parser.parse_args()
    model = CachedModel()
    names = args.only.split(",") if args.only else list(SETS)
    print(machine_load(), "(start)", flush=True)
    cases = [load_case(name, model) for name in names]
    base = {
        c.name: {
            "cosine": outcomes(c, rows_plain_cosine),
            "previous": outcomes(c, rows_previous),
            "default": outcomes(c, rows_default),
        }
        for c in cases
    }
    print("\n".join(base_table(cases, base)), flush=True)
    print("\n" + "\n".join(file_table(cases, base)), flush=True)
    report: dict = {"sets": {c.name: {k: figures(v) for k, v in base[c.name].items()} for c in cases}}
    if args.gate:
        print("\n" + "\n".join(gate_table(cases, model)), flush=True)
    if args.gate_of:
        ranker = rows_default if args.gate_of == "default" else candidates(model)[args.gate_of]
        print(f"\nThe gate with {args.gate_of}: answered, off-topic refused (default | candidate)")
        for case in cases:
            ours, theirs = gate_of(case, rows_default), gate_of(case, ranker, args.gate_depth)
            answered = f"{ours['answered']:.3f} / {theirs['answered']:.3f}"
            print(f"| {case.name} | {answered} | {ours['refused']} / {theirs['refused']} |")
    if args.misses:
        for case in cases:
            print("\n".join(misses(case, base)))
    if args.changes:
        print("\nQuestions the default wins (+) and loses (-) against the previous default")
        for case in cases:
            print("\n".join(changes(case, base)))
    if args.candidates:
        tuned = [c for c in cases if c.split == TUNE]
        ordered = tuned + [c for c in cases if c.split != TUNE]
        print("\nCandidates against the default: doc@1 change (+won/-lost) chunk@1 change")
        print("| candidate | " + " | ".join(f"{c.name} ({c.split})" for c in ordered) + " |")
        print("| --- |" + " --- |" * len(ordered))
        report["candidates"] = {}
        for name, ranker in candidates(model).items():
            if (args.match and not any(m in name for m in args.match.split(","))) or (
                args.skip and args.skip in name
            ):
                continue
            found = {c.name: outcomes(c, ranker) for c in ordered}
            print(candidate_row(name, ordered, base, found), flush=True)
            report["candidates"][name] = {k: figures(v) for k, v in found.items()}
    print(machine_load(), "(end)")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
