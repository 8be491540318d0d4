// Why jetplan leaves an op of ONNX's default domain out: the reason shown in SUPPORTED_OPS.md
// and in the converter's "no such op in jetplan" error for a model that uses it.
#pragma once

namespace jetplan::converter::ops {

// The reason for an op jetplan neither runs nor folds, or null for one it does (or does not
// know).
const char* left_out_reason(const char* op_type);

}  // namespace jetplan::converter::ops
