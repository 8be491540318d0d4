#!/usr/bin/env python3
"""Writes a small image classifier as ONNX (random weights): conv-BN-relu stem, max-pool, a
residual block, global average pool, a fully connected layer and softmax; input 'image'
[1, 3, 32, 32], output 'probs' [1, 10]. Run with Debian's /usr/bin/python3 (python3-onnx)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path):
    rng = np.random.default_rng(0)

    def init(name, *shape, scale=0.2):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        init("stem.w", 16, 3, 3, 3),
        init("stem.b", 16),
        numpy_helper.from_array((1 + 0.1 * rng.standard_normal(16)).astype(np.float32), "bn.scale"),
        init("bn.bias", 16, scale=0.1),
        init("bn.mean", 16, scale=0.1),
        numpy_helper.from_array((0.5 + rng.random(16)).astype(np.float32), "bn.var"),
        init("block.w1", 16, 16, 3, 3, scale=0.1),
        init("block.w2", 16, 16, 3, 3, scale=0.1),
        init("fc.w", 10, 16),
        init("fc.b", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "stem.w", "stem.b"], ["c0"], name="stem",
                         pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c0", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                         ["b0"], name="stem_bn"),
        helper.make_node("Relu", ["b0"], ["r0"], name="stem_relu"),
        helper.make_node("MaxPool", ["r0"], ["p0"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p0", "block.w1"], ["c1"], name="block_conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="block_relu1"),
        helper.make_node("Conv", ["r1", "block.w2"], ["c2"], name="block_conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "p0"], ["a2"], name="block_add"),
        helper.make_node("Relu", ["a2"], ["r2"], name="block_relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="jetplan-quickstart")
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    onnx.save(model, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "small_cnn.onnx")
