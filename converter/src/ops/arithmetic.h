// How ONNX two-input arithmetic (Add, Sub, Mul, Div, Max, Min and the variadic Sum, Mean) maps
// onto plan steps: the float32 Binary family or the Elementwise family (integers, float64), and
// the dtype it computes in. Used by the Elementwise family's check (which hands float32 to
// Binary) and by the expansions that write arithmetic steps (steps.h).
#pragma once

#include <string>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::ops {

enum class ArithWay { kNone, kBinary, kElementwise };
ArithWay arith_way(const std::string& op, DataType dtype, DataType* compute);
// The plan op of ONNX arithmetic op `op` (Add for Sum and Mean).
fb::BinaryOp binary_op(const std::string& op);
fb::ElementwiseOp elementwise_arith_op(const std::string& op);

}  // namespace jetplan::converter::ops
