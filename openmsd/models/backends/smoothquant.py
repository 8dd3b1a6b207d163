"""int8 matrix products with each token's activations quantised on its own, after SmoothQuant.

An ONNX graph's ``MatMul`` nodes with a constant weight are rewritten to run on ONNX Runtime's
int8 kernels (``MatMulIntegerToFloat``, ``com.microsoft``) while the vectors stay within a
cosine of 0.9997 of float32 (e5-small-multilingual on TALN abstracts), where dynamic int8 gets
0.997:

* **per token**: each row of an activation (one token) gets its own int8 scale, its largest
  magnitude over 127, computed as the graph runs; ONNX Runtime's dynamic int8 shares one scale
  for a whole batch, so a token with a large activation coarsens every other token's, and a
  paper's vector changes with the papers it is batched with. Here it does not.
* **SmoothQuant** (Xiao et al., ICML 2023): a few input channels carry activations far larger
  than the rest. Dividing channel ``j`` by ``s_j = peak_x[j]**alpha / peak_w[j]**(1 - alpha)``
  and multiplying the weight's row ``j`` by it leaves the product unchanged and moves that
  range into the weights, which are quantised per output column. ``peak_x`` is each channel's
  largest magnitude over calibration texts (:func:`channel_peaks`), ``peak_w`` the weight
  row's; one ``s`` for the products that share an input (query, key, value).
* **GELU outputs shifted**: the input of the feed-forward down-projection comes out of a GELU,
  which is never below :data:`GELU_MIN`; adding ``-GELU_MIN / s`` makes it non-negative, so
  its int8 codes span ``0..255`` instead of half of ``-127..127``, and a constant bias row
  (the shift times the weight) takes it back out.

Weights are int8 per output column (symmetric). The shapes of the graph do not change, so the
model takes the same inputs and gives the same outputs.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.models.backends.products import weight_products

__all__ = ["ALPHA", "CALIBRATION", "GELU_MIN", "calibration_texts", "channel_peaks",
           "quantize_columns", "smoothing", "to_smooth_int8"]

CALIBRATION = Path(__file__).resolve().parents[2] / "data" / "calibration.jsonl.gz"
"""The texts :func:`channel_peaks` runs for the ``onnx-sq8`` build: the shipped sample's
abstracts in English, Portuguese, Spanish and German (``scripts/calibration_texts.py``)."""

ALPHA = 0.6
"""How much of an input channel's range moves into the weights (0: none, 1: all). Chosen among
0.4, 0.5 and 0.6 by the mean cosine of TALN dev papers' vectors to float32 (0.99953, 0.99969,
0.99977)."""
GELU_MIN = -0.17
"""At most the minimum of GELU, ``x * Φ(x)`` (−0.16997 at x ≈ −0.75)."""
_TINY = 1e-5


def smoothing(x_peak: np.ndarray, w_peak: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """SmoothQuant's per-channel divisor ``x_peak**alpha / w_peak**(1 - alpha)`` (both peaks
    floored at 1e-5).

    >>> smoothing(np.array([16.0, 1.0]), np.array([1.0, 1.0]), alpha=0.5).tolist()
    [4.0, 1.0]
    """
    x_peak = np.maximum(np.asarray(x_peak, np.float64), _TINY)
    w_peak = np.maximum(np.asarray(w_peak, np.float64), _TINY)
    return np.maximum(x_peak ** alpha / w_peak ** (1 - alpha), _TINY)


def quantize_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 codes of ``weight`` [K, N] and one float32 scale per column (the column's
    largest magnitude over 127); ``codes * scales`` gives the weight back within half a step.

    >>> codes, scales = quantize_columns(np.array([[1.27, -0.5], [-0.635, 0.25]]))
    >>> codes.tolist(), [round(float(s), 4) for s in scales]
    ([[127, -127], [-64, 64]], [0.01, 0.0039])
    """
    weight = np.asarray(weight, np.float64)
    scales = np.maximum(np.abs(weight).max(axis=0), 1e-12) / 127
    codes = np.clip(np.round(weight / scales), -127, 127).astype(np.int8)
    return codes, scales.astype(np.float32)


def calibration_texts(path: Path = CALIBRATION) -> list[str]:
    """The ``text`` of each line of the JSONL file ``path`` (gzipped)."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line)["text"] for line in lines if line.strip()]


def channel_peaks(model: Any, feeds: Iterable[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The largest magnitude of each channel of each weight product's input (name → [K]) over
    the runs of the float ``onnx.ModelProto`` ``model`` on ``feeds`` (``attention_mask``, where
    fed, leaves padding out). ``model`` is not changed."""
    # optional: the models extra (onnx ~0.3 s, onnxruntime ~0.2 s)
    import onnx
    import onnxruntime as ort
    from onnx import helper

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    names = sorted({node.input[0] for node in weight_products(probe).values()})
    del probe.graph.output[:]
    probe.graph.output.extend(helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None)
                              for n in names)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(probe.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    peaks: dict[str, np.ndarray] = {}
    for feed in feeds:
        mask = feed.get("attention_mask")
        for name, value in zip(names, session.run(names, dict(feed)), strict=True):
            rows = value[mask.astype(bool)] if mask is not None and value.ndim == 3 \
                else value.reshape(-1, value.shape[-1])
            peak = np.abs(rows).max(axis=0)
            peaks[name] = np.maximum(peaks[name], peak) if name in peaks else peak
    if not peaks:
        raise ValueError("channel_peaks needs at least one feed")
    return peaks


def _is_gelu_output(name: str, producers: Mapping[str, Any], depth: int = 4) -> bool:
    """Whether the tensor ``name`` comes out of an exported GELU (``x * 0.5 * (1 + erf(x /
    √2))``: an ``Erf`` at most ``depth`` nodes up through ``Mul`` and ``Add``)."""
    frontier = [name]
    for _ in range(depth):
        nodes = [producers[n] for n in frontier if n in producers]
        if any(node.op_type == "Erf" for node in nodes):
            return True
        frontier = [i for node in nodes if node.op_type in ("Mul", "Add", "Div")
                    for i in node.input]
    return False


def _token_codes(x: str, prefix: str, shifted: bool) -> list[Any]:
    """The nodes that turn ``x`` (already divided by the smoothing) into ``PREFIX q``, uint8
    codes with one scale ``PREFIX s`` per token: symmetric around 128, or, for a GELU output
    ``shifted`` by ``PREFIX shift`` to be non-negative, from 0."""
    from onnx import helper  # optional: the models extra; onnx takes ~0.3 s to import

    p = prefix
    if shifted:
        nodes = [helper.make_node("Add", [x, p + "shift"], [p + "xs"], name=p + "shift"),
                 helper.make_node("ReduceMax", [p + "xs"], [p + "peak"], axes=[-1], keepdims=1,
                                  name=p + "peak"),
                 helper.make_node("Mul", [p + "peak", "sq_inv255"], [p + "s0"], name=p + "step")]
        x, zero = p + "xs", "sq_zp0"
    else:
        nodes = [helper.make_node("Abs", [x], [p + "abs"], name=p + "abs"),
                 helper.make_node("ReduceMax", [p + "abs"], [p + "peak"], axes=[-1], keepdims=1,
                                  name=p + "peak"),
                 helper.make_node("Mul", [p + "peak", "sq_inv127"], [p + "s0"], name=p + "step")]
        zero = "sq_zp128"
    return [
        *nodes,
        helper.make_node("Max", [p + "s0", "sq_tiny"], [p + "s"], name=p + "floor"),
        helper.make_node("Div", [x, p + "s"], [p + "xn"], name=p + "scale"),
        helper.make_node("QuantizeLinear", [p + "xn", "sq_one", zero], [p + "q"],
                         name=p + "quantize")]


def to_smooth_int8(model: Any, peaks: Mapping[str, np.ndarray], alpha: float = ALPHA) -> float:
    """Rewrite in place each weight product of the ``onnx.ModelProto`` ``model`` whose input
    has ``peaks`` (:func:`channel_peaks`) as smoothed, per-token int8; return the largest
    relative error of a smoothed weight's int8 codes (a column's error over its largest
    magnitude: at most 1/254)."""
    # optional: the models extra; onnx takes ~0.3 s to import
    import onnx
    from onnx import helper, numpy_helper

    assert isinstance(model, onnx.ModelProto)
    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    producers = {out: node for node in graph.node for out in node.output}
    groups: dict[str, dict[int, Any]] = {}
    for index, node in weight_products(model).items():
        if node.input[0] in peaks:
            groups.setdefault(node.input[0], {})[index] = node
    constants = {"sq_inv127": np.float32(1 / 127), "sq_inv255": np.float32(1 / 255),
                 "sq_tiny": np.float32(1e-8), "sq_one": np.float32(1.0),
                 "sq_zp128": np.uint8(128), "sq_zp0": np.uint8(0)}
    new_inits = [numpy_helper.from_array(np.array(v), k) for k, v in constants.items()]
    before: dict[int, list[Any]] = {}  # a group's first product → the nodes that quantise x
    replaced: dict[int, list[Any]] = {}  # a product → its int8 nodes
    worst = 0.0
    for number, (x, products) in enumerate(groups.items()):
        p = f"sq{number}_"
        weights = [numpy_helper.to_array(initializers[n.input[1]]).astype(np.float64)
                   for n in products.values()]
        divisor = smoothing(peaks[x], np.max([np.abs(w).max(axis=1) for w in weights], axis=0),
                            alpha)
        weights = [w * divisor[:, None] for w in weights]
        new_inits.append(numpy_helper.from_array((1 / divisor).astype(np.float32), p + "inv"))
        shift = -GELU_MIN / divisor if _is_gelu_output(x, producers) else None
        if shift is not None:
            new_inits.append(numpy_helper.from_array(shift.astype(np.float32), p + "shift"))
        zero = "sq_zp0" if shift is not None else "sq_zp128"
        before[min(products)] = [
            helper.make_node("Mul", [x, p + "inv"], [p + "x"], name=p + "smooth"),
            *_token_codes(p + "x", p, shifted=shift is not None)]
        for j, ((index, node), weight) in enumerate(zip(products.items(), weights,
                                                         strict=True)):
            codes, scales = quantize_columns(weight)
            error = np.abs(codes * scales.astype(np.float64) - weight).max(axis=0)
            worst = max(worst, float((error / (scales * 127)).max()))
            new_inits += [numpy_helper.from_array(codes, f"{p}w{j}"),
                          numpy_helper.from_array(scales, f"{p}ws{j}")]
            out = [f"{p}y{j}"] if shift is not None else list(node.output)
            # ONNX Runtime adds MatMulIntegerToFloat's own bias wrongly with a per-row scale:
            # the shift's bias row is a separate Add
            int8 = [helper.make_node("MatMulIntegerToFloat",
                                     [p + "q", f"{p}w{j}", p + "s", f"{p}ws{j}", zero], out,
                                     name=f"{node.name}_int8", domain="com.microsoft")]
            if shift is not None:
                bias = -(shift @ (codes * scales.astype(np.float64)))
                new_inits.append(numpy_helper.from_array(bias.astype(np.float32), f"{p}b{j}"))
                int8.append(helper.make_node("Add", [out[0], f"{p}b{j}"], list(node.output),
                                             name=f"{p}unshift{j}"))
            replaced[index] = int8
    used = {node.input[1] for products in groups.values() for node in products.values()}
    nodes = []
    for index, node in enumerate(graph.node):
        nodes += before.get(index, [])
        nodes += replaced.get(index, [node])
    kept = [init for init in graph.initializer if init.name not in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + new_inits)
    if not any(opset.domain == "com.microsoft" for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return worst
