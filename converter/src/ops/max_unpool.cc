// The MaxUnpool family: ONNX MaxUnpool (opsets 9, 11 and 22: X, I and an optional output_shape;
// kernel_shape, strides and pads), which puts each value of X at the flat position of Y its index
// in I names (as MaxPool's Indices output gives them) and zeros everywhere else. Y's shape is the
// default, (in - 1) * stride - pads + kernel per spatial dim, which the indices address; a
// constant output_shape input may make it larger, each dim padded with zeros at its end.
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_max_unpool(Graph& g, Node& node) {
  if (node.inputs.size() < 2 || node.inputs[0] < 0 || node.inputs[1] < 0)
    fail("node ", node_label(node), ": MaxUnpool takes X and I");
  const Value& x = input(g, node, 0);
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat16 &&
      x.dtype != DataType::kFloat64)
    return cat("MaxUnpool on ", dtype_name(x.dtype),
               " is not supported (float32, float16 and float64 are)");
  const Value& indices = input(g, node, 1);
  if (indices.dtype != DataType::kInt64)
    fail("node ", node_label(node), ": its indices '", indices.name, "' are ",
         dtype_name(indices.dtype), " (MaxUnpool takes int64)");
  if (indices.shape != x.shape)
    fail("node ", node_label(node), ": its indices '", indices.name, "' are ",
         shape_str(indices.shape), ", not X's ", shape_str(x.shape));
  const size_t rank = x.shape.size();
  if (rank < 3)
    fail("node ", node_label(node), ": X is ", shape_str(x.shape),
         " (MaxUnpool takes N, C and at least one spatial dim)");
  const size_t spatial = rank - 2;
  if (!has_attr(node, "kernel_shape"))
    fail("node ", node_label(node), ": the kernel_shape attribute is missing");
  const std::vector<int64_t> kernel = attr_ints(node, "kernel_shape", {});
  const std::vector<int64_t> strides = attr_ints(node, "strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = attr_ints(node, "pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial)
    fail("node ", node_label(node), ": kernel_shape, strides and pads must have ", spatial, ", ",
         spatial, " and ", 2 * spatial, " values for X ", shape_str(x.shape));
  // The default output shape, which the indices address (as MaxPool's Indices give them).
  Shape inferred = {x.shape[0], x.shape[1]};
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || pads[i] < 0 || pads[i + spatial] < 0)
      fail("node ", node_label(node), ": kernel_shape and strides must be positive and pads "
           "non-negative");
    const int64_t d = (x.shape[i + 2] - 1) * strides[i] - (pads[i] + pads[i + spatial]) + kernel[i];
    if (d < 1) fail("node ", node_label(node), ": spatial dim ", i, " of the output would be ", d);
    inferred.push_back(d);
  }
  Shape out = inferred;
  node.op.index_shape.clear();
  if (has_input(node, 2)) {
    // A larger output_shape pads the end of each dim with zeros (ONNX's reference).
    const Value& shape = input(g, node, 2);
    if (!shape.is_constant) return run_time_reason("output_shape");
    const std::vector<int64_t> dims = read_ints(shape);
    bool covers = dims.size() == rank;
    for (size_t d = 0; covers && d < rank; ++d) covers = dims[d] >= inferred[d];
    if (!covers)
      fail("node ", node_label(node), ": its output_shape '", shape.name, "' ",
           shape_str(Shape(dims.begin(), dims.end())), " does not hold the default output ",
           shape_str(inferred), " (it may only be larger)");
    out.assign(dims.begin(), dims.end());
    if (out != inferred) node.op.index_shape.assign(inferred.begin(), inferred.end());
  }
  const DataType dtype = x.dtype;
  node.inputs.resize(2);  // the step reads X and I; the output shape is Y's
  return resolve_as(g, node, fb::OpFamily::MaxUnpool, dtype, out);
}

constexpr OpRow kRows[] = {
    {"MaxUnpool", check_max_unpool, "float32, float16, float64 (indices int64)",
     "output_shape a constant, at least the default shape, or left out; "
     "the last of duplicate indices wins; an index outside Y writes nothing"},
};

StepParamsOffset serialize_max_unpool(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateMaxUnpoolParams(
      fbb, s.op.index_shape.empty() ? flatbuffers::Offset<flatbuffers::Vector<int64_t>>()
                                    : fbb.CreateVector(s.op.index_shape)));
}

}  // namespace

const FamilyRules max_unpool_rules = {serialize_max_unpool, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
