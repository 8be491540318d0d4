// jetplan_converter's entry point: ONNX model bytes in, plan bytes out.
//
//   import (onnx_import.h) -> dead-node removal -> folding + support check (ops/check.h)
//   -> dead-node removal (of what only folded nodes read) -> Identity removal -> [BatchNorm
//   folding, epilogue fusion] -> legalize -> lower (lower.h) -> [CUDA targets: NHWC layout,
//   float16, kernel selection (gpu_lower.h)] -> memory placement -> serialize (serialize.h)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "converter/src/calibrate/calibration_options.h"
#include "converter/src/ir/graph.h"

namespace jetplan::converter {

constexpr const char* kConverterVersion = "0.1.0";

// Told where a conversion is (jetplan-convert's progress line, tools/progress_line.h): `stage`
// as each begins ("import", "calibrate", "fold", "fuse", "lower", "int8 error", "precision",
// "memory", "select", "serialize"), and for one that counts (calibrate: samples) `done` of
// `total` as they finish; total is 0 for a stage that does not count. Called on the converting
// thread only.
using ProgressFn = std::function<void(const char* stage, size_t done, size_t total)>;

struct ConvertOptions {
  std::map<std::string, Shape> input_shapes;  // --shape NAME:DIMS
  // --freeze NAME=VALUE: graph input -> the text of its value, a literal or a .npy path
  // (import/freeze.h). The input becomes a constant and leaves the plan's inputs.
  std::map<std::string, std::string> freeze;
  bool fuse = true;                           // BatchNorm folding and epilogue fusion
  std::string target = "cpu";  // "cpu", a targets/ name or a target .json path (targets.h)
  // Where external data files are looked up: the model file's directory (the CLI sets it).
  // Empty: a model with external data is refused. Not part of the plan's metadata.
  std::string model_dir;
  // CUDA targets: false skips kernel selection, leaving steps without kernels (a plan the
  // runtime refuses): for tests of the layout and precision passes alone. Not in the metadata.
  bool select_kernels = true;
  // CUDA targets: only the kernels every GPU arch has (--portable-kernels), none of the target
  // arch's own (sm_90's wgmma tiles): the Ampere-class kernels Orin runs, on a development GPU.
  bool portable_kernels = false;
  // The precision of the plan's steps. kInt8 quantizes with the amax of each tensor from
  // post-training calibration (calibrate/calibrate.h, run with `calibration`). On a CUDA target
  // the other steps run in Float16; on the CPU target they run in Float32, channels_last around
  // the convs, and the INT8 convs with the GPU kernels' integer arithmetic (the CPU twins): the
  // INT8 reference plan, for checking a quantized model's accuracy on a workstation. kFp32 on
  // a CUDA target keeps every step in Float32 (no Float16 pass, no fused attention, convs on the
  // direct kernel): the model as the CPU plan computes it, on the device; on the CPU target it
  // is the default plan.
  enum class Precision { kFp16, kInt8, kFp32 };
  Precision precision = Precision::kFp16;
  CalibrationOptions calibration;  // --calib*: read only when precision is kInt8
  // kInt8: steps kept in Float16 (--int8-exclude NODE): a step's or an ONNX node's name.
  std::vector<std::string> int8_exclude;
  // kInt8 with calibration samples: measure each INT8 step's error against FP32 and its share
  // of the output error (--int8-report; precision/int8_report.h). Not in the metadata.
  bool int8_report = false;
  // kInt8: the largest relative RMS error of any graph output against FP32 (--int8-max-error;
  // precision/int8_error.h); the steps with the largest shares go back to FP16 until it holds.
  // 0: no bound.
  double int8_max_error = 0.0;
  // How many calibration samples the report and the error bound measure on (the first ones).
  int int8_error_samples = 8;
  ProgressFn progress;  // empty: nobody is told. Not in the metadata.
};
// ConvertOptions::Precision by its short name.
using Precision = ConvertOptions::Precision;

struct ConvertSummary {
  size_t steps = 0;
  size_t tensors = 0;
  uint64_t weight_bytes = 0;
  uint64_t arena_bytes = 0;
  uint64_t arena_lower_bound = 0;
  // --precision int8: what ran in INT8 (precision/int8_precision.h) and on how many samples.
  bool int8 = false;
  size_t int8_steps = 0, quantize_steps = 0, int8_tensors = 0, calibration_samples = 0;
  size_t padded_inputs = 0;  // of the quantize steps, those padding an input to 8k channels
  size_t int8_gemms = 0;  // of int8_steps, the GEMMs (run as 1x1 convs)
  size_t gemms_as_convs = 0;  // FP16 GPU plans: GEMMs run on the conv kernels (int8_gemm.h)
  size_t saturation_steps = 0;  // Clip steps keeping removed Q/DQ pairs' int8 range
  size_t int8_pools = 0;        // max pools on Int8 between INT8 convs
  size_t int8_concats = 0, int8_resizes = 0;  // Concats and Resizes on Int8 between them
  size_t int8_adds = 0;                       // Adds of Int8 tensors (requantized)
  size_t int8_binary_outputs = 0;  // float Binary steps writing Int8 (in int8_steps too)
  size_t int8_norm_outputs = 0;    // LayerNorm steps writing Int8 (in int8_steps too)
  size_t int8_attention_outputs = 0;  // Attention steps writing Int8 (in int8_steps too)
  bool calibration_from_cache = false;
  std::string calibration_device;  // where calibration ran the model (CalibrationResult::device)
  // Explicit quantization (precision/explicit_qdq.h): the model's activation Q/DQ pairs and
  // quantized weights whose scales the plan uses.
  size_t qdq_pairs = 0, explicit_weights = 0;
  std::vector<std::string> kept_fp16;  // convs left in Float16, each with the reason
  // With int8_max_error: the worst output's relative RMS error before and after the steps in
  // `moved_fp16` (largest share first) went back to FP16.
  double int8_error_before = 0.0, int8_error_after = 0.0;
  std::vector<std::string> moved_fp16;
};

struct ConvertResult {
  std::vector<uint8_t> plan;  // a complete .jplan file
  ConvertSummary summary;
  // With int8_report: the INT8 error report as a table and as JSON; empty otherwise.
  std::string int8_report_table, int8_report_json;
};

// The target names --target accepts: "cpu", then the targets/*.json names, sorted (targets.cc).
std::vector<std::string> known_targets();

// Converts a serialized ONNX ModelProto. source_name (the file's base name) goes into the
// plan's metadata. Throws ConvertError with a one-line message that names the problem and,
// where there is one, the node; the caller adds the file name. OptionError (a ConvertError)
// where an option's value does not fit the model (--freeze).
ConvertResult convert_onnx(const std::string& model_bytes, const std::string& source_name,
                           const ConvertOptions& options);

// What jetplan does with one ONNX op type of the default domain, from the converter's tables
// (the op rows of converter/src/ops/, the folder's rules).
struct OpSupport {
  bool runs = false;        // a check function resolves it to a plan step
  bool folds = false;       // evaluated at conversion when its inputs are constants
  // The op family whose file (converter/src/ops/<file>.cc) holds its row: the family of its
  // steps, or for an op whose family depends on its inputs (Add: Binary on float32, Elementwise
  // otherwise) the family that decides.
  const char* family = "";
  const char* dtypes = "";  // element types its steps take ("" where the table gives none)
  // Those of `dtypes` a GPU plan runs (a float32 one "as float16"), comma-separated; "" where
  // none: the family has no CUDA kernel reading them (registry.cc gpu_dtypes).
  std::string gpu_dtypes;
  const char* notes = "";   // restrictions, one line
  // The first opset whose definition of the op jetplan does not read (unread_definition); 0
  // when it reads the op at every opset up to kNewestOnnxOpset.
  int refused_from = 0;
};
OpSupport describe_op(const std::string& op_type);  // defined in ops/registry.cc

// converter/SUPPORTED_OPS.md: every op of ONNX's default domain (opsets up to 28) and what
// jetplan does with it (`jetplan-convert --list-ops`).
std::string supported_ops_markdown();

// "model.jplan: 23 steps, 41 tensors, weights 11.2 MB, arena 3211264 bytes (lower bound ...)"
std::string format_summary(const std::string& plan_name, const ConvertSummary& summary);

}  // namespace jetplan::converter
