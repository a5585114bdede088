"""semsearch: semantic search over folders of Markdown, offline.

from semsearch import Collection, build_index

build_index("docs", "index")
with Collection("index") as docs:
    answer = docs.search("Ile mam dni na zwrot towaru?")
    print(answer.reason)
    for hit in answer.hits:
        print(hit.location, round(hit.score, 3))
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing: a Ctrl-C while the
# command line starts lands in ``__main__.main`` sooner (see there); type checkers read it alike

__version__ = "0.1.0"

_EXPORTS = {
    "Collection": "collection",
    "Answer": "collection",
    "Hit": "retrieve.search",
    "Condition": "retrieve.filters",
    "Chunk": "ingest.chunk",
    "build_index": "build.pipeline",
    "BuildReport": "build.report",
    "Step": "build.embedding",
    "Embedder": "encode.embedders",
    "load_embedder": "encode.embedders",
    "SemsearchError": "errors",
    "DocsError": "errors",
    "IndexMissingError": "errors",
    "IndexCorruptError": "errors",
    "MetaUnreadableError": "errors",
    "IndexBusyError": "errors",
    "IndexChangedError": "errors",
    "IndexLocationError": "errors",
    "IndexWriteError": "errors",
    "ModelError": "errors",
    "QuestionsError": "errors",
    "UsageError": "errors",
}
__all__ = [
    "Answer",
    "BuildReport",
    "Chunk",
    "Collection",
    "Condition",
    "DocsError",
    "Embedder",
    "Hit",
    "IndexBusyError",
    "IndexChangedError",
    "IndexCorruptError",
    "IndexLocationError",
    "IndexMissingError",
    "IndexWriteError",
    "MetaUnreadableError",
    "ModelError",
    "QuestionsError",
    "SemsearchError",
    "Step",
    "UsageError",
    "__version__",
    "build_index",
    "load_embedder",
]

if TYPE_CHECKING:
    from semsearch.build.embedding import Step
    from semsearch.build.pipeline import build_index
    from semsearch.build.report import BuildReport
    from semsearch.collection import Answer, Collection
    from semsearch.encode.embedders import Embedder, load_embedder
    from semsearch.errors import (
        DocsError,
        IndexBusyError,
        IndexChangedError,
        IndexCorruptError,
        IndexLocationError,
        IndexMissingError,
        IndexWriteError,
        MetaUnreadableError,
        ModelError,
        QuestionsError,
        SemsearchError,
        UsageError,
    )
    from semsearch.ingest.chunk import Chunk
    from semsearch.retrieve.filters import Condition
    from semsearch.retrieve.search import Hit


def __getattr__(name: str):
    """The API is imported on first use, so that ``import semsearch`` (and the CLI) stays fast."""
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'semsearch' has no attribute {name!r}")
