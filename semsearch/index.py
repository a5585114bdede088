"""Building, writing, loading and querying the on-disk index.

An index is a folder of three files:

- ``vectors.npy``: N x dim float32, L2-normalized rows (dot product = cosine);
- ``chunks.json``: the N chunks, in row order;
- ``meta.json``: model spec, dimension, chunking settings, per-file fingerprints, ``min_score``;
- ``background.npy``: query vectors of the off-topic bank (see ``threshold``), k x dim float32.

A build writes a fresh folder beside the old one and swaps it in with one rename, so an
interrupted build never leaves a half-written index.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from . import __version__
from .chunking import Chunk, chunk_markdown, embedding_text
from .embedders import DEFAULT_MODEL, Embedder, canonical_spec, load_embedder
from .errors import DocsError, IndexCorruptError, IndexMissingError, ModelError
from .search import Hit, search_vectors
from .threshold import background_floor, calibrate

INDEX_FORMAT = 1
DEFAULT_MAX_TOKENS = 300
MARKDOWN_SUFFIXES = {".md", ".markdown"}
EMBED_BATCH = 16
TOKENIZER = "tiktoken:cl100k_base"

ProgressCallback = Callable[[int, int], None]
"""Called with (chunks embedded so far, total chunks)."""


@dataclass
class BuildReport:
    index_dir: Path
    files: int
    chunks: int
    seconds: float
    min_score: float
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    min_score: float
    """The threshold applied to this question."""
    offtopic_score: float | None = None
    """Similarity of the question to the nearest off-topic bank question, when that rule applied."""


@dataclass
class Index:
    path: Path
    meta: dict
    chunks: list[Chunk]
    vectors: np.ndarray
    background: np.ndarray

    @property
    def model(self) -> str:
        return self.meta["model"]["spec"]

    @property
    def min_score(self) -> float:
        return float(self.meta["min_score"]["value"])

    def search(self, query_vector: np.ndarray, k: int, min_score: float | None = None) -> SearchResult:
        """Top ``k`` chunks that pass the threshold.

        Without ``min_score`` the calibrated decision applies: a passage must reach the index's
        ``min_score`` and be at least as close to the question as the nearest off-topic bank
        question is.
        An explicit ``min_score`` replaces both rules.
        """
        offtopic = None
        threshold = min_score
        if threshold is None:
            offtopic = background_floor(query_vector, self.background)
            threshold = max(self.min_score, offtopic)
        found = search_vectors(self.vectors, query_vector, k, float(threshold))
        hits = [Hit(rank=r, score=s, chunk=self.chunks[i]) for r, (i, s) in enumerate(found, 1)]
        return SearchResult(hits=hits, min_score=float(threshold), offtopic_score=offtopic)


@dataclass(frozen=True)
class SourceFile:
    path: Path
    relative: str
    text: str
    sha256: str
    size: int
    mtime_ns: int
    warning: str | None = None


def find_markdown_files(docs: Path) -> list[Path]:
    """Markdown files under ``docs``, sorted by relative POSIX path; hidden entries skipped."""
    found = []
    for root, dirs, files in os.walk(docs):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if not name.startswith(".") and Path(name).suffix.lower() in MARKDOWN_SUFFIXES:
                found.append(Path(root, name))
    return sorted(found, key=lambda p: p.relative_to(docs).as_posix())


def read_source(path: Path, docs: Path) -> SourceFile:
    raw = path.read_bytes()
    stat = path.stat()
    warning = None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8-sig", errors="replace")
        warning = f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced with U+FFFD"
    return SourceFile(
        path=path,
        relative=path.relative_to(docs).as_posix(),
        text=text,
        sha256=hashlib.sha256(raw).hexdigest(),
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        warning=warning,
    )


def embed_in_batches(
    embedder: Embedder, texts: Sequence[str], progress: ProgressCallback | None = None
) -> np.ndarray:
    """Embed passages longest first (similar lengths batch with less padding), in input order."""
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    for start in range(0, len(order), EMBED_BATCH):
        batch = order[start : start + EMBED_BATCH]
        vectors[batch] = embedder.embed_passages([texts[i] for i in batch])
        if progress:
            progress(min(start + EMBED_BATCH, len(order)), len(order))
    return vectors


def build_index(
    docs: Path,
    index_dir: Path,
    *,
    model: str = DEFAULT_MODEL,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    embedder: Embedder | None = None,
    progress: ProgressCallback | None = None,
) -> BuildReport:
    """Chunk and embed every Markdown file under ``docs`` into ``index_dir``."""
    from .tokens import count_tokens

    started = time.perf_counter()
    if embedder is None:
        model = canonical_spec(model)  # a bad --model fails before any work
    docs = Path(docs)
    if not docs.is_dir():
        raise DocsError(f"documents folder not found: {docs}")
    if max_tokens < 32:
        raise DocsError(f"--max-tokens must be at least 32 (got {max_tokens})")
    paths = find_markdown_files(docs)
    if not paths:
        raise DocsError(f"no Markdown files (.md, .markdown) under {docs}")
    embedder = embedder or load_embedder(model)
    limit = embedder.max_input_tokens

    sources: list[SourceFile] = []
    chunks: list[Chunk] = []
    warnings: list[str] = []
    for path in paths:
        try:
            source = read_source(path, docs)
        except OSError as exc:
            warnings.append(f"{path.relative_to(docs).as_posix()}: skipped, cannot read ({exc.strerror})")
            continue
        if source.warning:
            warnings.append(f"{source.relative}: {source.warning}")
        sources.append(source)
        chunks.extend(
            chunk_markdown(
                source.text,
                source.relative,
                max_tokens=max_tokens,
                count_tokens=count_tokens,
                fits=lambda text: embedder.passage_tokens(text) <= limit,
            )
        )
    if not chunks:
        raise DocsError(f"the Markdown files under {docs} hold no text to index")

    vectors = embed_in_batches(embedder, [embedding_text(c) for c in chunks], progress)
    calibration = calibrate(embedder, vectors, chunks)
    chunk_counts: dict[str, int] = {}
    for chunk in chunks:
        chunk_counts[chunk.source] = chunk_counts.get(chunk.source, 0) + 1
    meta = {
        "format": INDEX_FORMAT,
        "semsearch_version": __version__,
        "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "docs_root": str(docs.resolve()),
        "model": {"spec": embedder.spec, "dim": embedder.dim, "max_input_tokens": limit},
        "chunking": {"max_tokens": max_tokens, "tokenizer": TOKENIZER, "context": "heading path"},
        "chunks": len(chunks),
        "files": {
            s.relative: {
                "sha256": s.sha256,
                "size": s.size,
                "mtime_ns": s.mtime_ns,
                "chunks": chunk_counts.get(s.relative, 0),
            }
            for s in sources
        },
        "min_score": calibration.record,
    }
    write_index(Path(index_dir), vectors, chunks, meta, calibration.background)
    return BuildReport(
        index_dir=Path(index_dir),
        files=len(sources),
        chunks=len(chunks),
        seconds=time.perf_counter() - started,
        min_score=calibration.min_score,
        warnings=warnings,
    )


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in {errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.ENOTSUP}:
        return False
    raise OSError(err, os.strerror(err), str(b))


INDEX_FILES = ("vectors.npy", "background.npy", "chunks.json", "meta.json")


def write_index(
    index_dir: Path, vectors: np.ndarray, chunks: list[Chunk], meta: dict, background: np.ndarray
) -> None:
    """Write the index files to a temporary folder, then swap it in place of ``index_dir``."""
    index_dir = index_dir.absolute()
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{index_dir.name}.new-", dir=index_dir.parent))
    try:
        np.save(staging / "vectors.npy", np.ascontiguousarray(vectors, dtype=np.float32))
        np.save(staging / "background.npy", np.ascontiguousarray(background, dtype=np.float32))
        _write_json(staging / "chunks.json", [c.to_dict() for c in chunks])
        _write_json(staging / "meta.json", meta)
        for name in INDEX_FILES:
            with open(staging / name, "rb") as handle:
                os.fsync(handle.fileno())
        if index_dir.exists():
            if not (index_dir / "meta.json").exists() and any(index_dir.iterdir()):
                raise IndexCorruptError(
                    f"{index_dir} exists and is not a semsearch index; refusing to replace it"
                )
            if not _exchange(staging, index_dir):
                retired = staging.with_name(staging.name.replace(".new-", ".old-"))
                index_dir.rename(retired)
                staging.rename(index_dir)
                staging = retired
        else:
            staging.rename(index_dir)
            staging = None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _write_json(path: Path, data) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False, indent=1)
        handle.write("\n")


def load_index(index_dir: Path) -> Index:
    """Load and check an index; vectors are memory-mapped, never unpickled."""
    index_dir = Path(index_dir)
    meta_path = index_dir / "meta.json"
    if not meta_path.exists():
        raise IndexMissingError(
            f"no index at {index_dir}/ (meta.json missing); run `semsearch build DOCS` first"
        )
    rebuild = "rebuild it with `semsearch build`"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
        chunks = [Chunk.from_dict(c) for c in json.loads((index_dir / "chunks.json").read_text("utf-8"))]
    except FileNotFoundError as exc:
        raise IndexCorruptError(
            f"index at {index_dir}/ is incomplete ({Path(exc.filename).name} missing); {rebuild}"
        ) from exc
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise IndexCorruptError(f"index at {index_dir}/ has unreadable metadata ({exc}); {rebuild}") from exc
    if int(meta.get("format", 0)) > INDEX_FORMAT:
        raise IndexCorruptError(
            f"index at {index_dir}/ was written by a newer semsearch ({meta.get('semsearch_version')}); "
            f"upgrade semsearch or {rebuild}"
        )
    try:
        spec, dim = meta["model"]["spec"], int(meta["model"]["dim"])
        float(meta["min_score"]["value"])
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexCorruptError(f"index at {index_dir}/ has incomplete metadata ({exc}); {rebuild}") from exc
    vectors = _load_matrix(index_dir / "vectors.npy", dim, rebuild)
    background = _load_matrix(index_dir / "background.npy", dim, rebuild)
    if vectors.shape[0] != len(chunks) or meta.get("chunks") != len(chunks):
        raise IndexCorruptError(
            f"index at {index_dir}/: {vectors.shape[0]} vectors for {len(chunks)} chunks "
            f"(meta says {meta.get('chunks')}); {rebuild}"
        )
    if not spec:
        raise IndexCorruptError(f"index at {index_dir}/ does not record its model; {rebuild}")
    return Index(path=index_dir, meta=meta, chunks=chunks, vectors=vectors, background=background)


def _load_matrix(path: Path, dim: int, rebuild: str) -> np.ndarray:
    """A float32 (N, dim) array, memory-mapped; anything else is a corrupt index."""
    where = f"index at {path.parent}/"
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"{where} is incomplete ({path.name} missing); {rebuild}") from exc
    except (OSError, ValueError) as exc:
        raise IndexCorruptError(f"{where} has an unreadable {path.name} ({exc}); {rebuild}") from exc
    if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[1] != dim:
        raise IndexCorruptError(
            f"{where}: {path.name} is {matrix.dtype} {matrix.shape}, expected float32 (N, {dim}); {rebuild}"
        )
    return matrix


def embedder_for(index: Index, requested_model: str | None = None) -> Embedder:
    """The embedder the index was built with; a different ``requested_model`` is an error."""
    if requested_model and canonical_spec(requested_model) != index.model:
        raise ModelError(
            f"the index was built with {index.model}, not {canonical_spec(requested_model)}; "
            "queries must use the index's model (rebuild to change it)"
        )
    embedder = load_embedder(index.model)
    if embedder.dim != index.vectors.shape[1]:
        raise IndexCorruptError(
            f"model {index.model} gives {embedder.dim}-dim vectors but the index holds "
            f"{index.vectors.shape[1]}-dim ones; rebuild with `semsearch build`"
        )
    return embedder
