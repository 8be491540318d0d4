// Internal to the tensor group: what its checks (support_group_tensor.cc) and its expansion at
// legalize (support_group_tensor_expand.cc) share.
#pragma once

#include <string>

#include "converter/src/graph.h"

namespace jetplan::converter::tensor {

// How two-input arithmetic of a dtype runs: the float32 Binary family or the Elementwise family
// (integers, float64), in `compute` dtype.
enum class ArithWay { kNone, kBinary, kElementwise };
ArithWay arith_way(const std::string& op, DataType dtype, DataType* compute);
// The plan op of ONNX arithmetic op `op` (Add for Sum and Mean).
fb::BinaryOp binary_op(const std::string& op);
fb::ElementwiseOp elementwise_arith_op(const std::string& op);

// The classes of a two-operand contraction, each in the order the plan uses.
struct EinsumPlan {
  std::string batch, m, n, k;
};
EinsumPlan plan_einsum(const std::string& a, const std::string& b, const std::string& out);

}  // namespace jetplan::converter::tensor
