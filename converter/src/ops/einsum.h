// Einsum: the equation parsed ('...' and implicit outputs resolved to letters), then one of
// three ways, each expanded at legalize:
// - one operand, a permutation: a Transpose (any dtype; check_transpose);
// - two float32 operands contracted: batched matrix products (a Gemm step between views and
//   Transposes);
// - otherwise (sums, other dtypes, diagonals): transposes, views, a broadcast product and a
//   Reduce Sum (float32 and float64 where something is multiplied or summed).
// An index repeated within one operand ("ii", "...ii", "bij,bjj") takes that operand's diagonal
// first: its repeated dims are transposed next to each other, viewed as one, and sliced with
// the stride that walks the diagonal. The node is a Transpose placeholder until expanded: its
// row and expansion are the Transpose family's (transpose.cc).
#pragma once

#include <string>

#include "converter/src/ir/graph.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

// The classes of a two-operand contraction, each in the order the plan uses.
struct EinsumPlan {
  std::string batch, m, n, k;
};
EinsumPlan plan_einsum(const std::string& a, const std::string& b, const std::string& out);
// An operand term with a repeated index ("bii", a diagonal) as the diagonal leaves it: the
// indices that occur once, in order, then each repeated one once, in order of first
// occurrence ("bi"). Terms without repeats come back as they are.
std::string einsum_diagonal_term(const std::string& term);

// Einsum's check (registry.h, CheckFn).
std::string check_einsum(Graph& g, Node& node);
// Expansion::kEinsum: the node's steps, written by w.
void expand_einsum(StepWriter& w, Node node);

}  // namespace jetplan::converter::ops
