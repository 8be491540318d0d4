// Attributes of the tensor op families (see op_desc_groups.h): what support_group_tensor.cc
// resolves an ONNX node to, serialize_group_tensor.cc writes and expand_tensor rewrites.
#pragma once

#include <cstdint>
#include <vector>

#include "jetplan/plan_generated.h"

namespace jetplan::converter {

// Nodes that need more than one step are resolved with `expand` set; expand_tensor (at legalize)
// replaces them by their steps. kPromote keeps the family of its compute step (Unary,
// Elementwise or Binary, whose fused activation it keeps); the others carry the family of their
// main step, never Binary, Gemm or Activation, so that no fusion touches them.
enum class TensorExpand : uint8_t {
  kNone = 0,    // one step of OpDesc::family, as resolved
  kPromote,     // Unary/Elementwise/Binary computed in `compute` dtype, with Cast steps around
  kSplit,       // Split: one Slice per output (`split` holds the extents along `axis`)
  kSpaceDepth,  // DepthToSpace/SpaceToDepth: Copy to the 6-D `view`, Transpose `perm`, Copy
  kVariadic,    // Sum/Mean/Max/Min: a chain of two-input steps over the inputs (Mean: / N)
  kEinsum,      // Einsum: Transpose + Gemm + Transpose (views between), or with einsum_reduce
                // Transposes + a broadcast Mul + a Reduce Sum (views between)
};

struct TensorOpDesc {
  TensorExpand expand = TensorExpand::kNone;
  std::vector<int32_t> perm;  // Transpose; kSpaceDepth's transpose of the 6-D view
  // Slice: resolved starts (in range) and non-zero steps, one per input dim.
  std::vector<int64_t> starts, steps;
  int32_t axis = 0;  // Gather, GatherElements, Split (non-negative)
  // Pad: begin pads per dim (end pads are implied by the output shape), constant value.
  fb::PadMode pad_mode = fb::PadMode::Constant;
  std::vector<int64_t> pads_begin;
  double pad_value = 0.0;
  bool tile = false;  // Broadcast: Tile (true) or Expand
  fb::UnaryOp unary = fb::UnaryOp::Abs;
  fb::ElementwiseOp elementwise = fb::ElementwiseOp::Add;
  // kPromote and kVariadic: the dtype the arithmetic runs in (an ONNX DataType number, see
  // graph.h), when the kernels lack the tensors' own.
  int32_t compute_dtype = 0;
  std::vector<int64_t> split;  // kSplit: extent of each output along axis
  std::vector<int64_t> view;   // kSpaceDepth: the 6-D shape the input is viewed as
  // kEinsum: the letters of operand A, operand B and the output ("bhid", "bhjd", "bhij").
  std::vector<char> einsum_a, einsum_b, einsum_out;  // einsum_b empty: one operand
  // An operand's term as the equation gives it when an index repeats in it (a diagonal, taken
  // first; einsum_a/einsum_b are then the terms of the diagonal); empty otherwise.
  std::vector<char> einsum_a_in, einsum_b_in;
  bool einsum_reduce = false;
};

}  // namespace jetplan::converter
