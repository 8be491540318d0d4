#include "converter/src/convert.h"

#include <cstdio>

#include "converter/src/error.h"
#include "converter/src/lower.h"
#include "converter/src/onnx_import.h"
#include "converter/src/passes.h"
#include "converter/src/serialize.h"
#include "converter/src/sha256.h"
#include "converter/src/support.h"

namespace jetplan::converter {
namespace {

TargetDesc find_target(const std::string& name) {
  if (name == "cpu") return TargetDesc{"cpu", fb::Backend::CPU, 0};
  std::string known;
  for (const std::string& t : known_targets()) known += (known.empty() ? "" : ", ") + t;
  fail("unknown target '", name, "' (known: ", known, ")");
}

std::string dims_text(const Shape& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

}  // namespace

std::vector<std::string> known_targets() { return {"cpu"}; }

ConvertResult convert_onnx(const std::string& model_bytes, const std::string& source_name,
                           const ConvertOptions& options) {
  const TargetDesc target = find_target(options.target);
  Graph g = import_onnx(model_bytes, ImportOptions{options.input_shapes});
  eliminate_dead_nodes(g);
  check_support(g);
  remove_identities(g);
  if (options.fuse) {
    fold_batchnorm(g);
    fuse(g);
  }
  legalize(g);

  PlanDraft draft = lower(g);
  assign_memory(&draft);

  PlanMetadata metadata;
  metadata.converter_version = kConverterVersion;
  metadata.source_sha256 = sha256_hex(model_bytes.data(), model_bytes.size());
  metadata.source_name = source_name;
  metadata.options["fuse"] = options.fuse ? "1" : "0";
  metadata.options["target"] = target.name;
  for (const auto& [name, shape] : options.input_shapes)
    metadata.options["shape." + name] = dims_text(shape);

  ConvertResult result;
  result.plan = serialize_plan(draft, target, metadata);
  result.summary.steps = draft.steps.size();
  result.summary.tensors = draft.tensors.size();
  result.summary.weight_bytes = draft.weights.size();
  result.summary.arena_bytes = draft.arena_bytes;
  result.summary.arena_lower_bound = draft.arena_lower_bound;
  return result;
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
  return cat(plan_name, ": ", s.steps, " steps, ", s.tensors, " tensors, weights ", weights,
             ", arena ", s.arena_bytes, " bytes (lower bound ", s.arena_lower_bound, " bytes)");
}

}  // namespace jetplan::converter
