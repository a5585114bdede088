"""Opening a stored index for search: read and checked from disk, and the model it records."""

from __future__ import annotations

from semsearch.encode.embedders import Embedder, canonical_spec, load_embedder
from semsearch.errors import IndexCorruptError, ModelError, about_index
from semsearch.retrieve.index import Index
from semsearch.retrieve.searcher import DEFAULT_RANKING, Ranking, Searcher
from semsearch.store.location import Location
from semsearch.store.stores import FolderStore, Store, open_store


def load_index(index_dir: Location | str | Store, keywords: bool = True) -> Index:
    """Read and check the index at ``index_dir``: a folder (see ``reader.read_index``), a
    ``postgresql:`` URL, or a store (see ``stores``); an error met names that index
    (``SemsearchError.index``, for its hint)."""
    store = open_store(index_dir)  # parses the location; a store's constructor reads nothing
    with about_index(store.location):
        stored = store.read(keywords=keywords)
    return Index(
        path=stored.path,
        meta=stored.meta,
        chunks=stored.chunks,
        vectors=stored.vectors,
        offtopic=stored.offtopic,
        background=stored.background,
        keywords=stored.keywords,
        pages=stored.pages,
        identity=stored.identity,
        store=store,
    )


def searcher_for(index: Index, ranking: Ranking = DEFAULT_RANKING) -> Searcher:
    """The searcher of ``index``: inside its engine when its store has one (``retrieve.engine``,
    imported only then: a folder index's cold ``ask`` does without it), else in memory."""
    if not isinstance(index.store, FolderStore):
        from semsearch.retrieve.engine import EngineSearcher
        from semsearch.store.engine import SearchEngine

        if isinstance(index.store, SearchEngine):
            return EngineSearcher(index, ranking)
    return Searcher(index, ranking)


def embedder_for(index: Index, requested_model: str | None = None) -> Embedder:
    """The embedder the index was built with; a different ``requested_model`` is an error."""
    if requested_model and canonical_spec(requested_model) != index.model:
        raise ModelError(
            f"the index was built with {index.model}, not {canonical_spec(requested_model)}; "
            "queries must use the index's model (rebuild to change it)"
        )
    embedder = load_embedder(index.model, local_only=True)
    if embedder.dim != index.vectors.shape[1]:
        raise IndexCorruptError(
            f"model {index.model} gives {embedder.dim}-dim vectors but the index holds "
            f"{index.vectors.shape[1]}-dim ones"
        )
    return embedder
