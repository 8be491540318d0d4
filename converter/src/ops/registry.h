// The converter's one table of op families, indexed by fb::OpFamily and made from
// kernels/op_families.def: for each family, the ONNX ops it resolves (check function and
// SUPPORTED_OPS.md row), the expansion of its multi-step nodes and the serializer of its params
// table. Each family's rules live in converter/src/ops/<file>.cc (`file` of the .def row) as
// `const FamilyRules <file>_rules`; a family missing there fails to link, one missing here fails
// the static_asserts of registry.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "converter/src/ir/graph.h"
#include "converter/src/ops/check.h"

namespace jetplan::converter {

struct DraftStep;  // lower/lower.h

namespace ops {

// One ONNX op type (default domain) that a family's check resolves, with its SUPPORTED_OPS.md
// row (jetplan-convert --list-ops). Static strings.
struct OpRow {
  const char* op_type;
  CheckFn check;
  const char* dtypes;  // the element types the op's steps take
  const char* notes;   // the restrictions its check enforces, one line
  // The newest of the op's definitions past opset 17 (import/onnx_definitions.h) that the check
  // reads, by its since_version; 0: none of them. check_support refuses a node whose model's
  // opset means a newer definition than this, before any check or fold.
  int reads_opset = 0;
  // Set (and `check` null) for an op that check_support replaces by other ops' nodes. With
  // `check` set too, a decomposition that appends nothing leaves the node to `check` (an op
  // rewritten only in some forms).
  DecomposeFn decompose = nullptr;
};

// OpRow::dtypes of an op that takes every dtype a plan holds.
constexpr const char* kAnyPlanDtype = "any plan dtype";

// A family's rows: a static array, or none (families no ONNX op resolves to directly).
struct OpRows {
  const OpRow* begin = nullptr;
  size_t count = 0;
};
template <size_t N>
constexpr OpRows rows_of(const OpRow (&rows)[N]) {
  return {rows, N};
}

using StepParamsOffset = std::pair<fb::StepParams, flatbuffers::Offset<void>>;
// Writes the params table of one step of the family.
using SerializeFn = StepParamsOffset (*)(flatbuffers::FlatBufferBuilder& fbb,
                                         const DraftStep& step);
// At legalize: replaces a resolved node that needs several steps by those steps (moved into
// *out, the node first where it stays one of them) and returns true; false, changing nothing,
// for a node of one step.
using ExpandFn = bool (*)(Graph& g, Node& node, std::vector<Node>* out);

// How gpu_lower (lower/gpu_lower.h) lays out a family's steps in GPU plans: which take NHWC
// activations (and how), or NCHW only (their NHWC inputs are transposed back first).
enum class NhwcRule : uint8_t {
  kNchwOnly,
  kConv,          // Conv of 1 to 3 spatial dims: channels-last input, residual and output,
                  // weights as [Cout, *kernel, Cin/g]
  kPerPixel,      // Pool, BatchNorm: a 4-D activation in and one output, NHWC
  kFollowsInput,  // Activation: NHWC when its input is
  kBinary,        // Binary: where its operands allow (gpu_lower's binary_nhwc)
  kPointwise,     // Pointwise: where its operands allow
  kConcat,        // Concat of 4-D activations on channels
  kCopy,          // Copy of [N, 1, 1, C] NHWC: the bytes of [N, C, 1, 1] NCHW
  kResize,        // Resize of an NHWC activation that keeps N and C (gpu_lower's resize_nhwc)
  kUpsample,      // ConvTranspose in the upsampling form (2-D, kernel == stride, no pads or
                  // output padding, dilation 1, groups 1) with constant weights: channels-last
                  // input, residual and output, weights as [KH, KW, Cout, Cin]
};

struct FamilyRules {
  SerializeFn serialize = nullptr;
  ExpandFn expand = nullptr;  // nullptr: every node of the family is one step
  OpRows rows;
  // fuse_pointwise: the instruction a node of the family becomes in a Pointwise program (Load:
  // the family joins no chain).
  fb::PointwiseInstrKind pointwise = fb::PointwiseInstrKind::Load;
  NhwcRule nhwc = NhwcRule::kNchwOnly;
};

#define JP_OP_FAMILY(Name, file, Params, Backends) extern const FamilyRules file##_rules;
#include "kernels/op_families.def"
#undef JP_OP_FAMILY

// The rules of `family` (every fb::OpFamily value has them).
const FamilyRules& family_rules(fb::OpFamily family);
// The row of an ONNX op type of the default domain and the family whose file holds it (the
// family that decides, for an op whose family depends on its inputs); nullptr when jetplan has
// no step for the op.
const OpRow* find_op_row(const std::string& op_type, fb::OpFamily* family = nullptr);
// The family's params table for one step; ConvertError (internal) when the serializer writes a
// table other than the family's (kernels/op_families.def, Params).
StepParamsOffset serialize_step(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& step);
// The expansion of a resolved node by its family (see ExpandFn).
bool expand_node(Graph& g, Node& node, std::vector<Node>* out);

}  // namespace ops
}  // namespace jetplan::converter
