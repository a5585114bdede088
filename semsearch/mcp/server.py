"""``semsearch mcp``: an index served to language-model clients (Claude Code, Cursor...) as an
MCP server over stdio, with three tools: ``search``, ``get_passage`` and ``index_info``, which
read the index and never write it, but for ``search``'s ``refresh`` (an incremental build first).

- One ``Collection`` on the index folder or ``postgresql:`` index, opened on the first call (a
  server started before its index exists works once it is built) and reopened when a build or
  ``eval --calibrate`` replaced the index: the store's ``stamp`` tells, read on every call (a
  folder: two ``stat`` calls, as a build swaps the folder and a calibration replaces
  ``meta.json``; PostgreSQL: the record's version and stamp, one small query). The new index is
  opened before the old one is let go, so a call gets the old or the new index, never a mix.
  The loaded model is kept when the new index uses the same one.
- One call at a time: a search takes milliseconds, and a reopen closes the collection that a
  concurrent call would be reading.
- Passages are read from the index, not from the live files: the lines and sections that
  ``search`` reports are those of the indexed text (an edited file's would drift), a passage
  reads the same text that was searched, and the tools can read nothing but indexed text. A
  range of lines is cut out of it (``passages``: the file itself is read only to tell where
  lines fall in a chunk whose HTML comments took line breaks, and only if it is the file indexed).
- A library error (no index, a bad argument) is a tool error (``isError``) in words the model
  can act on; so is an argument of the wrong type or unknown, in one line (``mcp_arguments``);
  the server keeps serving. Nothing but the protocol goes to stdout: the SDK points
  file descriptor 1 at stderr while serving, and logs go to stderr.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from semsearch import __version__
from semsearch.collection import Collection
from semsearch.defaults import DEFAULT_K, DEFAULT_MODE
from semsearch.encode.embedders import Embedder
from semsearch.errors import (
    SemsearchError,
    path_problem,
)
from semsearch.gate.threshold import BASELINE_IN_WORDS
from semsearch.hints import command_to_build, message
from semsearch.store.location import Location, parse_location
from semsearch.store.stores import Store, open_store
from semsearch.util.printable import safe_line

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
except ImportError as exc:  # not installed, or version 1 (no mcpserver)
    raise SemsearchError(
        f"the MCP server needs the mcp package, version 2 or later ({exc}); "
        "install it with `pip install 'semsearch[mcp]'`"
    ) from exc

from semsearch.mcp.answering import AnsweringServer
from semsearch.mcp.pages import page
from semsearch.mcp.schema import (
    MAX_LISTED_FILES,
    EndLine,
    IndexInfo,
    K,
    Mode,
    PassageResult,
    Paths,
    Question,
    Refresh,
    SearchHit,
    SearchResult,
    Section,
    Source,
    Stale,
    StartLine,
    Where,
)

STALE_CHECK_SECONDS = 2.0
"""Files changed since the build are looked up at most this often (a walk of the docs folder:
0.3 ms for ten files, but about a third of a second for ten thousand), and never more often
than every ten times the last walk's cost."""

SEARCH = """\
Search a folder of Markdown documents (indexed with semsearch) for the passages that answer a \
question, by meaning rather than exact words, in any language.

Call it before answering a question these documents may cover, and again with other words when \
the first passages are not enough. Returns the best passages with their file (`source`), \
section path and line numbers, cosine `score`, and `text`; cite the file and section of what \
you use. `answered` says whether any passage passed the index's relevance gate and `reason` \
why: when `answered` is false (no hits), the documents do not answer the question, so say so \
rather than answering from memory. `stale` lists documents changed since the index was built \
(their latest edits are not searched); `refresh` true updates the index first."""

GET_PASSAGE = """\
Read indexed text of one Markdown document from the same folder as `search`: the passages of a \
section (subsections included), of a range of lines, or of the whole file, in document order.

Use it to read more around a search hit: pass the hit's `source` and `section` for its whole \
section, or `start_line`/`end_line` for the lines you need (passages are cut to them; each says \
which lines it holds). Text is returned as indexed (the version `search` saw); a long result is \
cut between lines at about 20,000 characters (a single longer line comes whole) and \
`next_start_line` says where to continue."""

INDEX_INFO = """\
Describe the document index behind `search`: its documents folder, files, passage count, \
embedding model, relevance threshold and where it comes from, when it was built, and which \
documents changed since (they need a rebuild with `semsearch build` to be searchable)."""

READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)


class Library:
    """The index behind the tools (see the module docstring), and the tools themselves."""

    def __init__(self, index: str | Path | Location, embedder: Embedder | None = None):
        location = parse_location(index)
        self.path: Location = location.absolute() if isinstance(location, Path) else location
        self.store = open_store(self.path)
        self._embedder = embedder
        self._collection: Collection | None = None
        self._stamp: Hashable | None = None
        self._changed: list[str] = []
        self._changed_until = 0.0
        self._lock = threading.Lock()

    # The tools

    def search(
        self,
        question: Question,
        k: K = DEFAULT_K,
        mode: Mode = DEFAULT_MODE,
        paths: Paths = (),
        where: Where = (),
        refresh: Refresh = False,
    ) -> SearchResult:
        with self._call() as collection:
            answer = collection.search(question, k, mode=mode, paths=paths, where=where, refresh=refresh)
            self._embedder = collection.embedder  # loaded now: kept across reopens
            if refresh and answer.not_refreshed is None:  # the index it searched is the one on disk now
                self._stamp, self._changed_until = self.store.stamp(), 0.0
            stale = self._stale(collection, answer.not_refreshed)
        return SearchResult(
            answered=answer.answered,
            reason=answer.reason,
            ranked_by=answer.ranked_by,
            missing=list(answer.missing),
            missing_elsewhere=answer.missing_elsewhere,
            unheld=list(answer.unheld),
            hits=[
                SearchHit(
                    rank=hit.rank,
                    source=hit.source,
                    section=hit.section,
                    start_line=hit.lines[0],
                    end_line=hit.lines[1],
                    location=hit.location,
                    score=round(hit.score, 4),
                    keyword_score=None if hit.keyword_score is None else round(hit.keyword_score, 4),
                    exact=hit.exact,
                    text=hit.text,
                )
                for hit in answer.hits
            ],
            question=answer.question,
            question_cut=answer.question_cut,
            mode=answer.mode,
            threshold=round(answer.threshold, 4),
            best_score=None if answer.best_score is None else round(answer.best_score, 4),
            stale=stale,
        )

    def get_passage(
        self,
        source: Source,
        section: Section = None,
        start_line: StartLine = None,
        end_line: EndLine = None,
    ) -> PassageResult:
        with self._call() as collection:
            source, chunks = collection.file_passages(
                source, section=section, start_line=start_line, end_line=end_line
            )
            passages, next_start_line = page(chunks)
            changed = source in self._changed_files(collection)
        return PassageResult(
            source=source,
            passages=passages,
            truncated=next_start_line is not None,
            next_start_line=next_start_line,
            stale=Stale(files=[source], note=f"{source} changed since the build; this is the indexed text")
            if changed
            else None,
        )

    def index_info(self) -> IndexInfo:
        with self._call() as collection:
            summary = collection.summary()
            changed = self._changed_files(collection, fresh=True)
            stale = self._stale(collection)
        calibrated = summary.calibrated
        if calibrated is not None:
            origin = f"calibrated with `semsearch eval --calibrate` ({calibrated.method})"
        else:
            origin = "derived at build time from a bank of off-topic questions"
        origin += f"; a passage must beat the question's baseline: {BASELINE_IN_WORDS}"
        return IndexInfo(
            index=str(self.path),
            docs_folder=summary.docs_root,
            files=len(summary.files),
            file_names=summary.files[:MAX_LISTED_FILES],
            without_text=summary.without_text[:MAX_LISTED_FILES],
            chunks=summary.chunks,
            model=summary.model.spec,
            margin=round(summary.margin, 4),
            margin_origin=origin,
            built_at=summary.built_at,
            semsearch_version=summary.semsearch_version,
            changed_files=changed[:MAX_LISTED_FILES],
            front_matter_fields=summary.front_matter,
            front_matter_unread=summary.front_matter_unread[:MAX_LISTED_FILES],
            stale=stale,
        )

    # The index behind them

    @contextmanager
    def _call(self) -> Iterator[Collection]:
        """One call at a time, on the index as it is now; library errors become tool errors, and
        so does a path too long for the system (a reason, not a logged traceback)."""
        with self._lock:
            try:
                yield self._current()
            except SemsearchError as exc:
                raise ToolError(message(exc.about(self.path), agent=True)) from exc
            except OSError as exc:
                if (problem := path_problem(exc)) is None:
                    raise
                raise ToolError(problem) from None

    def _current(self) -> Collection:
        stamp = self.store.stamp()
        if self._collection is not None and stamp is not None and stamp == self._stamp:
            return self._collection
        collection = Collection(self.path, embedder=self._embedder)
        if self._embedder is not None and self._embedder.spec != collection.model:
            collection.close()
            collection = Collection(self.path)  # rebuilt with another model: load that one
        if self._collection is not None:
            print(f"semsearch: {safe_line(str(self.path))} changed; reopened it", file=sys.stderr)
            self._collection.close()
        self._collection, self._stamp = collection, stamp
        self._changed_until = 0.0
        return collection

    def _changed_files(self, collection: Collection, fresh: bool = False) -> list[str]:
        now = time.monotonic()
        if fresh or now >= self._changed_until:
            self._changed = collection.changed_files()
            cost = time.monotonic() - now
            self._changed_until = time.monotonic() + max(STALE_CHECK_SECONDS, 10 * cost)
        return self._changed

    def _stale(self, collection: Collection, not_refreshed: str | None = None) -> Stale | None:
        """The files changed since the build, and why a refresh asked for did not happen."""
        changed = self._changed_files(collection)
        busy = f"could not refresh the index ({not_refreshed}): " if not_refreshed else ""
        if not changed:
            return Stale(files=[], note=f"{busy}results come from the index as it is") if busy else None
        command = command_to_build(collection.docs_root, self.path)
        return Stale(
            files=changed[:20],
            note=f"{busy}{len(changed)} file(s) changed since the index was built: results reflect "
            f"the indexed versions; rebuild with `{command}`",
        )

    def close(self) -> None:
        with self._lock:
            if self._collection is not None:
                self._collection.close()
                self._collection = None


def _instructions(store: Store) -> str:
    """What the server offers, naming the documents when the index already exists."""
    meta = None
    with suppress(SemsearchError):  # a server unreachable now: a call will say so
        meta = store.peek_meta()
    about = ""
    if meta:
        files = list(meta.files)
        shown = ", ".join(files[:15]) + (f" and {len(files) - 15} more" if len(files) > 15 else "")
        about = f" ({meta.docs_root}: {shown})"
    return (
        f"Semantic search over a folder of Markdown documents{about}. Call `search` before "
        "answering questions these documents may cover and cite the file and section you use; "
        "an empty result means the documents do not answer the question. `get_passage` reads "
        "more of a document, `index_info` describes the index."
    )


def create_server(library: Library) -> MCPServer:
    """The MCP server offering ``library``'s tools."""
    server = AnsweringServer(
        "semsearch",
        instructions=_instructions(library.store),
        version=__version__,
        log_level="WARNING",
    )
    server.add_tool(library.search, name="search", description=SEARCH, annotations=READ_ONLY)
    server.add_tool(library.get_passage, name="get_passage", description=GET_PASSAGE, annotations=READ_ONLY)
    server.add_tool(library.index_info, name="index_info", description=INDEX_INFO, annotations=READ_ONLY)
    return server


def serve(index: str | Path | Location) -> None:
    """Serve the index at ``index`` over stdio until the client closes the connection."""
    library = Library(index)
    server = create_server(library)
    print(f"semsearch: MCP server on stdio for the index at {safe_line(str(library.path))}", file=sys.stderr)
    try:
        server.run("stdio")
    finally:
        library.close()
