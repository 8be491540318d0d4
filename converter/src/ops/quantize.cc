// The Quantize family: QuantizeLinear (check_quantize_linear, quantized.cc; folded on constants).
#include "converter/src/ir/error.h"
#include "converter/src/ops/family_checks.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/quantized.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

constexpr OpRow kRows[] = {
    {"QuantizeLinear", check_quantize_linear, "float32 -> int8, uint8",
     "per tensor or per axis (opset 13); round half to even, saturating; scale and zero point "
     "may be computed at run time; folded on constants; output_dtype and precision (opsets 21, 23) "
     "where they mean the same",
     23},
};

}  // namespace

const FamilyRules quantize_rules = {serialize_quantize_params, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
