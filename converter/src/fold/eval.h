// Internal to the constant folder: the evaluator interface shared by fold_constants.cc (the rule
// table), fold_moves.cc (data movement and shape ops) and fold_arith.cc (numeric ops), and the
// attribute rules of the tensor ops (fold_specs.cc), which the folder and the support check
// (converter/src/ops/) share so that a folded node and a step compute the same thing.
// Tensor ops fold through the CPU reference kernels (kernels/<family>.h, kernels/cpu/), the very
// code the runtime runs.
#pragma once

#include <string>
#include <vector>

#include "converter/src/ir/graph.h"
#include "kernels/kernels.h"

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

bool eval_cast(const Args& a, std::vector<TensorData>* out);      // Cast CastLike
bool eval_range(const Args& a, std::vector<TensorData>* out);
bool eval_binary(const Args& a, std::vector<TensorData>* out);    // Add Sub Mul Div Pow Max Min
bool eval_variadic(const Args& a, std::vector<TensorData>* out);  // Sum Mean
bool eval_unary(const Args& a, std::vector<TensorData>* out);     // Neg Abs Sqrt Exp Sin Not ...
bool eval_elementwise(const Args& a, std::vector<TensorData>* out);  // Equal Less And Mod ...
bool eval_where(const Args& a, std::vector<TensorData>* out);
bool eval_cum_sum(const Args& a, std::vector<TensorData>* out);
bool eval_reduce(const Args& a, std::vector<TensorData>* out);    // the Reduce* ops

// ---- Evaluators of the data movement and shape ops (fold_moves.cc) ----
bool eval_concat(const Args& a, std::vector<TensorData>* out);
bool eval_constant(const Args& a, std::vector<TensorData>* out);
bool eval_constant_of_shape(const Args& a, std::vector<TensorData>* out);
bool eval_expand(const Args& a, std::vector<TensorData>* out);
bool eval_gather(const Args& a, std::vector<TensorData>* out);
bool eval_gather_elements(const Args& a, std::vector<TensorData>* out);
bool eval_scatter(const Args& a, std::vector<TensorData>* out);
bool eval_window(const Args& a, std::vector<TensorData>* out);
bool eval_mel_weight_matrix(const Args& a, std::vector<TensorData>* out);
bool eval_identity(const Args& a, std::vector<TensorData>* out);
bool eval_pad(const Args& a, std::vector<TensorData>* out);
bool eval_reshape_like(const Args& a, std::vector<TensorData>* out);
bool eval_shape(const Args& a, std::vector<TensorData>* out);
bool eval_size(const Args& a, std::vector<TensorData>* out);
bool eval_slice(const Args& a, std::vector<TensorData>* out);
bool eval_space_depth(const Args& a, std::vector<TensorData>* out);
bool eval_split(const Args& a, std::vector<TensorData>* out);
bool eval_tile(const Args& a, std::vector<TensorData>* out);
bool eval_transpose(const Args& a, std::vector<TensorData>* out);

// ---- Kernel plumbing (fold_arith.cc) ----

// The kernels' dtype of a plan dtype; false for the others (complex, string, ...).
bool kernel_dtype(DataType dtype, kernels::DType* out);
// The elements of `data` converted to `to` with the Cast kernel's rules (both plan dtypes).
TensorData cast_data(const TensorData& data, DataType to);
// The elements of `x` viewed as shape `view` (same count), transposed by `perm` (rank <= 8).
TensorData transpose_data(const TensorData& x, const Shape& view, const std::vector<int32_t>& perm);
// Numbers of any numeric, float16 or bfloat16 tensor (read_doubles takes neither).
std::vector<double> numbers(DataType dtype, const std::vector<uint8_t>& bytes);

// ---- Rules of the tensor ops (fold_specs.cc unless noted). Each throws ConvertError
// naming the node where the model is inconsistent; those that return bool return false, with
// *why, where jetplan needs a constant that the model computes at run time. ----

// Transpose: the perm attribute (reversed dims when absent), checked to be a permutation.
std::vector<int32_t> transpose_perm(const Node& node, int64_t rank);

// Slice of x: per dim, the first element, the step and the output extent (which may be 0),
// from the attributes (opset < 10) or the constant inputs, clamped as ONNX specifies.
struct SliceSpec {
  std::vector<int64_t> starts, steps;
  Shape out;
};
bool slice_spec(const Graph& g, const Node& node, const Shape& x, SliceSpec* spec,
                std::string* why);

// Split of x: the axis and each output's extent along it (split attribute before opset 13,
// constant input since, num_outputs at opset 18, else equal parts).
struct SplitSpec {
  int64_t axis = 0;
  std::vector<int64_t> sizes;
};
bool split_spec(const Graph& g, const Node& node, const Shape& x, SplitSpec* spec,
                std::string* why);
// Split as what it is, consecutive Slices of x along the axis: one SliceSpec per output.
std::vector<SliceSpec> split_slices(const Shape& x, const SplitSpec& split);

// Pad of x: mode, begin pads per dim, the output shape and the constant (opset 2 attributes,
// opset 11 inputs pads/constant_value, opset 18 axes). The value must be representable in
// `dtype` (integers exactly).
struct PadSpec {
  fb::PadMode mode = fb::PadMode::Constant;
  std::vector<int64_t> begin;
  Shape out;
  double value = 0.0;
};
bool pad_spec(const Graph& g, const Node& node, const Shape& x, DataType dtype, PadSpec* spec,
              std::string* why);
// Pad's constant as one element of `dtype`, as the runtime converts PadParams.value; false when
// it does not fit (a fraction or out of range for an integer type).
bool pad_value_bytes(double value, DataType dtype, unsigned char out[8]);

// Tile's repeats (constant, one per dim, each >= 1 or the output would be empty) and output.
bool tile_shape(const Graph& g, const Node& node, const Shape& x, Shape* out, std::string* why);

// DepthToSpace (DCR or CRD) and SpaceToDepth of a 4-D x: the 6-D view of x, the transpose of
// that view, and the output shape.
struct SpaceDepthSpec {
  Shape view;
  std::vector<int32_t> perm;
  Shape out;
};
SpaceDepthSpec space_depth_spec(const Node& node, const Shape& x);

// The Reduce ops of x: the op (fb::ReduceOp by op type), the dims reduced (sorted; every dim when
// the axes are none), the shape with them kept as 1 and the output's (keepdims), or an
// Identity (noop_with_empty_axes with no axes). The axes are an attribute, or an input from
// opset 13 (ReduceSum) or 18 (the others); false with *why where that input is computed at run
// time.
struct ReduceSpec {
  fb::ReduceOp op = fb::ReduceOp::Sum;
  std::vector<int32_t> axes;
  Shape kept, out;
  bool identity = false;
};
bool reduce_spec(const Graph& g, const Node& node, const Shape& x, ReduceSpec* spec,
                 std::string* why);

// The dtype a Unary or Elementwise op of `dtype` tensors computes in, as the plan lowers it:
// the tensors' own where the kernel takes it, else float32 for float16 and int32 for int8 and
// uint8 (Cast steps around; exact for these ops); kUndefined where the kernels have no way.
// Float arithmetic (Add, Sub, Mul, Div, Max, Min) is the Binary family's, not covered here.
DataType unary_compute_dtype(kernels::UnaryOp op, DataType dtype);
DataType elementwise_compute_dtype(kernels::ElementwiseOp op, DataType dtype);

// The Unary op of a node (fold_arith.cc): false for op types that are not one (IsInf with both
// detect flags off is no op either).
bool unary_op_of(const Node& node, kernels::UnaryOp* op);
// The Elementwise op of a comparison, logic op or Mod (fold_arith.cc); false for others.
bool elementwise_op_of(const Node& node, kernels::ElementwiseOp* op);

}  // namespace jetplan::converter::fold
