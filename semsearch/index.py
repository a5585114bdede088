"""Building, writing, loading and querying the on-disk index.

An index is a folder of three files:

- ``vectors.npy``: N x dim float32, L2-normalized rows (dot product = cosine);
- ``chunks.json``: the N chunks, in row order, one per line (``chunks.offsets.npy``: where
  each line starts, so that ``ask`` reads only the chunks it shows);
- ``meta.json``: model spec, dimension, chunking settings, per-file fingerprints, ``min_score``;
- ``offtopic.npy``: query vectors of the off-topic question bank (see ``threshold``);
- ``keywords.*``: the BM25 side of hybrid search (see ``keywords``).

A build writes a fresh folder beside the old one and swaps it in with one rename, so an
interrupted build never leaves a half-written index.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import __version__
from .chunkfile import CHUNKS_FILE, OFFSETS_FILE, ChunkFile, write_chunks
from .chunking import CHUNKER_VERSION, Chunk, chunk_markdown, embedding_text
from .embedders import DEFAULT_MODEL, Embedder, canonical_spec, load_embedder
from .errors import (
    DocsError,
    IndexBusyError,
    IndexCorruptError,
    IndexMissingError,
    ModelError,
    SemsearchError,
    UsageError,
)
from .keywords import FILES as KEYWORD_FILES
from .keywords import KeywordIndex, build_keyword_index
from .keywords import settings as keyword_settings
from .search import MODES, Hit, fuse, identifiers, names_something_exact, rank, references
from .sources import Skipped, SourceFile, changed_files, discover, read_source
from .threshold import background_floor, bank_sha256, calibrate, is_answer

INDEX_FORMAT = 1
DEFAULT_MAX_TOKENS = 300
EMBED_BATCH = 16
TOKENIZER = "tiktoken:cl100k_base"

ProgressCallback = Callable[[int, int], None]
"""Called with (chunks embedded so far, total chunks)."""


@dataclass(frozen=True)
class Changes:
    new: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0


@dataclass
class BuildReport:
    index_dir: Path
    files: int
    chunks: int
    seconds: float
    min_score: float
    warnings: list[str] = field(default_factory=list)
    """Files indexed after a repair (e.g. invalid UTF-8 replaced)."""
    skipped: list[Skipped] = field(default_factory=list)
    changes: Changes = field(default_factory=Changes)
    full_reason: str | None = None
    """Why nothing could be reused from the previous index (None: no previous index, or reused)."""
    embedded: int = 0
    up_to_date: bool = False


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    min_score: float
    """The threshold applied to this question."""
    offtopic_score: float | None = None
    """Similarity of the question to the nearest off-topic bank question, when that rule applied."""
    mode: str = "hybrid"


class Ranked(NamedTuple):
    row: int
    score: float
    """Cosine similarity: what the no-answer decision reads, whatever ranked the row."""
    exact: bool
    """The chunk contains a code or reference the question names verbatim."""
    keyword_score: float | None = None
    """BM25 score (None in dense mode)."""


@dataclass
class Index:
    path: Path
    meta: dict
    chunks: Sequence[Chunk]
    """Read lazily (`ChunkFile`) when loaded from disk."""
    vectors: np.ndarray
    offtopic: np.ndarray
    """Query vectors of the whole off-topic bank (reused by incremental builds)."""
    background: np.ndarray
    """The bank questions kept as the background of the no-answer rule."""
    keywords: KeywordIndex | None = None
    """None for an index built before keyword search existed."""

    def changed_files(self) -> list[str]:
        """Files under the docs root added, removed or modified since the build (sizes, mtimes)."""
        recorded = {**self.meta.get("files", {}), **self.meta.get("skipped", {})}
        return changed_files(Path(self.meta["docs_root"]), recorded, self.meta.get("excludes", []))

    @property
    def offtopic_reusable(self) -> bool:
        return self.meta["offtopic"].get("bank_sha256") == bank_sha256()

    @property
    def model(self) -> str:
        return self.meta["model"]["spec"]

    @property
    def min_score(self) -> float:
        return float(self.meta["min_score"]["value"])

    def identifier_rows(self, question: str) -> np.ndarray:
        """Rows whose chunk contains a code the question names verbatim (see ``identifiers``),
        case-insensitively, or every part of a reference it names (see ``references``:
        ``art. 6 ust. 1 lit. a`` is in the chunk that cites it, not in those citing lit. b)."""
        codes = identifiers(question)
        chains = references(question)
        if not codes and not chains:
            return np.empty(0, dtype=np.int64)
        keywords = self.keyword_index()
        found = [keywords.rows_with(code) for code in codes]
        found += [keywords.rows_with_all(parts) for parts in chains]
        return np.unique(np.concatenate(found))

    def allowed_rows(self, paths: Sequence[str]) -> np.ndarray | None:
        """Mask of the rows whose file matches one of the ``.gitignore``-style ``paths``
        (``faq/**``, ``*.md``, ``regulamin.md``); None without patterns."""
        if not paths:
            return None
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines(paths)
        allowed = np.zeros(len(self.chunks), dtype=bool)
        for source, record in self.meta["files"].items():
            if spec.match_file(source):
                if "rows" not in record:
                    raise IndexCorruptError(
                        f"the index at {self.path}/ predates --path filters; "
                        "rebuild it with `semsearch build`"
                    )
                start, end = record["rows"]
                allowed[start:end] = True
        if not allowed.any():
            raise UsageError(f"no indexed file matches --path {' '.join(paths)}")
        return allowed

    def keyword_index(self) -> KeywordIndex:
        if self.keywords is None:
            raise IndexCorruptError(
                f"the index at {self.path}/ has no keyword index (built by an older semsearch); "
                "rebuild it with `semsearch build`, or ask with --mode dense"
            )
        return self.keywords

    def ranked(
        self,
        question: str,
        query_vector: np.ndarray,
        k: int,
        mode: str = "hybrid",
        paths: Sequence[str] = (),
    ) -> list[Ranked]:
        """The best ``k`` rows for ``question`` under ``mode``, only from files matching ``paths``.

        - ``dense``: cosine similarity alone.
        - ``keyword``: BM25 alone (rows sharing no token with the question are not results).
        - ``hybrid``: cosine similarity, fused with BM25 (see ``fuse``) when the question names
          something exact (a number, a code, a quoted phrase): embeddings blur exact strings,
          and keywords measured worse than embeddings on questions in plain words.

        Outside dense mode, chunks containing a code or reference the question names verbatim
        come first (see ``identifier_rows``).
        """
        if mode not in MODES:
            raise UsageError(f"unknown search mode {mode!r} (one of {', '.join(MODES)})")
        cosine = self.vectors @ np.asarray(query_vector, dtype=self.vectors.dtype).reshape(-1)
        allowed = self.allowed_rows(paths)
        keyword = None
        exact = np.empty(0, dtype=np.int64)
        ranking = cosine
        if mode != "dense":
            keyword = self.keyword_index().scores(question)
            exact = self.identifier_rows(question)
            if mode == "keyword":
                ranking = keyword
                matched = keyword > 0
                allowed = matched if allowed is None else allowed & matched
            elif names_something_exact(question):
                ranking = fuse(cosine, keyword)
        exact_rows = set(exact.tolist())
        return [
            Ranked(
                row=int(i),
                score=float(cosine[i]),
                exact=int(i) in exact_rows,
                keyword_score=None if keyword is None else float(keyword[i]),
            )
            for i in rank(ranking, k, first=exact, allowed=allowed)
        ]

    def search(
        self,
        question: str,
        query_vector: np.ndarray,
        k: int,
        min_score: float | None = None,
        mode: str = "hybrid",
        paths: Sequence[str] = (),
    ) -> SearchResult:
        """Top ``k`` chunks that pass the threshold, in any mode.

        The decision reads cosine similarity whatever ranked the rows (fused or BM25 scores
        have no threshold of their own): without ``min_score`` a passage must reach the index's
        ``min_score`` and be at least as close to the question as the nearest off-topic bank
        question is. An explicit ``min_score`` replaces both rules. A passage containing a code
        or reference the question names verbatim is an answer whatever its score (not in dense
        mode).
        """
        offtopic = None
        threshold = min_score
        if threshold is None:
            offtopic = background_floor(query_vector, self.background)
            threshold = max(self.min_score, offtopic)
        found = [
            r
            for r in self.ranked(question, query_vector, k, mode, paths)
            if is_answer(r.score, r.exact, threshold)
        ]
        hits = [
            Hit(rank=n, score=r.score, chunk=self.chunks[r.row], keyword_score=r.keyword_score)
            for n, r in enumerate(found, 1)
        ]
        return SearchResult(hits=hits, min_score=float(threshold), offtopic_score=offtopic, mode=mode)


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
    full: bool = False,
    excludes: Sequence[str] = (),
    embedder: Embedder | None = None,
    progress: ProgressCallback | None = None,
) -> BuildReport:
    """Index every Markdown file under ``docs`` into ``index_dir``.

    Incremental: files whose content hash, model and chunking settings are unchanged keep their
    chunks and vectors; only new and changed files are embedded and removed files are dropped.
    The result equals a full build of the same folder. ``full`` forces a full rebuild.
    """
    from .tokens import count_tokens

    started = time.perf_counter()
    spec = embedder.spec if embedder else canonical_spec(model)  # a bad --model fails first
    docs = Path(docs)
    if not docs.is_dir():
        raise DocsError(f"documents folder not found: {docs}")
    if max_tokens < 32:
        raise DocsError(f"--max-tokens must be at least 32 (got {max_tokens})")
    paths, skipped = discover(docs, excludes)
    if not paths:
        raise DocsError(f"no Markdown files (.md, .markdown) under {docs}")
    chunking = {
        "max_tokens": max_tokens,
        "tokenizer": TOKENIZER,
        "context": "heading path",
        "chunker_version": CHUNKER_VERSION,
    }

    with index_lock(Path(index_dir)):
        previous, full_reason = _reusable_index(Path(index_dir), spec, chunking, full)
        old_files = previous.meta["files"] if previous else {}
        sources: list[SourceFile] = []
        warnings: list[str] = []
        for path in paths:
            source = read_source(path, docs)
            if isinstance(source, Skipped):
                skipped.append(source)
                continue
            if source.warning:
                warnings.append(f"{source.relative}: {source.warning}")
            sources.append(source)
        unchanged = {s.relative for s in sources if old_files.get(s.relative, {}).get("sha256") == s.sha256}
        changes = Changes(
            new=sum(s.relative not in old_files for s in sources),
            changed=sum(s.relative in old_files and s.relative not in unchanged for s in sources),
            removed=len(set(old_files) - {s.relative for s in sources}),
            unchanged=len(unchanged),
        )
        report = BuildReport(
            index_dir=Path(index_dir),
            files=len(sources),
            chunks=0,
            seconds=0.0,
            min_score=0.0,
            warnings=warnings,
            skipped=skipped,
            changes=changes,
            full_reason=full_reason,
        )
        if (
            previous
            and not (changes.new or changes.changed or changes.removed)
            and _keywords_current(previous)
        ):
            _refresh_fingerprints(previous, docs, sources, skipped, excludes)
            report.chunks, report.min_score = len(previous.chunks), previous.min_score
            report.up_to_date = True
            report.seconds = time.perf_counter() - started
            return report

        embedder = embedder or load_embedder(spec)
        limit = embedder.max_input_tokens
        reused = _chunks_by_source(previous) if previous else {}
        chunks: list[Chunk] = []
        rows: list[int | None] = []  # row of each chunk in the previous index, None: to embed
        for source in sources:
            if source.relative in unchanged:
                for chunk, row in reused.get(source.relative, []):
                    chunks.append(chunk)
                    rows.append(row)
                continue
            for chunk in chunk_markdown(
                source.text,
                source.relative,
                max_tokens=max_tokens,
                count_tokens=count_tokens,
                fits=lambda text: embedder.passage_tokens(text) <= limit,
            ):
                chunks.append(chunk)
                rows.append(None)
        if not chunks:
            raise DocsError(f"the Markdown files under {docs} hold no text to index")
        with_text = {chunk.source for chunk in chunks}
        report.skipped = skipped + [
            Skipped(s.relative, "no text to index (only headings or front matter)")
            for s in sources
            if s.relative not in with_text
        ]

        vectors = np.zeros((len(chunks), embedder.dim), dtype=np.float32)
        old_rows = [(i, row) for i, row in enumerate(rows) if row is not None]
        if old_rows:
            vectors[[i for i, _ in old_rows]] = previous.vectors[[row for _, row in old_rows]]
        fresh = [i for i, row in enumerate(rows) if row is None]
        vectors[fresh] = embed_in_batches(embedder, [embedding_text(chunks[i]) for i in fresh], progress)
        bank_vectors = previous.offtopic if previous is not None and previous.offtopic_reusable else None
        calibration = calibrate(embedder, vectors, chunks, bank_vectors=bank_vectors)
        language = calibration.record["corpus_language"]
        keywords = build_keyword_index([embedding_text(chunk) for chunk in chunks], language)

        rows_of = _row_ranges(chunks)
        meta = {
            "format": INDEX_FORMAT,
            "semsearch_version": __version__,
            "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "docs_root": str(docs.resolve()),
            "model": {"spec": embedder.spec, "dim": embedder.dim, "max_input_tokens": limit},
            "chunking": chunking,
            "chunks": len(chunks),
            "files": {s.relative: _file_record(s, rows_of.get(s.relative, (0, 0))) for s in sources},
            "skipped": _skipped_record(skipped),
            "excludes": list(excludes),
            "min_score": calibration.record,
            "keywords": keyword_settings(language),
            "offtopic": {
                "bank_sha256": bank_sha256(),
                "questions": len(calibration.offtopic),
                "background_rows": calibration.background_rows,
            },
        }
        write_index(Path(index_dir), vectors, chunks, meta, calibration.offtopic, keywords)
    report.chunks = len(chunks)
    report.embedded = len(fresh)
    report.min_score = calibration.min_score
    report.seconds = time.perf_counter() - started
    return report


def _reusable_index(
    index_dir: Path, spec: str, chunking: dict, full: bool
) -> tuple[Index | None, str | None]:
    """The previous index when its vectors can be reused, else None and why not."""
    if full:
        return None, "--full"
    if not (index_dir / "meta.json").exists():
        return None, None
    try:
        previous = load_index(index_dir)
    except SemsearchError as exc:
        return None, f"the previous index is unreadable ({exc})"
    if previous.model != spec:
        return None, f"the model changed ({previous.model} → {spec})"
    if previous.meta.get("chunking") != chunking:
        return None, f"the chunking settings changed ({previous.meta.get('chunking')} → {chunking})"
    return previous, None


def _keywords_current(index: Index) -> bool:
    """Whether the index's keyword index was made the way this version makes it (if not, a
    build with no file changes still rebuilds it, reusing every chunk and vector)."""
    language = index.meta.get("min_score", {}).get("corpus_language")
    return index.meta.get("keywords") == keyword_settings(language)


def _row_ranges(chunks: list[Chunk]) -> dict[str, tuple[int, int]]:
    """Each file's rows [start, end): a build appends a file's chunks together, in file order."""
    ranges: dict[str, tuple[int, int]] = {}
    for row, chunk in enumerate(chunks):
        start, end = ranges.get(chunk.source, (row, row))
        if end != row:
            raise AssertionError(f"the chunks of {chunk.source} are not contiguous")
        ranges[chunk.source] = (start, row + 1)
    return ranges


def _file_record(source: SourceFile, rows: tuple[int, int]) -> dict:
    start, end = rows
    return {
        "sha256": source.sha256,
        "size": source.size,
        "mtime_ns": source.mtime_ns,
        "chunks": end - start,
        "rows": [start, end],
    }


def _chunks_by_source(index: Index) -> dict[str, list[tuple[Chunk, int]]]:
    grouped: dict[str, list[tuple[Chunk, int]]] = {}
    for row, chunk in enumerate(index.chunks):
        grouped.setdefault(chunk.source, []).append((chunk, row))
    return grouped


def _skipped_record(skipped: list[Skipped]) -> dict[str, dict]:
    return {s.relative: {"reason": s.reason, "size": s.size, "mtime_ns": s.mtime_ns} for s in skipped}


def _refresh_fingerprints(
    index: Index, docs: Path, sources: list[SourceFile], skipped: list[Skipped], excludes: Sequence[str]
) -> None:
    """Nothing to embed: record where the docs are and their sizes and mtimes (for `ask`'s
    staleness check) only."""
    files = index.meta["files"]
    fresh = {
        **index.meta,
        "docs_root": str(docs.resolve()),
        "files": {s.relative: {**files[s.relative], "size": s.size, "mtime_ns": s.mtime_ns} for s in sources},
        "skipped": _skipped_record(skipped),
        "excludes": list(excludes),
    }
    if fresh != index.meta:
        write_meta(index, fresh)


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


INDEX_FILES = ("vectors.npy", "offtopic.npy", CHUNKS_FILE, OFFSETS_FILE, *KEYWORD_FILES, "meta.json")


@contextmanager
def index_lock(index_dir: Path) -> Iterator[None]:
    """One build of an index at a time; a second one fails at once with a clear message."""
    from filelock import FileLock, Timeout

    index_dir = index_dir.absolute()
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(index_dir.parent / f".{index_dir.name}.lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise IndexBusyError(
            f"another `semsearch build` is writing {index_dir}/ (lock {lock.lock_file}); "
            "wait for it to finish"
        ) from None
    try:
        yield
    finally:
        lock.release()


def write_meta(index: Index, meta: dict) -> None:
    """Replace the index's meta.json atomically (a reader sees the old or the new one)."""
    fd, staging = tempfile.mkstemp(prefix=".meta-", suffix=".json", dir=index.path)
    os.close(fd)
    try:
        _write_json(Path(staging), meta)
        with open(staging, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(staging, index.path / "meta.json")
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    index.meta = meta


def write_index(
    index_dir: Path,
    vectors: np.ndarray,
    chunks: list[Chunk],
    meta: dict,
    offtopic: np.ndarray,
    keywords: KeywordIndex,
) -> None:
    """Write the index files to a temporary folder, then swap it in place of ``index_dir``."""
    index_dir = index_dir.absolute()
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    for kind in ("new", "old"):  # left by a build killed while writing; we hold the lock
        for leftover in index_dir.parent.glob(f".{index_dir.name}.{kind}-*"):
            shutil.rmtree(leftover, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{index_dir.name}.new-", dir=index_dir.parent))
    try:
        np.save(staging / "vectors.npy", np.ascontiguousarray(vectors, dtype=np.float32))
        np.save(staging / "offtopic.npy", np.ascontiguousarray(offtopic, dtype=np.float32))
        write_chunks(staging, chunks)
        keywords.save(staging)
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


def load_index(index_dir: Path, attempts: int = 3) -> Index:
    """Load and check an index; vectors are memory-mapped, never unpickled.

    A build swaps a new index folder in while ``ask`` may be reading: if the folder changed
    during the read, the read starts over, so the result is wholly the old or the new index.
    """
    index_dir = Path(index_dir)
    for attempt in range(attempts):
        before = _identity(index_dir)
        try:
            index = _read_index(index_dir)
        except SemsearchError:
            if attempt + 1 < attempts and _identity(index_dir) != before:
                continue
            raise
        if _identity(index_dir) == before:
            return index
    raise IndexCorruptError(f"the index at {index_dir}/ kept changing while being read; try again")


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)


def _read_index(index_dir: Path) -> Index:
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
        chunks = ChunkFile.open(index_dir)
    except FileNotFoundError as exc:
        raise IndexCorruptError(
            f"index at {index_dir}/ is incomplete ({Path(exc.filename).name} missing); {rebuild}"
        ) from exc
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise IndexCorruptError(
            f"index at {index_dir}/ has unreadable metadata or chunks ({exc}); {rebuild}"
        ) from exc
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
    offtopic = _load_matrix(index_dir / "offtopic.npy", dim, rebuild)
    rows = meta.get("offtopic", {}).get("background_rows")
    if not isinstance(rows, list) or not all(isinstance(r, int) and 0 <= r < len(offtopic) for r in rows):
        raise IndexCorruptError(f"index at {index_dir}/ has inconsistent off-topic rows; {rebuild}")
    if vectors.shape[0] != len(chunks) or meta.get("chunks") != len(chunks):
        raise IndexCorruptError(
            f"index at {index_dir}/: {vectors.shape[0]} vectors for {len(chunks)} chunks "
            f"(meta says {meta.get('chunks')}); {rebuild}"
        )
    if not spec:
        raise IndexCorruptError(f"index at {index_dir}/ does not record its model; {rebuild}")
    keywords = None
    if "keywords" in meta:
        try:
            keywords = KeywordIndex.load(index_dir, len(chunks), meta["keywords"].get("language"))
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            raise IndexCorruptError(
                f"index at {index_dir}/ has an unreadable keyword index ({exc}); {rebuild}"
            ) from exc
    return Index(
        path=index_dir,
        meta=meta,
        chunks=chunks,
        vectors=vectors,
        offtopic=offtopic,
        background=np.asarray(offtopic[rows]),
        keywords=keywords,
    )


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
