// What the op checks (converter/src/ops/<family>.cc) share: reading inputs, the dtype reasons
// they give, setting the resolved outputs. Each check function returns "" or a reason (see
// registry.h, CheckFn); ConvertError for a model that is inconsistent.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::ops {

bool has_input(const Node& node, size_t i);
const Value& input(const Graph& g, const Node& node, size_t i);
// "" when each listed (present) input is float32, else the reason naming the first that is not.
std::string float_inputs(const Graph& g, const Node& node, std::initializer_list<size_t> which);
// Input 0 of a check that takes any plan dtype, copied (the check may add values to the graph).
struct PlanInput {
  DataType dtype = DataType::kUndefined;
  Shape shape;
};
// "" with *x set when input 0 is of a dtype a plan holds, else the reason (plan_dtype_reason).
std::string plan_input(const Graph& g, const Node& node, PlanInput* x);
// "" when input i is of a dtype a plan holds, else the reason naming it.
std::string plan_dtype_input(const Graph& g, const Node& node, size_t i);
// The same for a value: "" or "input '<name>' is <dtype>, which a plan cannot hold (...)".
std::string plan_dtype_reason(const Value& v);
// "" when every present input has a plan dtype and all share one, else the reason.
std::string same_dtype_reason(const Graph& g, const Node& node);
// "<role> '<name>' is <dtype> (jetplan needs float32)".
std::string not_float(const Value& v, const char* role);
// "its <what> input is computed at run time (jetplan needs it constant)".
std::string run_time_reason(const char* what);
// "" when no output past the first is read by a node or is a graph output.
std::string extra_outputs_unused(const Graph& g, const Node& node, const char* what);
// True when a live node reads value `id` or it is a graph output (false for -1).
bool is_used(const Graph& g, int id);
// Marks node.op resolved and sets output 0 to float32 `shape`; ConvertError if the model
// declared another shape for it.
void set_output(Graph& g, Node& node, const Shape& shape);
// The same for output `index` of any dtype (dims of 0 make an empty tensor; negative ones are
// refused).
void set_output_typed(Graph& g, Node& node, size_t index, DataType dtype, const Shape& shape);
// A check's last line for a node it accepts: a step of `family` with float32 output 0 of `shape`
// (set_output). Returns "".
std::string resolve_as(Graph& g, Node& node, fb::OpFamily family, const Shape& shape);
// The same with output 0 of `dtype` (set_output_typed).
std::string resolve_as(Graph& g, Node& node, fb::OpFamily family, DataType dtype,
                       const Shape& shape);
// A node that moves nothing (identity Transpose, full Slice, Cast to the same type, ...):
// consumers read its input (remove_identities), or a Copy where both must stay. Returns "".
std::string resolve_as_copy(Graph& g, Node& node, DataType dtype, const Shape& shape);
// A constant scalar input (one element) as a float; false when absent or not constant.
bool constant_scalar(const Graph& g, const Node& node, size_t i, float* out);
// Sorted, distinct, non-negative axes; ConvertError naming the node otherwise.
std::vector<int32_t> resolve_axes(const Node& node, const std::vector<int64_t>& axes, int64_t rank);

// Gather's and GatherElements' inputs: "" when the data has a plan dtype and the indices are
// int32 or int64, else the reason.
std::string gather_inputs_reason(const Value& data, const Value& indices);
// Constant indices are checked now (out of range, the kernel would write zeros): ConvertError
// for one outside [-dim, dim).
void check_constant_indices(const Node& node, const Value& indices, int64_t dim);

// Window attributes (kernel, strides, dilations, pads, LRN's size) are bounded so that no size
// arithmetic overflows on a hostile file.
constexpr int64_t kMaxWindow = int64_t{1} << 31;
// Sizes from the model are bounded before any product is formed (plans hold no larger dims).
constexpr int64_t kMaxDim = int64_t{1} << 40;

// The attribute a decomposition sets on the Softmax nodes it writes for
// SoftmaxParams.masked_rows_zero (ONNX's Attention: a fully masked query row gives 0). No ONNX
// operator has an attribute of this name.
constexpr const char* kSoftmaxMaskedRowsZero = "jetplan.masked_rows_zero";

}  // namespace jetplan::converter::ops
