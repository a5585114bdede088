"""An ONNX model written as protobuf bytes, for ONNX Runtime to load from memory.

Only what the encoder graph (``e5_graph``) uses: nodes with int, float and int-list attributes,
tensors as raw little-endian bytes, inputs and outputs with named or fixed dimensions, and the
opsets. The field numbers are those of ``onnx.proto`` (IR version 8). Written here rather than
with the ``onnx`` package, which would add 31 MB to every install and 0.7 s to every build
(its ``ml_dtypes`` import) for these few messages; ``tests/unit/encode/test_onnx_proto.py``
reads the bytes back with ``onnx`` and checks the model.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

IR_VERSION = 8
ELEMENT_TYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int32): 6, np.dtype(np.int64): 7}
_ATTRIBUTE_FLOAT, _ATTRIBUTE_INT, _ATTRIBUTE_INTS = 1, 2, 7


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 as two's complement, ten bytes
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _number(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _key(number: int, size: int) -> bytes:
    """The key and length of a length-delimited field of ``size`` bytes."""
    return _varint(number << 3 | 2) + _varint(size)


def _bytes(number: int, value: bytes | str) -> bytes:
    data = value.encode("utf-8") if isinstance(value, str) else value
    return _key(number, len(data)) + data


def _float(number: int, value: float) -> bytes:
    return _varint(number << 3 | 5) + struct.pack("<f", value)


def tensor(name: str, values: np.ndarray) -> bytes:
    """A ``TensorProto`` holding ``values`` (C order, little-endian)."""
    kind = ELEMENT_TYPES[values.dtype.newbyteorder("=")]
    data = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<")).tobytes()
    dims = b"".join(_number(1, size) for size in values.shape)
    return dims + _number(2, kind) + _bytes(8, name) + _bytes(9, data)


def value_info(name: str, element: type, shape: Sequence[int | str]) -> bytes:
    """A graph input or output: ``shape`` by sizes, or names for sizes known when run."""
    dims = b"".join(_bytes(1, _number(1, d) if isinstance(d, int) else _bytes(2, d)) for d in shape)
    tensor_type = _number(1, ELEMENT_TYPES[np.dtype(element)]) + _bytes(2, dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _attribute(name: str, value: int | float | Sequence[int]) -> bytes:
    if isinstance(value, float):
        return _bytes(1, name) + _float(2, value) + _number(20, _ATTRIBUTE_FLOAT)
    if isinstance(value, int):
        return _bytes(1, name) + _number(3, value) + _number(20, _ATTRIBUTE_INT)
    return _bytes(1, name) + b"".join(_number(8, item) for item in value) + _number(20, _ATTRIBUTE_INTS)


@dataclass
class Graph:
    """Nodes added in order (each after what it reads), then ``model`` gives the bytes."""

    nodes: list[bytes] = field(default_factory=list)
    initializers: list[bytes] = field(default_factory=list)
    counter: int = 0

    def name(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"

    def constant(self, values: np.ndarray, stem: str = "w") -> str:
        name = self.name(stem)
        self.initializers.append(tensor(name, values))
        return name

    def node(
        self, op: str, inputs: Sequence[str], outputs: int = 1, domain: str = "", **attributes
    ) -> list[str]:
        """Add ``op`` reading ``inputs`` ("" for an optional input left out); its output names."""
        names = [self.name(op) for _ in range(outputs)]
        self.add(op, inputs, names, domain, **attributes)
        return names

    def add(
        self, op: str, inputs: Sequence[str], outputs: Sequence[str], domain: str = "", **attributes
    ) -> None:
        body = b"".join(_bytes(1, name) for name in inputs) + b"".join(_bytes(2, name) for name in outputs)
        body += _bytes(3, outputs[0]) + _bytes(4, op)
        body += b"".join(_bytes(5, _attribute(key, value)) for key, value in attributes.items())
        self.nodes.append(body + (_bytes(7, domain) if domain else b""))

    def model(self, inputs: Sequence[bytes], outputs: Sequence[bytes], opsets: dict[str, int]) -> bytes:
        """The ``ModelProto``: this graph with ``inputs`` and ``outputs`` (``value_info``), joined
        once (the weights are most of it: one copy of them, not one per enclosing message)."""
        parts = [_bytes(1, node) for node in self.nodes] + [_bytes(2, "graph")]
        parts += [_bytes(11, item) for item in inputs] + [_bytes(12, item) for item in outputs]
        weights = [_key(5, len(item)) for item in self.initializers]
        size = sum(map(len, parts)) + sum(map(len, weights)) + sum(map(len, self.initializers))
        imports = b"".join(
            _bytes(8, _bytes(1, domain) + _number(2, version)) for domain, version in opsets.items()
        )
        head = _number(1, IR_VERSION) + _bytes(2, "semsearch") + imports + _key(7, size)
        keyed = [piece for pair in zip(weights, self.initializers, strict=True) for piece in pair]
        return b"".join([head, *parts, *keyed])
