// IR -> plan draft: tensors, steps and bindings with plan semantics, then memory placement.
// The draft is everything a plan holds except its encoding (serialize.h).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

constexpr uint64_t kWeightAlignment = 256;
constexpr uint64_t kArenaAlignment = 256;

struct DraftTensor {
  std::string name;
  Shape shape;
  DataType dtype = DataType::kFloat32;
  fb::Layout layout = fb::Layout::Any;
  fb::Storage storage = fb::Storage::Arena;
  int32_t binding = -1;  // Binding: index into the draft's inputs or outputs
  bool output_binding = false;
  uint64_t offset = 0;  // set by assign_memory
  uint64_t size_bytes = 0;
  // Weight: the elements, borrowed from the Graph, which must outlive the draft.
  const std::vector<uint8_t>* data = nullptr;
  // Arena: the first and last step that touch it (set by assign_memory).
  int32_t first_step = -1, last_step = -1;
  // Arena: a view of another arena tensor's bytes (alias_views): no step writes it, it has
  // that tensor's offset, and that tensor lives as long as the view is read. -1: its own bytes.
  int32_t alias_of = -1;
  // GPU plans: a Float32 weight that gpu_precision leaves Float32 (INT8 channel epilogues and
  // quantization scales, which the INT8 kernels read as float32).
  bool keep_float32 = false;
};

struct DraftStep {
  std::string name;
  OpDesc op;
  std::vector<uint32_t> inputs, outputs;  // tensor indices
  uint64_t workspace_offset = 0;          // set by assign_memory when op.workspace_bytes > 0
  // GPU plans: the kernel variant and its launch (gpu_lower.h); empty/zero for CPU plans.
  std::string kernel;
  fb::LaunchConfig launch{};
};

struct DraftBinding {
  std::string name;
  uint32_t tensor = 0;
  int32_t count_tensor = -1;  // outputs with a run-time leading extent (fb::BindingDesc)
};

struct PlanDraft {
  std::vector<DraftTensor> tensors;
  std::vector<DraftStep> steps;  // execution order
  std::vector<DraftBinding> inputs, outputs;
  std::vector<uint8_t> weights;  // set by assign_memory
  uint64_t arena_bytes = 0;
  uint64_t arena_lower_bound = 0;
  // Weight data the passes made (permuted, converted); DraftTensor::data may point here. A
  // deque: elements never move, also when the draft does.
  std::deque<std::vector<uint8_t>> owned_data;
};

// One step per live node (the graph must be legalized: node shapes are step shapes), plus a
// Copy into its own Binding tensor for each graph output that is a graph input, a constant or
// another output already. Tensors are numbered graph inputs first, then in order of first use
// by the steps.
PlanDraft lower(const Graph& g);

// Drops tensors no step and no binding refers to (weights the passes replaced), renumbering.
void remove_unused_tensors(PlanDraft* draft);

// Empty tensors (a dim of 0, 0 bytes): drops the steps whose outputs are all empty (nothing to
// compute; the runtime would skip them too) and the empty inputs of Concat steps, then the
// tensors no step or binding uses any more. The converter's checks (ops/check.cc) let no other
// step read an empty tensor. Run right after lower().
void drop_empty_steps(PlanDraft* draft);

// Removes the steps that only move bytes unchanged from one arena tensor into another of the
// same size: Copy steps (reshapes, flattens, squeezes) and Transposes whose permutation moves
// only extent-1 dims. Their outputs become views of their inputs' bytes (DraftTensor::alias_of)
// when neither is a binding. Run before assign_memory.
void alias_views(PlanDraft* draft);

// Packs the weight tensors into `weights` (each at a multiple of kWeightAlignment, zero padding
// between), computes each arena tensor's live step range (a tensor with views lives until its
// last view is read) and places them with the arena planner, views at their tensor's offset;
// calling it again places everything afresh. ConvertError if the planner's result fails its
// own validity check.
void assign_memory(PlanDraft* draft);

}  // namespace jetplan::converter
