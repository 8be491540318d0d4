// The DeformConv family: ONNX DeformConv (opset 19; 22 adds element types), 2-D: X [N, C, H, W],
// W [Cout, C / group, KH, KW], offset [N, offset_group * KH * KW * 2, OH, OW], optional B [Cout]
// and mask [N, offset_group * KH * KW, OH, OW]; dilations, group, kernel_shape, offset_group,
// pads and strides.
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_deform_conv(Graph& g, Node& node) {
  if (node.inputs.size() < 3 || node.inputs[0] < 0 || node.inputs[1] < 0 || node.inputs[2] < 0)
    fail("node ", node_label(node), ": DeformConv takes X, W and offset");
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Value& x = input(g, node, 0);
  const Value& w = input(g, node, 1);
  const Value& offset = input(g, node, 2);
  if (x.dtype != DataType::kFloat32)
    return cat("DeformConv on ", dtype_name(x.dtype), " is not supported (float32 is)");
  if (x.shape.size() != 4)
    return cat("DeformConv of X ", shape_str(x.shape), " is not supported (2-D: X [N, C, H, W])");
  const bool has_bias = has_input(node, 3), has_mask = has_input(node, 4);
  for (size_t i = 1; i < 5; ++i)
    if (has_input(node, i) && input(g, node, i).dtype != x.dtype)
      fail("node ", node_label(node), ": its inputs are of more than one dtype");
  const int64_t group = attr_int(node, "group", 1), offset_group = attr_int(node, "offset_group", 1);
  const int64_t N = x.shape[0], C = x.shape[1], cout = w.shape.size() == 4 ? w.shape[0] : -1;
  if (w.shape.size() != 4 || group < 1 || offset_group < 1 || C % group != 0 ||
      cout % group != 0 || C % offset_group != 0 || w.shape[1] != C / group)
    fail("node ", node_label(node), ": W ", shape_str(w.shape), " does not fit X ",
         shape_str(x.shape), " with group ", group, " and offset_group ", offset_group);
  OpDesc& op = node.op;
  op.kernel = {w.shape[2], w.shape[3]};
  if (has_attr(node, "kernel_shape") && attr_ints(node, "kernel_shape", {}) != op.kernel)
    fail("node ", node_label(node), ": kernel_shape does not match W ", shape_str(w.shape));
  op.stride = attr_ints(node, "strides", {1, 1});
  op.dilation = attr_ints(node, "dilations", {1, 1});
  const std::vector<int64_t> pads = attr_ints(node, "pads", {0, 0, 0, 0});
  if (op.stride.size() != 2 || op.dilation.size() != 2 || pads.size() != 4)
    fail("node ", node_label(node), ": strides and dilations need 2 values, pads 4");
  op.pad_begin = {pads[0], pads[1]};
  op.pad_end = {pads[2], pads[3]};
  Shape y = {N, cout, 0, 0};
  for (size_t d = 0; d < 2; ++d) {
    if (op.stride[d] < 1 || op.dilation[d] < 1 || pads[d] < 0 || pads[d + 2] < 0 || op.kernel[d] < 1)
      fail("node ", node_label(node), ": strides, dilations and the kernel must be positive, pads "
           "non-negative");
    const int64_t span = x.shape[2 + d] + pads[d] + pads[d + 2] - op.dilation[d] * (op.kernel[d] - 1) - 1;
    if (span < 0) fail("node ", node_label(node), ": the kernel is larger than the padded input");
    y[2 + d] = span / op.stride[d] + 1;
  }
  const int64_t taps = op.kernel[0] * op.kernel[1];
  if (offset.shape != Shape{N, offset_group * taps * 2, y[2], y[3]})
    fail("node ", node_label(node), ": offset '", offset.name, "' is ", shape_str(offset.shape),
         ", not ", shape_str(Shape{N, offset_group * taps * 2, y[2], y[3]}));
  if (has_bias && input(g, node, 3).shape != Shape{cout})
    fail("node ", node_label(node), ": B is ", shape_str(input(g, node, 3).shape), ", not [", cout, "]");
  if (has_mask && input(g, node, 4).shape != Shape{N, offset_group * taps, y[2], y[3]})
    fail("node ", node_label(node), ": mask is ", shape_str(input(g, node, 4).shape), ", not ",
         shape_str(Shape{N, offset_group * taps, y[2], y[3]}));
  op.groups = group;
  op.offset_groups = offset_group;
  op.has_bias = has_bias;
  op.has_mask = has_mask;
  // The step reads X, W, offset, then B and mask where the node has them.
  std::vector<int> inputs = {node.inputs[0], node.inputs[1], node.inputs[2]};
  if (has_bias) inputs.push_back(node.inputs[3]);
  if (has_mask) inputs.push_back(node.inputs[4]);
  node.inputs = inputs;
  return resolve_as(g, node, fb::OpFamily::DeformConv, x.dtype, y);
}

constexpr OpRow kRows[] = {
    {"DeformConv", check_deform_conv, "float32",
     "2-D; group and offset_group; optional B and mask; bilinear sampling, zero outside X",
     19},
};

StepParamsOffset serialize_deform_conv(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  const std::vector<int64_t> pads = {op.pad_begin[0], op.pad_begin[1], op.pad_end[0], op.pad_end[1]};
  return params(fb::CreateDeformConvParams(fbb, fbb.CreateVector(op.kernel), fbb.CreateVector(op.stride),
                                           fbb.CreateVector(pads), fbb.CreateVector(op.dilation),
                                           op.groups, op.offset_groups, op.has_bias, op.has_mask));
}

}  // namespace

const FamilyRules deform_conv_rules = {serialize_deform_conv, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
