"""Which questions the "names the folder never mentions" rule refuses (gate.decision.decide's
``names_unheld``), per set: answerable ones it would wrongly refuse and unanswerable ones it
refuses. Model-free: the rule reads only the chunks' keyword index, which a build makes the same
way (``encode.corpus.keyword_index_of``), so this needs no embedding.

    .venv/bin/python bench/bench_named.py [SET_FOLDER...]   (default: ../shared/data and bench/data sets)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from semsearch.build.budget import DEFAULT_MAX_TOKENS
from semsearch.encode.corpus import keyword_index_of
from semsearch.ingest.chunking import chunk_markdown
from semsearch.ingest.sources import discover
from semsearch.ingest.tokens import count_tokens
from semsearch.retrieve.index import Index, all_unheld

ROOT = Path(__file__).resolve().parent.parent


def _sets(arguments: list[str]) -> list[Path]:
    if arguments:
        return [Path(a) for a in arguments]
    folders = [
        *sorted((ROOT.parent / "shared" / "data").glob("*/")),
        *sorted((ROOT / "bench" / "data").glob("*/")),
    ]
    return [f for f in folders if (f / "questions.jsonl").is_file() and (f / "docs").is_dir()]


def _chunks(docs: Path) -> list:
    chunks = []
    for path in discover(docs)[0]:
        relative = path.relative_to(docs).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        chunks += chunk_markdown(text, relative, max_tokens=DEFAULT_MAX_TOKENS, count_tokens=count_tokens)
    return chunks


def measure(folder: Path) -> dict:
    chunks = _chunks(folder / "docs")
    index = Index(Path("."), {}, chunks, None, None, None, keyword_index_of(chunks))  # type: ignore[arg-type]
    rows = [
        json.loads(line)
        for line in (folder / "questions.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ]
    answerable = [r for r in rows if r.get("source")]
    unanswerable = [r for r in rows if not r.get("source")]
    wrong = [r["question"] for r in answerable if _names_unheld(index, r["question"])]
    right = [r["question"] for r in unanswerable if _names_unheld(index, r["question"])]
    return {
        "set": folder.name,
        "answerable": len(answerable),
        "refused_answerable": wrong,
        "unanswerable": len(unanswerable),
        "refused_unanswerable": right,
    }


def _names_unheld(index: Index, question: str) -> bool:
    return bool(all_unheld(index.named_rows(index.parse(question))))


def main() -> None:
    print("| set | answerable | of them refused by the rule | unanswerable | of them refused by the rule |")
    print("| --- | ---: | ---: | ---: | ---: |")
    details = []
    for folder in _sets(sys.argv[1:]):
        m = measure(folder)
        print(
            f"| {m['set']} | {m['answerable']} | {len(m['refused_answerable'])} | {m['unanswerable']} "
            f"| {len(m['refused_unanswerable'])} |"
        )
        details.append(m)
    for m in details:
        for q in m["refused_answerable"]:
            print(f"  {m['set']}: answerable refused: {q}")
        for q in m["refused_unanswerable"][:5]:
            print(f"  {m['set']}: unanswerable refused: {q}")


if __name__ == "__main__":
    main()
