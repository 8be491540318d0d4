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
#include "converter/src/ops/window.h"

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
  const int64_t N = x.shape[0], C = x.shape[1];
  check_weight_rank(node, x.shape, w.shape);
  OpDesc& op = node.op;
  // Conv's window: groups, the kernel of W, strides, dilations and pads, the output extents.
  const Shape y = integer_conv_window(node, x.shape, w.shape, &op);
  const int64_t cout = w.shape[0], offset_group = attr_int(node, "offset_group", 1);
  if (offset_group < 1 || C % offset_group != 0)
    fail("node ", node_label(node), ": offset_group ", offset_group, " does not divide X's ", C,
         " channels");
  const int64_t taps = op.kernel[0] * op.kernel[1];
  if (offset.shape != Shape{N, offset_group * taps * 2, y[2], y[3]})
    fail("node ", node_label(node), ": offset '", offset.name, "' is ", shape_str(offset.shape),
         ", not ", shape_str(Shape{N, offset_group * taps * 2, y[2], y[3]}));
  if (has_bias && input(g, node, 3).shape != Shape{cout})
    fail("node ", node_label(node), ": B is ", shape_str(input(g, node, 3).shape), ", not [", cout, "]");
  if (has_mask && input(g, node, 4).shape != Shape{N, offset_group * taps, y[2], y[3]})
    fail("node ", node_label(node), ": mask is ", shape_str(input(g, node, 4).shape), ", not ",
         shape_str(Shape{N, offset_group * taps, y[2], y[3]}));
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
  return params(fb::CreateDeformConvParams(
      fbb, ints(fbb, op.kernel), ints(fbb, op.stride), ints(fbb, op.dilation),
      ints(fbb, op.pad_begin), ints(fbb, op.pad_end), op.groups, op.offset_groups, op.has_bias,
      op.has_mask));
}

}  // namespace

const FamilyRules deform_conv_rules = {serialize_deform_conv, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
