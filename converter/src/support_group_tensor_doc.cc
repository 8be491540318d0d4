// SUPPORTED_OPS.md's dtypes and restrictions of the tensor group's ops (the check functions are
// in support_group_tensor.cc, whose table holds one row per op here: test_group_import_extra
// checks that every op of the group has a row). Data movement takes every plan dtype; math runs
// where a kernel has the dtype, float16 computing in float32 and int8/uint8 in int32, with Cast
// steps around.
#include <algorithm>
#include <iterator>
#include <string>

#include "converter/src/support_groups.h"
#include "converter/src/table.h"

namespace jetplan::converter {
namespace {

struct DocRow {
  const char* op_type;
  const char* dtypes;
  const char* notes;
};

constexpr const char* kAny = "any plan dtype";
constexpr const char* kFloatMath = "float32, float16 (computed in float32)";
constexpr const char* kSignedMath =
    "float32, float16 (in float32), int8, uint8 (in int32), int32, int64";
constexpr const char* kPredicate = "float32, float16 (in float32) -> bool";
constexpr const char* kArith =
    "float32, float16 (in float32), float64 (CPU backend only), int8, uint8 (in int32), int32, "
    "int64; int16, uint16, uint32, uint64 (CPU backend only)";
constexpr const char* kArithNotes =
    "2 inputs, numpy broadcasting; float32 is a Binary step, fused into the preceding Conv/Gemm "
    "as bias or residual (Add, Sub) where it can be; integers wrap, x / 0 is 0";
constexpr const char* kVariadicNotes = "1 or more inputs, numpy broadcasting; NaN propagates";
constexpr const char* kCompare = "any plan dtype but bfloat16 -> bool";
constexpr const char* kCompareNotes = "2 inputs of one dtype, numpy broadcasting";
constexpr const char* kLogic = "bool";
constexpr const char* kCastNotes =
    "between any two plan dtypes (float to integer truncates and saturates; to bfloat16 through "
    "float32, truncated to its upper 16 bits as ONNX's conformance data expects)";

// Sorted by op type.
constexpr DocRow kDocs[] = {
    {"Abs", kSignedMath, ""},
    {"Acos", kFloatMath, ""},
    {"Acosh", kFloatMath, ""},
    {"Add", kArith, kArithNotes},
    {"And", kLogic, kCompareNotes},
    {"Asin", kFloatMath, ""},
    {"Asinh", kFloatMath, ""},
    {"Atan", kFloatMath, ""},
    {"Atanh", kFloatMath, ""},
    {"Cast", kAny, kCastNotes},
    {"CastLike", kAny, kCastNotes},
    {"Ceil", kFloatMath, ""},
    {"Cos", kFloatMath, ""},
    {"Cosh", kFloatMath, ""},
    {"DepthToSpace", kAny, "DCR and CRD modes; a Transpose between two views"},
    {"Div", kArith, kArithNotes},
    {"Einsum", "float32, float64 (CPU backend only); a permutation or diagonal of 1 operand: any "
               "plan dtype",
     "1 or 2 operands; '...' dims equal in both operands (not broadcast); an index repeated in "
     "one operand takes its diagonal first (a strided Slice); float32 products run as a "
     "batched Gemm between views and Transposes, sums and float64 as a broadcast Mul and a "
     "Reduce Sum"},
    {"Equal", kCompare, kCompareNotes},
    {"Erf", kFloatMath, ""},
    {"Exp", kFloatMath, ""},
    {"Expand", kAny, "shape constant (after folding)"},
    {"Floor", kFloatMath, ""},
    {"Gather", kAny, "indices int32 or int64 (constant ones are range-checked; out of range at "
                     "run time gives zeros)"},
    {"GatherElements", kAny, "indices int32 or int64, the data's rank"},
    {"Gelu", kFloatMath, "approximate none (erf form, float32 only, an activation) or tanh"},
    {"Greater", kCompare, kCompareNotes},
    {"GreaterOrEqual", kCompare, kCompareNotes},
    {"IsInf", kPredicate, "detect_positive and detect_negative not both 0"},
    {"IsNaN", kPredicate, ""},
    {"Less", kCompare, kCompareNotes},
    {"LessOrEqual", kCompare, kCompareNotes},
    {"Log", kFloatMath, ""},
    {"Max", kArith, kVariadicNotes},
    {"Mean", "float32, float16 (in float32)", "1 or more inputs, numpy broadcasting"},
    {"Min", kArith, kVariadicNotes},
    {"Mish", kFloatMath, ""},
    {"Mod", "int8, uint8 (in int32), int32, int64, int16, uint16, uint32, uint64 (CPU backend "
            "only); float32, float16, float64 with fmod=1",
     "2 inputs of one dtype, numpy broadcasting; x mod 0 is 0 for integers"},
    {"Mul", kArith, kArithNotes},
    {"Neg", kSignedMath, ""},
    {"Not", kLogic, ""},
    {"Or", kLogic, kCompareNotes},
    {"Pad", kAny,
     "pads (and constant_value, axes) constant; constant, reflect, edge and wrap modes"},
    {"Pow", "float32; x and y of float32, float16, float64, int8, uint8, int16, uint16, int32, "
            "uint32, int64, uint64 (in float64, CPU backend only)",
     "2 inputs, numpy broadcasting; the output has x's dtype (float to integer truncates, "
     "exact while |result| < 2^53)"},
    {"Reciprocal", kFloatMath, ""},
    {"Round", kFloatMath, "half to even"},
    {"Sign", kSignedMath, ""},
    {"Sin", kFloatMath, ""},
    {"Sinh", kFloatMath, ""},
    {"Slice", kAny, "starts, ends, axes and steps constant (after folding); any step sign"},
    {"Softplus", kFloatMath, ""},
    {"Softsign", kFloatMath, ""},
    {"SpaceToDepth", kAny, "a Transpose between two views"},
    {"Split", kAny, "split constant (input or attribute); empty outputs are not computed"},
    {"Sqrt", kFloatMath, ""},
    {"Sub", kArith, kArithNotes},
    {"Sum", kArith,
     "1 or more inputs, numpy broadcasting: a chain of Adds"},
    {"Tan", kFloatMath, ""},
    {"Tile", kAny, "repeats constant (after folding)"},
    {"Transpose", kAny, "any perm"},
    {"Where", kAny, "condition bool; X and Y of one dtype; numpy broadcasting of all three"},
    {"Xor", kLogic, kCompareNotes},
};
static_assert(sorted_by_op_type(kDocs), "kDocs must be sorted by op type");

}  // namespace

bool find_doc_tensor(const std::string& op_type, OpDoc* doc) {
  auto it =
      std::lower_bound(std::begin(kDocs), std::end(kDocs), op_type,
                       [](const DocRow& e, const std::string& op) { return op > e.op_type; });
  if (it == std::end(kDocs) || op_type != it->op_type) return false;
  *doc = {it->dtypes, it->notes};
  return true;
}

}  // namespace jetplan::converter
