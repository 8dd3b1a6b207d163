"""The matrix products with a constant weight in an ONNX graph: what the int8 and 4-bit builds
rewrite (:mod:`.smoothquant`, :mod:`.nbits`)."""

from __future__ import annotations

from typing import Any

__all__ = ["weight_products"]


def weight_products(model: Any) -> dict[int, Any]:
    """The ``MatMul`` nodes of the ``onnx.ModelProto`` ``model``, by position, whose second
    input is a 2-D float32 initializer used by that node alone.

    >>> import numpy as np
    >>> from onnx import TensorProto, helper, numpy_helper
    >>> w = numpy_helper.from_array(np.ones((4, 2), np.float32), "w")
    >>> graph = helper.make_graph(
    ...     [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r", "w"], ["y"]),
    ...      helper.make_node("MatMul", ["r", "r2"], ["z"])], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [w])
    >>> list(weight_products(helper.make_model(graph)))
    [1]
    """
    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    return {index: node for index, node in enumerate(graph.node)
            if node.op_type == "MatMul" and node.input[1] in initializers
            and len(initializers[node.input[1]].dims) == 2
            and initializers[node.input[1]].data_type == 1 and uses[node.input[1]] == 1}
