#include "converter/src/lower/lower.h"

#include <algorithm>
#include <map>

#include "converter/src/ir/error.h"
#include "converter/src/memory/memory_plan.h"

namespace jetplan::converter {
namespace {

class Lowering {
 public:
  explicit Lowering(const Graph& g) : g_(g), tensor_of_(g.values.size(), -1) {}

  PlanDraft run() {
    for (int id : g_.inputs) {
      const uint32_t t = tensor(id);
      draft_.inputs.push_back({g_.values[id].name, t});
    }
    draft_.outputs.resize(g_.outputs.size());
    for (const Node& node : g_.nodes) lower_node(node);
    bind_outputs();
    return std::move(draft_);
  }

 private:
  // The plan tensor of a graph value, made on first use.
  uint32_t tensor(int value_id) {
    if (tensor_of_[value_id] >= 0) return static_cast<uint32_t>(tensor_of_[value_id]);
    const Value& v = g_.values[value_id];
    if (!v.shape_known) fail("internal error: value '", v.name, "' has no shape at lowering");
    DraftTensor t;
    t.name = v.name;
    t.shape = v.shape;
    t.dtype = v.dtype;
    if (v.graph_input >= 0) {
      t.storage = fb::Storage::Binding;
      t.binding = v.graph_input;
    } else if (v.is_constant) {
      t.storage = fb::Storage::Weight;
      t.data = &v.data;
    } else if (v.graph_output) {
      // A value produced by a step and listed as an output: the step writes the binding.
      t.storage = fb::Storage::Binding;
      t.output_binding = true;
      t.binding = static_cast<int32_t>(std::find(g_.outputs.begin(), g_.outputs.end(), value_id) -
                                       g_.outputs.begin());
    }
    const uint32_t index = add(std::move(t));
    tensor_of_[value_id] = static_cast<int>(index);
    return index;
  }

  uint32_t add(DraftTensor t) {
    t.size_bytes = static_cast<uint64_t>(shape_count(t.shape)) * dtype_size(t.dtype);
    t.layout = t.shape.size() == 4 && t.storage != fb::Storage::Weight ? fb::Layout::NCHW
                                                                       : fb::Layout::Any;
    draft_.tensors.push_back(std::move(t));
    return static_cast<uint32_t>(draft_.tensors.size() - 1);
  }

  void copy(const std::string& name, uint32_t from, uint32_t to) {
    DraftStep s;
    s.name = name;
    s.op.resolved = true;
    s.op.family = fb::OpFamily::Copy;
    s.inputs = {from};
    s.outputs = {to};
    draft_.steps.push_back(std::move(s));
  }

  void emit(const Node& node, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
    DraftStep s;
    s.name = node.name;
    s.op = node.op;
    s.inputs = std::move(inputs);
    s.outputs = std::move(outputs);
    draft_.steps.push_back(std::move(s));
  }

  // Omitted optional inputs and outputs (-1) are left out; the params say which are present.
  void lower_node(const Node& node) {
    if (node.dead) return;
    if (!node.op.resolved) fail("internal error: node ", node_label(node), " is not resolved");
    std::vector<uint32_t> in, out;
    for (int v : node.inputs)
      if (v >= 0) in.push_back(tensor(v));
    for (int v : node.outputs)
      if (v >= 0) out.push_back(tensor(v));
    if (node.op.count_output) {
      const int first = node.outputs[0];
      const auto at = std::find(g_.outputs.begin(), g_.outputs.end(), first);
      if (at == g_.outputs.end())
        fail("internal error: node ", node_label(node), " has a run-time extent but its output '",
             g_.values[first].name, "' is not a graph output");
      DraftTensor count;
      count.name = g_.values[first].name + ":count";
      count.shape = {1};
      count.dtype = DataType::kInt64;
      const uint32_t t = add(std::move(count));
      out.push_back(t);
      counts_[g_.values[first].name] = static_cast<int32_t>(t);
    }
    emit(node, std::move(in), std::move(out));
  }

  // Every graph output needs its own Binding tensor that a step writes: outputs that are graph
  // inputs, constants or already bound to an earlier output get a Copy.
  void bind_outputs() {
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      const int id = g_.outputs[i];
      const std::string& name = g_.values[id].name;
      const uint32_t t = tensor(id);
      const DraftTensor& have = draft_.tensors[t];
      const auto count = counts_.find(name);
      if (count != counts_.end()) {
        // A run-time extent is read off the step that wrote it: no Copy may come between.
        if (!have.output_binding || have.binding != static_cast<int32_t>(i))
          fail("graph output '", name, "' has a run-time extent and cannot also be another "
               "output or an input");
        draft_.outputs[i] = {name, t, count->second};
        continue;
      }
      if (have.output_binding && have.binding == static_cast<int32_t>(i)) {
        draft_.outputs[i] = {name, t};
        continue;
      }
      DraftTensor bound;
      bound.name = name + ":output" + std::to_string(i);
      bound.shape = have.shape;
      bound.dtype = have.dtype;
      bound.storage = fb::Storage::Binding;
      bound.output_binding = true;
      bound.binding = static_cast<int32_t>(i);
      const uint32_t to = add(std::move(bound));
      copy(name + ":output" + std::to_string(i), t, to);
      draft_.outputs[i] = {name, to};
    }
  }

  const Graph& g_;
  std::vector<int> tensor_of_;  // value id -> tensor index
  std::map<std::string, int32_t> counts_;  // output name -> its count tensor
  PlanDraft draft_;
};

uint64_t align_up(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// The tensor whose bytes `i` stands for: itself unless it is a view.
uint32_t alias_root(const PlanDraft& draft, uint32_t i) {
  while (draft.tensors[i].alias_of >= 0) i = static_cast<uint32_t>(draft.tensors[i].alias_of);
  return i;
}

}  // namespace

PlanDraft lower(const Graph& g) { return Lowering(g).run(); }

void remove_unused_tensors(PlanDraft* draft) {
  std::vector<int64_t> remap(draft->tensors.size(), -1);
  auto use = [&](uint32_t i) { remap[i] = 0; };
  for (const DraftStep& s : draft->steps) {
    for (uint32_t i : s.inputs) use(i);
    for (uint32_t i : s.outputs) use(i);
  }
  for (const auto* list : {&draft->inputs, &draft->outputs})
    for (const DraftBinding& b : *list) {
      use(b.tensor);
      if (b.count_tensor >= 0) use(static_cast<uint32_t>(b.count_tensor));
    }
  // A used view keeps the tensor whose bytes it reads (views point at that tensor directly).
  for (size_t i = 0; i < draft->tensors.size(); ++i)
    if (remap[i] == 0 && draft->tensors[i].alias_of >= 0)
      use(static_cast<uint32_t>(draft->tensors[i].alias_of));
  std::vector<DraftTensor> kept;
  for (size_t i = 0; i < draft->tensors.size(); ++i) {
    if (remap[i] < 0) continue;
    remap[i] = static_cast<int64_t>(kept.size());
    kept.push_back(std::move(draft->tensors[i]));
  }
  draft->tensors = std::move(kept);
  for (DraftTensor& t : draft->tensors)
    if (t.alias_of >= 0) t.alias_of = static_cast<int32_t>(remap[static_cast<size_t>(t.alias_of)]);
  for (DraftStep& s : draft->steps) {
    for (uint32_t& i : s.inputs) i = static_cast<uint32_t>(remap[i]);
    for (uint32_t& i : s.outputs) i = static_cast<uint32_t>(remap[i]);
  }
  for (auto* list : {&draft->inputs, &draft->outputs})
    for (DraftBinding& b : *list) {
      b.tensor = static_cast<uint32_t>(remap[b.tensor]);
      if (b.count_tensor >= 0) b.count_tensor = static_cast<int32_t>(remap[b.count_tensor]);
    }
}

void drop_empty_steps(PlanDraft* draft) {
  const auto empty = [&](uint32_t i) { return draft->tensors[i].size_bytes == 0; };
  bool changed = false;
  std::vector<DraftStep> kept;
  kept.reserve(draft->steps.size());
  for (DraftStep& s : draft->steps) {
    if (std::all_of(s.outputs.begin(), s.outputs.end(), empty)) {
      changed = true;
      continue;
    }
    if (s.op.family == fb::OpFamily::Concat && std::any_of(s.inputs.begin(), s.inputs.end(), empty)) {
      s.inputs.erase(std::remove_if(s.inputs.begin(), s.inputs.end(), empty), s.inputs.end());
      changed = true;
    }
    kept.push_back(std::move(s));
  }
  draft->steps = std::move(kept);
  if (changed) remove_unused_tensors(draft);
}

void alias_views(PlanDraft* draft) {
  std::vector<DraftStep> kept;
  kept.reserve(draft->steps.size());
  for (DraftStep& s : draft->steps) {
    bool view = false;
    if (s.inputs.size() == 1 && s.outputs.size() == 1) {
      const DraftTensor& in = draft->tensors[s.inputs[0]];
      DraftTensor& out = draft->tensors[s.outputs[0]];
      const bool bytes_kept =
          s.op.family == fb::OpFamily::Copy ||
          (s.op.family == fb::OpFamily::Transpose && s.op.y_block == 0 &&
           moves_only_unit_dims(in.shape, s.op.perm));
      if (bytes_kept && in.storage == fb::Storage::Arena && out.storage == fb::Storage::Arena &&
          in.size_bytes == out.size_bytes && in.dtype == out.dtype && out.alias_of < 0) {
        out.alias_of = static_cast<int32_t>(alias_root(*draft, s.inputs[0]));
        view = true;
      }
    }
    if (!view) kept.push_back(std::move(s));
  }
  draft->steps = std::move(kept);
}

void assign_memory(PlanDraft* draft) {
  // Idempotent: GPU plans are placed again when kernel selection changed a workspace.
  draft->weights.clear();
  for (DraftTensor& t : draft->tensors) t.first_step = t.last_step = -1;
  for (DraftTensor& t : draft->tensors) {
    if (t.storage != fb::Storage::Weight) continue;
    if (t.size_bytes == 0) {  // an empty constant: no bytes, an offset inside any blob
      t.offset = 0;
      continue;
    }
    t.offset = align_up(draft->weights.size(), kWeightAlignment);
    draft->weights.resize(t.offset, 0);
    draft->weights.insert(draft->weights.end(), t.data->begin(), t.data->end());
  }

  for (size_t s = 0; s < draft->steps.size(); ++s) {
    const DraftStep& step = draft->steps[s];
    for (const auto* list : {&step.inputs, &step.outputs})
      for (uint32_t i : *list) {
        if (draft->tensors[i].storage != fb::Storage::Arena) continue;
        DraftTensor& t = draft->tensors[alias_root(*draft, i)];  // a view keeps its bytes alive
        if (t.first_step < 0) t.first_step = static_cast<int32_t>(s);
        t.last_step = std::max(t.last_step, static_cast<int32_t>(s));
      }
  }
  // A run-time count is read after the run (jp_context_output_desc): it lives to the last step.
  for (const DraftBinding& b : draft->outputs)
    if (b.count_tensor >= 0 && !draft->steps.empty())
      draft->tensors[static_cast<size_t>(b.count_tensor)].last_step =
          static_cast<int32_t>(draft->steps.size() - 1);
  std::vector<BufferRequest> requests;
  std::vector<size_t> request_tensor;
  for (size_t i = 0; i < draft->tensors.size(); ++i) {
    const DraftTensor& t = draft->tensors[i];
    if (t.storage != fb::Storage::Arena || t.alias_of >= 0) continue;
    if (t.first_step < 0) fail("internal error: arena tensor '", t.name, "' is used by no step");
    requests.push_back({t.size_bytes, t.first_step, t.last_step});
    request_tensor.push_back(i);
  }
  // Step workspaces are buffers live during their step only.
  const size_t tensor_requests = requests.size();
  std::vector<size_t> request_step;
  for (size_t s = 0; s < draft->steps.size(); ++s) {
    if (draft->steps[s].op.workspace_bytes == 0) continue;
    requests.push_back({draft->steps[s].op.workspace_bytes, static_cast<int32_t>(s),
                        static_cast<int32_t>(s)});
    request_step.push_back(s);
  }
  const ArenaPlan plan = plan_arena(requests, kArenaAlignment);
  if (plan.offsets.size() != requests.size() ||
      !arena_plan_is_valid(requests, plan, kArenaAlignment))
    fail("internal error: the arena plan overlaps live tensors");
  for (size_t r = 0; r < tensor_requests; ++r)
    draft->tensors[request_tensor[r]].offset = plan.offsets[r];
  for (DraftTensor& t : draft->tensors)
    if (t.storage == fb::Storage::Arena && t.alias_of >= 0)
      t.offset = draft->tensors[alias_root(*draft, static_cast<uint32_t>(t.alias_of))].offset;
  for (size_t r = tensor_requests; r < requests.size(); ++r)
    draft->steps[request_step[r - tensor_requests]].workspace_offset = plan.offsets[r];
  draft->arena_bytes = plan.arena_bytes;
  draft->arena_lower_bound = plan.lower_bound;
}

}  // namespace jetplan::converter
