// The converter's GPU pipeline up to its Float16 pass (NHWC layout, and the INT8 pass when
// asked), serialized as a CPU plan: the CPU twins take channels_last tensors and INT8 steps, so
// tests check those passes by numbers without a GPU (lower/test_gpu_layout_cpu.cc,
// passes/test_fuse_pointwise.cc, precision/test_int8_precision.cc).
#pragma once

#include <string>
#include <vector>

#include "converter/src/import/onnx_import.h"
#include "converter/src/lower/gpu_lower.h"
#include "converter/src/ops/check.h"
#include "converter/src/passes/passes.h"
#include "converter/src/precision/int8_precision.h"

namespace jetplan::converter::testing {

struct GpuPipeline {
  bool fuse = true;            // BatchNorm folding and epilogue fusion
  bool fuse_more = false;      // also the pattern and pointwise fusions (as convert_onnx)
  const Int8Options* int8 = nullptr;  // run the INT8 pass with these ranges
  Int8Summary* int8_summary = nullptr;  // what it did
};

inline std::vector<uint8_t> nhwc_cpu_plan(const std::string& bytes, const GpuPipeline& o) {
  Graph g = import_onnx(bytes, ImportOptions{});
  eliminate_dead_nodes(g);
  check_support(g);
  eliminate_dead_nodes(g);
  remove_identities(g);
  if (o.fuse) {
    fold_batchnorm(g);
    if (o.fuse_more) fuse_patterns(g);
    if (o.fuse_more) fuse_attention(g, true);
    fuse(g);
    if (o.fuse_more) fuse_pointwise(g);
  }
  legalize(g);
  PlanDraft draft = lower(g);
  gpu_layout(&draft);
  if (o.int8 != nullptr) {
    const Int8Summary s = int8_precision(&draft, *o.int8);
    if (o.int8_summary != nullptr) *o.int8_summary = s;
  }
  place_gpu_moves(&draft);
  remove_unused_tensors(&draft);
  alias_views(&draft);
  assign_memory(&draft);
  return serialize_plan(draft, TargetDesc{}, PlanMetadata{});
}

}  // namespace jetplan::converter::testing
