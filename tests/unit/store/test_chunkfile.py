from __future__ import annotations

import json

import pytest

from semsearch.ingest.chunking import Chunk
from semsearch.store.chunkfile import ChunkFile, write_chunks


def make(n: int) -> list[Chunk]:
    return [
        Chunk(
            f"ż ó/{i}.md#0",
            f"ż ó/{i}.md",
            ("Tytuł", f"Sekcja „{i}”"),
            f"treść {i}\nz nową linią",
            i + 1,
            i + 2,
            7,
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("n", [0, 1, 5])
def test_random_access_equals_full_parse(tmp_path, n):
    chunks = make(n)
    write_chunks(tmp_path, chunks)
    assert json.loads((tmp_path / "chunks.json").read_text("utf-8")) == [c.to_dict() for c in chunks]
    stored = ChunkFile.open(tmp_path)
    assert len(stored) == n
    assert [stored[i] for i in range(n)] == chunks  # one line read at a time
    if n:
        assert stored[-1] == chunks[-1]
    with pytest.raises(IndexError):
        stored[n]
    assert list(stored) == chunks == stored[:]


def test_chunks_file_is_one_readable_chunk_per_line(tmp_path):
    write_chunks(tmp_path, make(3))
    lines = (tmp_path / "chunks.json").read_text("utf-8").splitlines()
    assert lines[0] == "[" and lines[-1] == "]" and len(lines) == 5
    assert "Sekcja „1”" in lines[2]
