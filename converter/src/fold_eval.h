// Internal to the constant folder: the evaluator interface shared by fold_constants.cc (data
// movement and shape ops) and fold_arith.cc (numeric ops).
#pragma once

#include <vector>

#include "converter/src/graph.h"

namespace jetplan::converter::fold {

struct Args {
  const Graph& g;
  const Node& node;
  std::vector<const Value*> in;  // one per node input; nullptr for an omitted optional input
};

// Fills one TensorData per node output (fewer when trailing outputs cannot be produced) and
// returns true; returns false to leave the node to run time (a case this folder does not
// evaluate). ConvertError when the model is inconsistent.
using Evaluator = bool (*)(const Args& args, std::vector<TensorData>* out);

// Folding must not turn a small model into a huge one (Expand, ConstantOfShape, Range).
constexpr uint64_t kMaxFoldBytes = uint64_t{256} << 20;
bool fits(const Shape& shape, DataType dtype);

// For each element of a tensor of shape `out`, the flat index of the element of a tensor of
// shape `in` that numpy broadcasting reads.
std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out);

bool eval_cast(const Args& a, std::vector<TensorData>* out);
bool eval_range(const Args& a, std::vector<TensorData>* out);
bool eval_binary(const Args& a, std::vector<TensorData>* out);  // Add Sub Mul Div Pow Max Min
bool eval_unary(const Args& a, std::vector<TensorData>* out);   // Neg Abs Sqrt Exp Relu ...

}  // namespace jetplan::converter::fold
