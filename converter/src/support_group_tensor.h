// Internal to the tensor group: what its checks (support_group_tensor.cc) and its expansion at
// legalize (support_group_tensor_expand.cc) share.
#pragma once

#include <string>

#include "converter/src/ir/graph.h"

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
// An operand term with a repeated index ("bii", a diagonal) as the diagonal leaves it: the
// indices that occur once, in order, then each repeated one once, in order of first
// occurrence ("bi"). Terms without repeats come back as they are.
std::string einsum_diagonal_term(const std::string& term);

// Einsum's check (support_group_tensor_einsum.cc), and the two checks it hands nodes to.
std::string check_einsum(Graph& g, Node& node);
std::string check_transpose_of(Graph& g, Node& node);
std::string same_dtype_of(const Graph& g, const Node& node);

}  // namespace jetplan::converter::tensor
