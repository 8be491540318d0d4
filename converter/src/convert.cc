#include "converter/src/convert.h"

#include <jetplan/jetplan.h>

#include <cstdio>

#include "converter/src/calibrate/calibrate.h"
#include "converter/src/fold/control_flow.h"
#include "converter/src/ir/error.h"
#include "converter/src/precision/int8_precision.h"
#include "converter/src/precision/explicit_qdq.h"
#include "converter/src/precision/int8_error.h"
#include "converter/src/precision/int8_gemm.h"
#include "converter/src/precision/int8_report.h"
#include "converter/src/lower/gpu_lower.h"
#include "converter/src/lower/lower.h"
#include "converter/src/import/onnx_definitions.h"
#include "converter/src/import/onnx_import.h"
#include "converter/src/passes/passes.h"
#include "converter/src/serialize/serialize.h"
#include "converter/src/serialize/sha256.h"
#include "converter/src/ops/check.h"
#include "converter/src/select/targets.h"

namespace jetplan::converter {
namespace {

std::string dims_text(const Shape& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

// The calibration samples the INT8 error measurements run on (the model's float32 inputs).
CalibrationSet error_samples(const PlanDraft& lowered, const ConvertOptions& options) {
  if (options.calibration.dir.empty())
    fail("--int8-report and --int8-max-error measure on calibration samples: give --calib DIR");
  std::vector<CalibrationInput> inputs;
  for (const DraftBinding& b : lowered.inputs) {
    const DraftTensor& t = lowered.tensors[b.tensor];
    if (t.dtype != DataType::kFloat32)
      fail("the INT8 error measurements take float32 inputs; input '", b.name, "' is ",
           dtype_name(t.dtype));
    inputs.push_back({b.name, JP_FLOAT32, t.shape});
  }
  return CalibrationSet(options.calibration.dir, inputs,
                        parse_preprocess(options.calibration.preprocess));
}

// --int8-max-error and --int8-report on the lowered draft: the first may add steps to
// int8->exclude, the second describes the plan that results.
void measure_int8(const PlanDraft& lowered, const ConvertOptions& options, Int8Options* int8,
                  ConvertResult* result) {
  const CalibrationSet set = error_samples(lowered, options);
  const Int8ErrorMeter meter(lowered, set, static_cast<size_t>(options.int8_error_samples));
  Int8Report report;
  if (options.int8_max_error > 0.0) {
    Int8Summary first;
    (void)nhwc_draft(lowered, int8, &first);
    const Int8Fallback f = fit_int8_error(meter, options.int8_max_error, first.steps, int8);
    result->summary.int8_error_before = f.error_before;
    result->summary.int8_error_after = f.error_after;
    result->summary.moved_fp16 = f.moved;
    report.moved = f.moved;
    report.max_error = options.int8_max_error;
  }
  if (!options.int8_report) return;
  Int8Summary summary;
  const std::vector<uint8_t> plan = nhwc_cpu_plan(lowered, int8, &summary);
  Int8Report measured = measure_int8_error(meter, plan, *int8, summary.steps);
  report.samples = measured.samples;
  report.rows = std::move(measured.rows);
  result->int8_report_table = format_int8_report(report);
  result->int8_report_json = int8_report_json(report);
}

void tell(const ConvertOptions& options, const char* stage) {
  if (options.progress) options.progress(stage, 0, 0);
}

}  // namespace

ConvertResult convert_onnx(const std::string& model_bytes, const std::string& source_name,
                           const ConvertOptions& options) {
  Target target = find_target(options.target);
  target.device.arch_kernels = !options.portable_kernels;
  const bool gpu = target.plan.backend == fb::Backend::CUDA;
  tell(options, "import");
  Graph g = import_onnx(model_bytes,
                        ImportOptions{options.input_shapes, options.model_dir, options.freeze});
  // If, Loop and Scan become plain nodes (or the one error that says which input to freeze)
  // before anything reads the graph's node list.
  fold_control_flow(g);
  // Explicit quantization: a model with its own Q/DQ pairs runs in INT8 with its scales on a
  // GPU target (and as the INT8 reference plan with --target cpu --precision int8); the CPU
  // target otherwise runs its QuantizeLinear and DequantizeLinear nodes as they are.
  const bool qdq = (gpu || options.precision == Precision::kInt8) && has_qdq_pairs(g);
  const bool int8 = options.precision == Precision::kInt8 || qdq;
  // Float32 GPU plans (--precision fp32): every step in float32, as the CPU plan computes it
  // (reference runs, accuracy checks, calibration on the GPU); not with INT8.
  const bool fp32 = gpu && options.precision == Precision::kFp32;
  if (fp32 && qdq)
    throw ConvertError("--precision fp32: the model carries QuantizeLinear/DequantizeLinear "
                       "pairs, which a GPU plan runs in INT8; convert it with --precision int8 "
                       "or without --precision");
  ExplicitScales given;
  if (qdq) given = remove_qdq_pairs(g);
  // Calibration (its own FP32 CPU plan of the model) for every tensor the model gives no scale;
  // optional for a Q/DQ model.
  const CalibrationOptions& calib = options.calibration;
  CalibrationResult calibration;
  const bool calibrated = int8 && (!qdq || !calib.dir.empty() || !calib.cache_path.empty());
  if (calibrated) calibration = calibrate(model_bytes, options, calib);
  tell(options, "fold");
  eliminate_dead_nodes(g);
  check_support(g);
  // Nodes read only by folded shape arithmetic (the Transpose a Shape looked at) are dead now.
  eliminate_dead_nodes(g);
  remove_identities(g);
  if (options.fuse) {
    tell(options, "fuse");
    fold_batchnorm(g);
    fuse_patterns(g);
    // The fused attention kernels are Float16: a Float32 plan keeps attention's own steps.
    if (!fp32) fuse_attention(g, gpu);
    fuse(g);
    fuse_pointwise(g);
  }
  tell(options, "lower");
  legalize(g);

  PlanDraft draft = lower(g);
  drop_empty_steps(&draft);
  ConvertResult result;
  Int8Summary int8_summary;
  Int8Options int8_options;
  int8_options.amax = calibration.amax;
  int8_options.scales = given.activations;
  int8_options.weight_scales = given.weights;
  int8_options.exclude.insert(options.int8_exclude.begin(), options.int8_exclude.end());
  if (int8 && (options.int8_report || options.int8_max_error > 0.0)) {
    tell(options, "int8 error");
    measure_int8(draft, options, &int8_options, &result);
  }
  // INT8 plans are channels_last around the convs on the CPU target as well (the INT8 CPU
  // twins' layout, as on the GPU); the GPU's other steps then go to Float16.
  if (gpu || int8) tell(options, "precision");
  if (gpu || int8) gpu_layout(&draft, fp32);
  if (int8) int8_summary = int8_precision(&draft, int8_options);
  // FP16 GPU plans run their GEMMs of constant weights and many rows (transformers'
  // projections and MLPs) as 1x1 convs too (int8_gemm.h), on the conv implicit-GEMM kernels:
  // larger tiles and deeper pipelines than the GEMM kernels', the same fused epilogue.
  if (gpu && !int8 && !fp32)
    result.summary.gemms_as_convs =
        gemms_as_convs(&draft, [](const DraftStep&, uint32_t, uint32_t) { return true; }).size();
  if (gpu && !fp32) gpu_precision(&draft);
  if (gpu || int8) {
    // A Float32 plan keeps every Concat input a tensor of its own, as the CPU plan does: its
    // step observer (calibration on the GPU) then sees each conv's output, and whole.
    if (fp32)
      compose_layout_transposes(&draft);
    else
      place_gpu_moves(&draft);
    remove_unused_tensors(&draft);
  }
  tell(options, "memory");
  alias_views(&draft);
  assign_memory(&draft);

  PlanMetadata metadata;
  metadata.converter_version = kConverterVersion;
  metadata.source_sha256 = sha256_hex(model_bytes.data(), model_bytes.size());
  metadata.source_name = source_name;
  metadata.options["fuse"] = options.fuse ? "1" : "0";
  metadata.options["target"] = target.plan.name;
  for (const auto& [name, shape] : options.input_shapes)
    metadata.options["shape." + name] = dims_text(shape);
  for (const auto& [name, value] : options.freeze) metadata.options["freeze." + name] = value;
  if (fp32) metadata.options["precision"] = "fp32";
  if (int8) {
    metadata.options["precision"] = "int8";
    if (qdq) metadata.options["quantization"] = "explicit";
    if (calibrated)
      metadata.options["calibration.method"] = method_name(calibration.method, calibration.percentile);
    for (const std::string& name : options.int8_exclude) metadata.options["int8_exclude." + name] = "1";
    if (options.int8_max_error > 0.0) {
      metadata.options["int8_max_error"] = cat(options.int8_max_error);
      metadata.options["int8_error_samples"] = cat(options.int8_error_samples);
    }
  }

  if (gpu && options.select_kernels) {
    tell(options, "select");
    gpu_select(&draft, target, metadata);
  }

  tell(options, "serialize");
  // A GPU plan is written only once the runtime's load accepts it without a device.
  result.plan = gpu && options.select_kernels ? write_gpu_plan(draft, target, metadata)
                                              : serialize_plan(draft, target.plan, metadata);
  result.summary.steps = draft.steps.size();
  result.summary.tensors = draft.tensors.size();
  result.summary.weight_bytes = draft.weights.size();
  result.summary.arena_bytes = draft.arena_bytes;
  result.summary.arena_lower_bound = draft.arena_lower_bound;
  result.summary.int8 = int8;
  result.summary.int8_steps = int8_summary.steps.size();
  result.summary.int8_gemms = int8_summary.int8_gemms;
  result.summary.quantize_steps = int8_summary.quantize_steps;
  result.summary.padded_inputs = int8_summary.padded_inputs;
  result.summary.saturation_steps = int8_summary.saturation_steps;
  result.summary.int8_pools = int8_summary.int8_pools;
  result.summary.int8_concats = int8_summary.int8_concats;
  result.summary.int8_resizes = int8_summary.int8_resizes;
  result.summary.int8_adds = int8_summary.int8_adds;
  result.summary.int8_binary_outputs = int8_summary.int8_binary_outputs;
  result.summary.int8_norm_outputs = int8_summary.int8_norm_outputs;
  result.summary.int8_attention_outputs = int8_summary.int8_attention_outputs;
  result.summary.int8_tensors = int8_summary.int8_tensors;
  result.summary.kept_fp16 = int8_summary.kept_fp16;
  result.summary.calibration_samples = calibration.samples;
  result.summary.qdq_pairs = given.pairs;
  result.summary.explicit_weights = given.weights.size();
  result.summary.calibration_from_cache = calibration.from_cache;
  result.summary.calibration_device = calibration.device;
  return result;
}

std::string supported_ops_markdown() {
  const std::vector<OnnxOpInfo> ops = onnx_default_domain_ops();
  auto cell = [](std::string text) {  // a table cell: pipes escaped
    for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2))
      text.replace(at, 1, "\\|");
    return text;
  };
  size_t runs = 0, folds_only = 0, cpu_only = 0;
  std::string rows;
  for (const OnnxOpInfo& op : ops) {
    const OpSupport s = describe_op(op.op_type);
    runs += s.runs;
    folds_only += !s.runs && s.folds;
    cpu_only += s.runs && s.gpu_dtypes.empty();
    const char* what = s.runs ? (s.folds ? "runs, folds" : "runs") : s.folds ? "folds only" : "-";
    std::string notes = s.notes;
    if (s.refused_from != 0)
      notes += cat(notes.empty() ? "" : "; ", "refused from opset ", s.refused_from,
                   " (its definition there is not read)");
    const std::string gpu = !s.runs ? "" : s.gpu_dtypes.empty() ? "CPU only" : s.gpu_dtypes;
    rows += cat("| ", op.op_type, op.deprecated ? " (deprecated)" : "", " | ", what, " | ", s.family,
                " | ", cell(s.dtypes), " | ", cell(gpu), " | ", cell(notes), " |\n");
  }
  return cat(
      "# ONNX operators in jetplan\n\n"
      "Generated by `jetplan-convert --list-ops` from the converter's op families "
      "(`src/ops/<family>.cc`, reached through `src/ops/registry.cc`) and its constant folder; "
      "do not edit. `SupportedOps.CommittedTableIsCurrent` fails when this file is stale; "
      "regenerate it with\n\n"
      "    build/converter/jetplan-convert --list-ops > converter/SUPPORTED_OPS.md\n\n"
      "Models of opsets 7 to ", kNewestOnnxOpset,
      " (onnx 1.23) are read, opsets 1 to 6 after an upgrade to opset 13 "
      "(libonnx's version converter). Past opset 17, libonnx 1.12 checks an op by its opset-17 "
      "schema where ONNX only added element types, and the converter by its own table "
      "(`src/import/onnx_definitions.cc`) where ONNX added or redefined the op; a definition an "
      "op's check does not read is refused, naming the node and the opset (\"refused from "
      "opset\" below). Tensors have rank ",
      JP_MAX_RANK,
      " at most and may be empty (an extent of 0: the steps that would write only empty tensors "
      "are dropped; CPU plans only). The plan dtypes (\"any plan dtype\") are ",
      plan_dtype_list(),
      "; int16, uint16, uint32 and uint64 reach only data movement, Cast, integer arithmetic, "
      "comparisons and Pow, and bfloat16 only data movement and Cast, on the CPU backend.\n\n"
      "- **runs**: a node of the op becomes a plan step where the op table's check function "
      "accepts it (the restrictions column); every node it refuses is reported, with the "
      "reason, in one error.\n"
      "- **folds**: evaluated at conversion when all its inputs are constants (shape "
      "arithmetic, weight preprocessing); **folds only**: refused where an input is computed "
      "at run time.\n"
      "- **-**: left out; the restrictions column says why (`src/ops/left_out.cc`), as does "
      "the converter's error for a model that uses the op.\n"
      "- **family**: the plan step's op family, whose file `src/ops/<family>.cc` "
      "(`kernels/op_families.def` names it) holds the op's check; for an op whose family "
      "depends on its inputs (Add: Binary on float32, Elementwise otherwise), the family that "
      "decides.\n"
      "- **dtypes**: the element types its steps take on the CPU backend; **GPU**: those a plan "
      "for a CUDA target runs (float32 in float16 there; in float32 with `--precision fp32`, "
      "on the families' Float32 kernels), from the op family's CUDA kernel "
      "variants that kernel selection picks from (`kernels/cuda/select.h` has_kernel_for); "
      "**CPU only**: none (convert for the CPU target). A selector may still refuse a form "
      "of a listed dtype, naming the step and why.\n"
      "- A model stored in float16 or bfloat16 runs as the float32 graph it rounds "
      "(`src/import/widen_floats.h`): every op that takes float32 takes it, rounded once at "
      "its outputs and at its Casts to a narrow type; its inputs and outputs keep their "
      "types.\n\n",
      runs, " of the ", ops.size(), " ops of ONNX's default domain (opsets up to ", kNewestOnnxOpset,
      ") run, ",
      folds_only, " more fold on constants only; ", runs - cpu_only, " of those that run have "
      "CUDA kernels, ", cpu_only, " run on the CPU backend only.\n\n"
      "| op | jetplan | family | dtypes | GPU | restrictions |\n"
      "|---|---|---|---|---|---|\n",
      rows);
}

std::string format_summary(const std::string& plan_name, const ConvertSummary& s) {
  char weights[32];
  if (s.weight_bytes >= 1000000)
    std::snprintf(weights, sizeof(weights), "%.1f MB", static_cast<double>(s.weight_bytes) / 1e6);
  else if (s.weight_bytes >= 1000)
    std::snprintf(weights, sizeof(weights), "%.1f KB", static_cast<double>(s.weight_bytes) / 1e3);
  else
    std::snprintf(weights, sizeof(weights), "%llu bytes",
                  static_cast<unsigned long long>(s.weight_bytes));
  std::string line = cat(plan_name, ": ", s.steps, " steps, ", s.tensors, " tensors, weights ",
                         weights, ", arena ", s.arena_bytes, " bytes (lower bound ",
                         s.arena_lower_bound, " bytes)");
  if (s.gemms_as_convs > 0) line += cat("\n", s.gemms_as_convs, " GEMMs run as 1x1 convs");
  if (!s.int8) return line;
  line += cat("\nINT8: ",
              s.int8_steps - s.int8_gemms - s.int8_binary_outputs - s.int8_norm_outputs -
                  s.int8_attention_outputs,
              " convs in INT8, ");
  if (s.int8_gemms > 0) line += cat(s.int8_gemms, " GEMMs in INT8 (as 1x1 convs), ");
  line += cat(s.int8_tensors, " Int8 tensors between them, ", s.quantize_steps, " quantize steps");
  if (s.padded_inputs > 0) line += cat(" (", s.padded_inputs, " padding an input to 8k channels)");
  if (s.int8_pools > 0) line += cat(", ", s.int8_pools, " max pools on Int8");
  if (s.int8_concats > 0) line += cat(", ", s.int8_concats, " concats on Int8");
  if (s.int8_resizes > 0) line += cat(", ", s.int8_resizes, " resizes on Int8");
  if (s.int8_adds > 0) line += cat(", ", s.int8_adds, " adds on Int8");
  if (s.int8_binary_outputs > 0)
    line += cat(", ", s.int8_binary_outputs, " float Binary steps writing Int8");
  if (s.int8_norm_outputs > 0)
    line += cat(", ", s.int8_norm_outputs, " LayerNorms writing Int8");
  if (s.int8_attention_outputs > 0)
    line += cat(", ", s.int8_attention_outputs, " attention steps writing Int8");
  if (s.qdq_pairs > 0 || s.explicit_weights > 0)
    line += cat("; scales from the model's ", s.qdq_pairs, " Q/DQ pairs and ", s.explicit_weights,
                " quantized weights");
  if (s.saturation_steps > 0)
    line += cat("; ", s.saturation_steps, " clip steps keep removed pairs' int8 range");
  if (s.calibration_from_cache)
    line += "; calibration from the cache";
  else if (s.calibration_samples > 0)
    line += cat("; calibration over ", s.calibration_samples, " samples on ",
                s.calibration_device);
  if (!s.kept_fp16.empty()) line += cat("\nconvs kept in float (", s.kept_fp16.size(), "):");
  for (const std::string& k : s.kept_fp16) line += "\n  " + k;
  if (s.int8_error_before > 0.0) {
    char errors[96];
    std::snprintf(errors, sizeof errors, "%.4g -> %.4g", s.int8_error_before, s.int8_error_after);
    line += cat("\n--int8-max-error: worst output's relative RMS error ", errors, ", ",
                s.moved_fp16.size(), " steps moved back to float", s.moved_fp16.empty() ? "" : ":");
    for (const std::string& m : s.moved_fp16) line += "\n  " + m;
  }
  return line;
}

}  // namespace jetplan::converter
