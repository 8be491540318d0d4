"""Graph: builds a test model op by op, each ONNX node with its reference value computed at once
(model_reference.py), and saves it with its inputs, expected outputs and manifest (case.json,
which run_e2e.py reads)."""

import json
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from model_reference import (ACTIVATIONS, BINARY, bn_ref, coerced_2d, conv_ref, log_softmax_ref,
                             pool_ref, resolve_pads, softmax_ref)

# fp32 kernels against a float64 reference: a few ulps per accumulation step.
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5

# --------------------------------------------------------------------------------------------
# Graph builder: each op adds an ONNX node and computes its reference value at once
# --------------------------------------------------------------------------------------------

class Graph:
    def __init__(self, case, seed, opset=13):
        self.case = case
        self.rng = np.random.default_rng(seed)
        self.opset = opset
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.vals = {}
        self.feeds = []  # (name, float32 array) in input order
        self.count = {}
        self.convert_args = []
        self.rtol, self.atol = DEFAULT_RTOL, DEFAULT_ATOL
        self.symbolic_batch = None  # name of a symbolic leading dim of inputs and outputs

    def _name(self, prefix):
        self.count[prefix] = self.count.get(prefix, 0) + 1
        return f"{prefix}{self.count[prefix]}"

    # values: float32 data, kept as float64 for the reference
    def input(self, name, shape, data=None, dims=None):
        if data is None:
            data = self.rng.standard_normal(shape)
        data = np.asarray(data, dtype=np.float32)
        assert data.shape == tuple(shape)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                         dims or list(shape)))
        self.vals[name] = data.astype(np.float64)
        self.feeds.append((name, data))
        return name

    def const(self, arr, prefix="c"):
        arr = np.asarray(arr)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        name = self._name(prefix)
        self.inits.append(numpy_helper.from_array(arr, name))
        self.vals[name] = arr.astype(np.float64) if arr.dtype == np.float32 else arr
        return name

    def randn(self, shape, scale=1.0, prefix="w"):
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), prefix)

    def uniform(self, shape, lo, hi, prefix="w"):
        return self.const(self.rng.uniform(lo, hi, shape).astype(np.float32), prefix)

    def node(self, op, inputs, ref, name=None, outputs=None, **attrs):
        """Adds a node; `ref` is its reference output value (a tuple for several outputs)."""
        name = name or self._name(op.lower())
        values = ref if isinstance(ref, tuple) else (ref,)
        outputs = outputs or ([f"{name}_out"] if len(values) == 1 else
                              [f"{name}_out{i}" for i in range(len(values))])
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, **attrs))
        for o, v in zip(outputs, values):
            self.vals[o] = v
        return outputs[0] if len(outputs) == 1 else outputs

    def output(self, tensor, name=None):
        """Marks `tensor` as a graph output, through an Identity when it needs another name."""
        if name is not None and name != tensor:
            tensor = self.node("Identity", [tensor], self.vals[tensor], outputs=[name])
        self.outputs.append(tensor)

    # ---- ops -------------------------------------------------------------------------------
    def conv(self, x, cout, kernel, strides=None, pads=None, dilations=None, group=1,
             bias=True, auto_pad=None, name=None):
        xv = self.vals[x]
        nsp = xv.ndim - 2
        kernel = [kernel] * nsp if isinstance(kernel, int) else list(kernel)
        strides = strides or [1] * nsp
        dilations = dilations or [1] * nsp
        cin = xv.shape[1]
        fan_in = cin // group * math.prod(kernel)
        w = self.randn([cout, cin // group] + kernel, scale=math.sqrt(2.0 / fan_in))
        b = self.randn([cout], scale=0.1, prefix="b") if bias else None
        rp = resolve_pads(xv.shape[2:], kernel, strides, dilations, pads, auto_pad)
        y = conv_ref(xv, self.vals[w], self.vals[b] if bias else None, strides, rp, dilations,
                     group)
        attrs = dict(kernel_shape=kernel, strides=strides, dilations=dilations, group=group)
        if auto_pad:
            attrs["auto_pad"] = auto_pad
        elif pads is not None:
            attrs["pads"] = pads
        return self.node("Conv", [x, w] + ([b] if bias else []), y, name=name, **attrs)

    def bn(self, x, eps=1e-5, name=None):
        c = self.vals[x].shape[1]
        s = self.uniform([c], 0.5, 1.5, "bn_scale")
        b = self.randn([c], 0.2, "bn_bias")
        m = self.randn([c], 0.2, "bn_mean")
        v = self.uniform([c], 0.5, 1.5, "bn_var")
        y = bn_ref(self.vals[x], *(self.vals[t] for t in (s, b, m, v)), eps)
        return self.node("BatchNormalization", [x, s, b, m, v], y, name=name, epsilon=eps)

    def act(self, op, x, name=None, **attrs):
        return self.node(op, [x], ACTIVATIONS[op](self.vals[x], attrs), name=name, **attrs)

    def relu(self, x, name=None):
        return self.act("Relu", x, name=name)

    def binary(self, op, a, b, name=None):
        return self.node(op, [a, b], BINARY[op](self.vals[a], self.vals[b]), name=name)

    def maxpool(self, x, kernel, strides=None, pads=None, dilations=None, name=None):
        nsp = self.vals[x].ndim - 2
        strides = strides or [1] * nsp
        pads = pads or [0] * (2 * nsp)
        y = pool_ref(self.vals[x], "max", kernel, strides, pads, dilations)
        attrs = dict(kernel_shape=kernel, strides=strides, pads=pads)
        if dilations:
            attrs["dilations"] = dilations
        return self.node("MaxPool", [x], y, name=name, **attrs)

    def avgpool(self, x, kernel, strides=None, pads=None, count_include_pad=0, name=None):
        nsp = self.vals[x].ndim - 2
        strides = strides or [1] * nsp
        pads = pads or [0] * (2 * nsp)
        y = pool_ref(self.vals[x], "avg", kernel, strides, pads, None, count_include_pad)
        return self.node("AveragePool", [x], y, name=name, kernel_shape=kernel,
                         strides=strides, pads=pads, count_include_pad=count_include_pad)

    def global_pool(self, op, x, name=None):
        xv = self.vals[x]
        axes = tuple(range(2, xv.ndim))
        y = xv.mean(axis=axes, keepdims=True) if op == "GlobalAveragePool" else \
            xv.max(axis=axes, keepdims=True)
        return self.node(op, [x], y, name=name)

    def flatten(self, x, axis=1, name=None):
        xv = self.vals[x]
        y = xv.reshape(int(np.prod(xv.shape[:axis])), -1)
        return self.node("Flatten", [x], y, name=name, axis=axis)

    def gemm(self, a, b, c=None, trans_a=0, trans_b=0, alpha=1.0, beta=1.0, name=None):
        av, bv = self.vals[a], self.vals[b]
        av = av.T if trans_a else av
        bv = bv.T if trans_b else bv
        y = alpha * (av @ bv)
        if c is not None:
            y = y + beta * self.vals[c]
        attrs = dict(transA=trans_a, transB=trans_b, alpha=alpha, beta=beta)
        return self.node("Gemm", [a, b] + ([c] if c is not None else []), y, name=name, **attrs)

    def dense(self, x, n, name=None):
        k = self.vals[x].shape[1]
        w = self.randn([n, k], math.sqrt(1.0 / k))
        b = self.randn([n], 0.1, "b")
        return self.gemm(x, w, b, trans_b=1, name=name)

    def matmul(self, a, b, name=None):
        return self.node("MatMul", [a, b], np.matmul(self.vals[a], self.vals[b]), name=name)

    def softmax(self, x, axis=None, log=False, name=None):
        xv = self.vals[x]
        op = "LogSoftmax" if log else "Softmax"
        fn = log_softmax_ref if log else softmax_ref
        if self.opset >= 13:
            ax = -1 if axis is None else axis
            y = fn(xv, ax)
        else:
            ax = 1 if axis is None else axis
            y = coerced_2d(fn, xv, ax)
        attrs = {} if axis is None else dict(axis=axis)
        return self.node(op, [x], y, name=name, **attrs)

    def concat(self, xs, axis, name=None):
        return self.node("Concat", xs, np.concatenate([self.vals[x] for x in xs], axis=axis),
                         name=name, axis=axis)

    def reshape(self, x, shape_tensor, name=None):
        xv = self.vals[x]
        target = [int(d) for d in self.vals[shape_tensor]]
        target = [xv.shape[i] if d == 0 else d for i, d in enumerate(target)]
        return self.node("Reshape", [x, shape_tensor], xv.reshape(target), name=name)

    # ---- save ------------------------------------------------------------------------------
    def save(self, out_dir):
        d = os.path.join(out_dir, self.case)
        os.makedirs(d, exist_ok=True)
        graph = helper.make_graph(self.nodes, self.case, self.inputs,
                                  [self.output_info(o) for o in self.outputs], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="jetplan-e2e")
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        check_inferred_shapes(model, self.vals)
        onnx.save(model, os.path.join(d, "model.onnx"))
        manifest = dict(case=self.case, opset=self.opset, convert_args=self.convert_args,
                        rtol=self.rtol, atol=self.atol, inputs=[], outputs=[])
        for i, (name, data) in enumerate(self.feeds):
            f = f"input{i}.npy"
            # np.ascontiguousarray would turn a scalar into shape (1,).
            np.save(os.path.join(d, f), np.array(data, dtype="<f4", order="C"))
            manifest["inputs"].append(dict(name=name, file=f, shape=list(data.shape)))
        for j, name in enumerate(self.outputs):
            f = f"expected{j}.npy"
            np.save(os.path.join(d, f), self.vals[name].astype("<f4"))
            manifest["outputs"].append(dict(name=name, file=f,
                                            shape=list(self.vals[name].shape)))
        with open(os.path.join(d, "case.json"), "w") as fh:
            json.dump(manifest, fh, indent=1)
        return d

    def output_info(self, name):
        shape = list(np.shape(self.vals[name]))
        if self.symbolic_batch:
            shape[0] = self.symbolic_batch
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def check_inferred_shapes(model, vals):
    """onnx's shape inference must agree with the shapes the reference computed: an independent
    check of the output-size arithmetic (pads, auto_pad, strides, broadcasting)."""
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        if vi.name not in vals or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            continue
        shape = tuple(d.dim_value for d in dims)
        if shape != tuple(np.shape(vals[vi.name])):
            raise AssertionError(f"{model.graph.name}: {vi.name}: onnx infers {shape}, reference "
                                 f"has {np.shape(vals[vi.name])}")
