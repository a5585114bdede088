"""The keyword index of a list of chunks, as a build makes it (and ``gate.calibration.calibrate``)."""

from __future__ import annotations

from collections.abc import Sequence

from semsearch.encode.keywords import KeywordIndex, build_keyword_index, detect_language
from semsearch.ingest.chunking import Chunk, embedding_text


def keyword_index_of(chunks: Sequence[Chunk]) -> KeywordIndex:
    """The BM25 side of an index over ``chunks``: their embedded texts, stemmed in the corpus's
    language (read from the chunk texts), with their heading names."""
    language = detect_language([chunk.text for chunk in chunks])
    texts = [embedding_text(chunk) for chunk in chunks]
    return build_keyword_index(texts, language, [chunk.headings for chunk in chunks])
