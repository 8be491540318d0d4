#!/usr/bin/env python3
"""Prints the rows of kDefinitions (converter/src/import/onnx_definitions.cc): every definition of
an op of ONNX's default domain newer than libonnx 1.12's schemas (opset > 17) that is new or
changes the op's attributes, inputs, outputs or meaning. Definitions that only add element types
are left out (a model of such an opset reads the op as before). Needs the PyPI onnx package:
    python3 converter/tools/gen_onnx_definitions.py
"""
import onnx
import onnx.defs

LIBONNX_OPSET = 17
# Redefinitions that keep the signature: Pad 19 adds mode 'wrap', Resize 19 the coordinate mode
# 'half_pixel_symmetric', Mod 28 and ReduceLogSum(Exp) 28 spell out the results of special
# values, ScatterElements and ScatterND 18 add the reductions 'max' and 'min', OptionalGetElement
# 18 takes a tensor, GridSample 20 renames its modes (linear, cubic) and takes 1 to N spatial dims.
# (DepthToSpace 28 changes nothing jetplan reads: it is left out.)
# IsInf 20 adds float16, which jetplan reads and libonnx's opset-10 schema refuses: kept so that
# libonnx does not check it.
SAME_SIGNATURE = {("Pad", 19), ("Resize", 19), ("Mod", 28), ("ReduceLogSum", 28), ("IsInf", 20),
                  ("ReduceLogSumExp", 28), ("ScatterElements", 18),
                  ("ScatterND", 18), ("OptionalGetElement", 18), ("GridSample", 20)}
TYPE_NAMES = {1: "float", 2: "int", 3: "string", 4: "tensor", 5: "graph", 6: "floats", 7: "ints",
              8: "strings", 9: "tensors", 10: "graphs", 11: "sparse_tensor", 12: "sparse_tensors",
              13: "type_proto", 14: "type_protos"}


def signature(s):
    return ({k: int(a.type) for k, a in s.attributes.items()}, s.min_input, s.max_input,
            s.min_output, s.max_output, [i.name for i in s.inputs], [o.name for o in s.outputs])


def main():
    schemas = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == "":
            schemas.setdefault(s.name, {})[s.since_version] = s
    print(f"// onnx {onnx.__version__}, opsets up to {onnx.defs.onnx_opset_version()}")
    for op in sorted(schemas):
        versions = sorted(schemas[op])
        for i, v in enumerate(versions):
            if v <= LIBONNX_OPSET:
                continue
            s = schemas[op][v]
            prev = schemas[op][versions[i - 1]] if i > 0 else None
            if prev and signature(prev) == signature(s) and (op, v) not in SAME_SIGNATURE:
                continue
            attrs = " ".join(f"{k}:{TYPE_NAMES[int(a.type)]}" for k, a in sorted(s.attributes.items()))
            cap = lambda n: min(n, 2**31 - 1)
            added = "true" if prev is None else "false"
            print(f'    {{"{op}", {v}, {added}, "{attrs}", {s.min_input}, {cap(s.max_input)}, '
                  f'{s.min_output}, {cap(s.max_output)}}},')


if __name__ == "__main__":
    main()
