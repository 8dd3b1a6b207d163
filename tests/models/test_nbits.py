"""4-bit weight-only matrix products: exact for weights that are Q4_0 blocks, run by ONNX
Runtime's MatMulNBits, close to the float product for any weights."""

from __future__ import annotations

import numpy as np
import pytest

from openmsd.models.backends.nbits import quantize_blocks, to_matmul_nbits

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _graph(weight: np.ndarray):
    from onnx import TensorProto, helper, numpy_helper

    k, n = weight.shape
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", n])],
        [numpy_helper.from_array(weight, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _q4_0_weight(rng: np.random.Generator, k: int, n: int) -> np.ndarray:
    """Weights as GGML's Q4_0 stores them: per block of 32 along K a scale and codes 0-15,
    the block's largest magnitude at code 0."""
    codes = rng.integers(0, 16, size=(n, k // 32, 32))
    codes[..., 5] = 0
    scales = rng.uniform(0.01, 0.1, size=(n, k // 32, 1)).astype(np.float16).astype(np.float32)
    return ((codes - 8) * scales).reshape(n, k).T.astype(np.float32)


@pytest.mark.parametrize("accuracy_level", [0, 4])
def test_q4_0_weights_come_back_bit_for_bit_and_multiply_right(accuracy_level):
    rng = np.random.default_rng(0)
    weight = _q4_0_weight(rng, 64, 48)
    model = _graph(weight)
    assert to_matmul_nbits(model, accuracy_level) == 0.0
    assert [node.op_type for node in model.graph.node] == ["MatMulNBits"]
    x = rng.normal(size=(3, 64)).astype(np.float32)
    got, expected = _run(model, x), x @ weight
    # accuracy level 4 quantises the activations to int8 per block: about 1% of the scale
    tolerance = 1e-4 if accuracy_level == 0 else 0.02
    assert np.abs(got - expected).max() <= tolerance * np.abs(expected).max()


def test_other_weights_lose_at_most_one_step():
    rng = np.random.default_rng(1)
    weight = rng.normal(size=(64, 8)).astype(np.float32)
    codes, scales = quantize_blocks(weight)
    back = ((codes.astype(np.float32) - 8) * scales[..., None]).reshape(8, 64).T
    step = np.repeat(np.abs(scales), 32, axis=1).T  # each weight's block scale, [64, 8]
    # half a step, but a whole one for a value near +8 steps (codes stop at 15, as in Q4_0)
    assert np.all(np.abs(back - weight) <= step + 1e-6)
    assert np.mean(np.abs(back - weight) <= step / 2 + 1e-6) > 0.95
    assert 0 < to_matmul_nbits(_graph(weight)) <= np.abs(scales).max() + 1e-6


def test_matmuls_it_cannot_pack_are_left_alone():
    weight = np.ones((40, 4), np.float32)  # K not a multiple of 32
    model = _graph(weight)
    assert to_matmul_nbits(model) == 0.0
    assert [node.op_type for node in model.graph.node] == ["MatMul"]
