// The data movement of GPU plans placed (gpu_lower.h): a model's head Transposes composed with
// the layout's, Concats written in place by their producers, output Casts fused into the
// Transposes that fill their inputs.
#include <numeric>
#include <vector>

#include "converter/src/lower/gpu_lower.h"

namespace jetplan::converter {

namespace {

// Readers and writers of each tensor of a draft (a tensor written in place by several steps has
// several writers).
struct Uses {
  std::vector<int> readers, reader;        // how many steps read it; the last one
  std::vector<std::vector<int>> writers;  // the steps that write it, in order
  explicit Uses(const PlanDraft& d)
      : readers(d.tensors.size(), 0), reader(d.tensors.size(), -1), writers(d.tensors.size()) {
    for (size_t s = 0; s < d.steps.size(); ++s) {
      for (uint32_t i : d.steps[s].inputs) {
        ++readers[i];
        reader[i] = static_cast<int>(s);
      }
      for (uint32_t o : d.steps[s].outputs) writers[o].push_back(static_cast<int>(s));
    }
  }
};

// An arena tensor with bytes of its own.
bool own_arena(const DraftTensor& t) {
  return t.storage == fb::Storage::Arena && t.alias_of < 0;
}

// The steps marked in `drop` go.
void drop_steps(PlanDraft* draft, const std::vector<bool>& drop) {
  std::vector<DraftStep> kept;
  for (size_t s = 0; s < draft->steps.size(); ++s)
    if (!drop[s]) kept.push_back(std::move(draft->steps[s]));
  draft->steps = std::move(kept);
}

}  // namespace

void concat_in_place(PlanDraft* draft) {
  const Uses uses(*draft);
  // The one step that writes `t` (its only output), an arena tensor of its own read by one step,
  // if it is of `family`.
  auto sole_writer = [&](uint32_t t, fb::OpFamily family) -> DraftStep* {
    if (!own_arena(draft->tensors[t]) || uses.readers[t] != 1 || uses.writers[t].size() != 1)
      return nullptr;
    DraftStep& s = draft->steps[static_cast<size_t>(uses.writers[t][0])];
    return s.op.family == family && s.outputs.size() == 1 ? &s : nullptr;
  };
  // Where an input of a Concat along `axis` comes from: a Conv or an (upsampling)
  // ConvTranspose writing NHWC channels, a Resize
  // that does not resize that axis, or a Transpose whose dense result is the input, written by
  // it or turned into it by one Copy (a reshape: the same bytes) that goes with the Concat.
  struct Producer {
    DraftStep* step = nullptr;
    int copy = -1;  // the Copy step between, if any
  };
  auto producer = [&](uint32_t t, bool nhwc_channels, int64_t axis) -> Producer {
    if (nhwc_channels && draft->tensors[t].layout == fb::Layout::NHWC) {
      if (DraftStep* conv = sole_writer(t, fb::OpFamily::Conv)) return {conv, -1};
      if (DraftStep* up = sole_writer(t, fb::OpFamily::ConvTranspose)) return {up, -1};
    }
    if (DraftStep* rs = sole_writer(t, fb::OpFamily::Resize)) {
      const std::vector<double>& scale = rs->op.resize.scale;
      const bool kept = static_cast<size_t>(axis) < scale.size() &&
                        scale[static_cast<size_t>(axis)] == 1.0 &&
                        scale.size() == draft->tensors[t].shape.size();
      return kept && rs->op.resize.y_axis < 0 && rs->inputs.size() == 1 ? Producer{rs, -1}
                                                                          : Producer{};
    }
    if (DraftStep* tr = sole_writer(t, fb::OpFamily::Transpose))
      return tr->op.y_block == 0 && tr->inputs.size() == 1 ? Producer{tr, -1} : Producer{};
    DraftStep* copy = sole_writer(t, fb::OpFamily::Copy);
    if (copy == nullptr || copy->inputs.size() != 1) return {};
    const uint32_t before = copy->inputs[0];
    if (draft->tensors[before].size_bytes != draft->tensors[t].size_bytes) return {};
    DraftStep* tr = sole_writer(before, fb::OpFamily::Transpose);
    if (tr == nullptr || tr->op.y_block != 0 || tr->inputs.size() != 1) return {};
    return {tr, uses.writers[t][0]};
  };
  std::vector<bool> drop(draft->steps.size(), false);
  // Copies of the inputs that no step writes in place, each put where its Concat was (an
  // identity Transpose writing its block of y): steps[c]'s go at inserts[c].
  std::vector<std::vector<DraftStep>> inserts(draft->steps.size());
  for (size_t c = 0; c < draft->steps.size(); ++c) {
    DraftStep& concat = draft->steps[c];
    if (concat.op.family != fb::OpFamily::Concat || concat.outputs.size() != 1 ||
        concat.inputs.empty())
      continue;
    const uint32_t y = concat.outputs[0];
    const DraftTensor& out = draft->tensors[y];
    const int64_t axis = concat.op.axis;
    // The Concat's output: an arena tensor of its own, or an output binding where only
    // Transposes write it.
    const bool binding = out.storage == fb::Storage::Binding && out.output_binding &&
                         out.binding >= 0 &&
                         draft->outputs[static_cast<size_t>(out.binding)].count_tensor < 0;
    if (!(own_arena(out) || binding) || axis < 0 ||
        axis >= static_cast<int64_t>(out.shape.size()))
      continue;
    const bool nhwc_channels = out.layout == fb::Layout::NHWC && axis == 3 && !binding;
    // Each input once (a tensor read twice by the Concat has two readers: never placed).
    std::vector<Producer> from;
    size_t placed = 0;
    for (uint32_t i : concat.inputs) {
      from.push_back(producer(i, nhwc_channels, axis));
      placed += from.back().step != nullptr ? 1 : 0;
    }
    // Into an output binding only where every input is placed (a copy's step would be the only
    // one of its kind there); else where at least one is: the inputs that are not (read by
    // another step too, or written by a step that cannot place its result) are copied into
    // their blocks, as the Concat would have.
    if (placed == 0 || (binding && placed != from.size())) continue;
    int64_t inner = 1;  // elements after the axis
    for (size_t d = static_cast<size_t>(axis) + 1; d < out.shape.size(); ++d) inner *= out.shape[d];
    const int64_t extent_y = out.shape[static_cast<size_t>(axis)];
    int64_t offset = 0;
    for (size_t k = 0; k < from.size(); ++k) {
      const uint32_t in = concat.inputs[k];
      const int64_t extent = draft->tensors[in].shape[static_cast<size_t>(axis)];
      DraftStep* s = from[k].step;
      if (s == nullptr) {
        DraftStep copy = make_step(draft->tensors[in].name + ":into_" + concat.name,
                                   fb::OpFamily::Transpose, in, y);
        copy.op.perm.resize(draft->tensors[in].shape.size());
        std::iota(copy.op.perm.begin(), copy.op.perm.end(), 0);
        s = &inserts[c].emplace_back(std::move(copy));
      } else {
        s->outputs[0] = y;
        s->name += "+" + concat.name;
      }
      if (s->op.family == fb::OpFamily::Conv || s->op.family == fb::OpFamily::ConvTranspose) {
        s->op.y_channel_offset = offset;
      } else if (s->op.family == fb::OpFamily::Resize) {
        s->op.resize.y_axis = static_cast<int32_t>(axis);
        s->op.resize.y_axis_offset = offset;
      } else {
        s->op.y_block = extent * inner;
        s->op.y_block_stride = extent_y * inner;
        s->op.y_offset = offset * inner;
      }
      if (from[k].copy >= 0) drop[static_cast<size_t>(from[k].copy)] = true;
      offset += extent;
    }
    drop[c] = true;
  }
  std::vector<DraftStep> kept;
  for (size_t s = 0; s < draft->steps.size(); ++s) {
    for (DraftStep& copy : inserts[s]) kept.push_back(std::move(copy));
    if (!drop[s]) kept.push_back(std::move(draft->steps[s]));
  }
  draft->steps = std::move(kept);
}

void transposes_write_output_casts(PlanDraft* draft) {
  const Uses uses(*draft);
  std::vector<bool> drop(draft->steps.size(), false);
  for (size_t c = 0; c < draft->steps.size(); ++c) {
    const DraftStep& cast = draft->steps[c];
    if (cast.op.family != fb::OpFamily::Cast || cast.inputs.size() != 1 ||
        cast.outputs.size() != 1)
      continue;
    const uint32_t h = cast.inputs[0], f = cast.outputs[0];
    if (draft->tensors[h].dtype != DataType::kFloat16 ||
        draft->tensors[f].dtype != DataType::kFloat32 || !own_arena(draft->tensors[h]) ||
        uses.readers[h] != 1 || uses.writers[h].empty() ||
        draft->tensors[f].shape != draft->tensors[h].shape)
      continue;
    bool all = true;
    for (int w : uses.writers[h]) {
      const DraftStep& s = draft->steps[static_cast<size_t>(w)];
      all = all && s.op.family == fb::OpFamily::Transpose && s.outputs.size() == 1 &&
            static_cast<size_t>(w) < c;
    }
    if (!all) continue;
    for (int w : uses.writers[h]) {
      DraftStep& s = draft->steps[static_cast<size_t>(w)];
      s.outputs[0] = f;
      s.name += "+" + cast.name;
    }
    drop[c] = true;
  }
  drop_steps(draft, drop);
}

void compose_layout_transposes(PlanDraft* draft) {
  const Uses uses(*draft);
  auto one_to_one = [&](const DraftStep& s, fb::OpFamily family) {
    return s.op.family == family && s.inputs.size() == 1 && s.outputs.size() == 1;
  };
  // The single reader of arena tensor i, if it is a one-in one-out step of `family`.
  auto sole_reader = [&](uint32_t i, fb::OpFamily family) -> DraftStep* {
    if (!own_arena(draft->tensors[i]) || uses.readers[i] != 1) return nullptr;
    DraftStep& s = draft->steps[static_cast<size_t>(uses.reader[i])];
    return one_to_one(s, family) ? &s : nullptr;
  };
  std::vector<bool> drop(draft->steps.size(), false);
  for (size_t s1 = 0; s1 < draft->steps.size(); ++s1) {
    DraftStep& t1 = draft->steps[s1];
    if (!one_to_one(t1, fb::OpFamily::Transpose)) continue;
    const uint32_t x = t1.inputs[0], o1 = t1.outputs[0];
    const DraftTensor& tx = draft->tensors[x];
    if (tx.layout != fb::Layout::NHWC || t1.op.perm != channels_last_perm(tx.shape.size(), false))
      continue;
    DraftStep* r = sole_reader(o1, fb::OpFamily::Copy);
    if (r == nullptr) continue;
    const uint32_t o2 = r->outputs[0];
    DraftStep* t2 = sole_reader(o2, fb::OpFamily::Transpose);
    if (t2 == nullptr || draft->tensors[o2].dtype != tx.dtype) continue;
    // The reshape must split one axis `a` of o1 into k >= 2 axes and keep every other one.
    const Shape& y1 = draft->tensors[o1].shape;
    const Shape& y2 = draft->tensors[o2].shape;
    const size_t r1 = y1.size(), r2 = y2.size();
    if (r2 <= r1) continue;
    const size_t k = r2 - r1 + 1;
    size_t a = 0;
    while (a < r1 && y1[a] == y2[a]) ++a;
    if (a == r1) continue;
    bool split = true;
    for (size_t i = a + 1; i < r1; ++i) split = split && y1[i] == y2[i + k - 1];
    int64_t parts = 1;
    for (size_t t = 0; t < k; ++t) parts *= y2[a + t];
    if (!split || parts != y1[a]) continue;
    // x seen with axis p1[a] split the same way; where each axis of o2 lives in it.
    const std::vector<int32_t>& p1 = t1.op.perm;
    const size_t xa = static_cast<size_t>(p1[a]);
    Shape xs(tx.shape.begin(), tx.shape.begin() + static_cast<std::ptrdiff_t>(xa));
    xs.insert(xs.end(), y2.begin() + static_cast<std::ptrdiff_t>(a),
              y2.begin() + static_cast<std::ptrdiff_t>(a + k));
    xs.insert(xs.end(), tx.shape.begin() + static_cast<std::ptrdiff_t>(xa + 1), tx.shape.end());
    std::vector<int32_t> at(r2);
    for (size_t j = 0; j < r2; ++j) {
      if (j >= a && j < a + k) {
        at[j] = static_cast<int32_t>(xa + (j - a));
      } else {
        const size_t src = static_cast<size_t>(p1[j < a ? j : j - k + 1]);
        at[j] = static_cast<int32_t>(src < xa ? src : src + k - 1);
      }
    }
    std::vector<int32_t> q(r2);
    for (size_t j = 0; j < r2; ++j) q[j] = at[static_cast<size_t>(t2->op.perm[j])];
    // The reshape now reads x (a view once alias_views runs), the model's Transpose the split
    // view; the Transpose into channels first goes.
    DraftTensor& split_view = draft->tensors[o2];
    split_view.shape = xs;
    split_view.name += ":from_nhwc";
    r->inputs[0] = x;
    t2->op.perm = q;
    t2->name += "+" + t1.name;
    drop[s1] = true;
  }
  drop_steps(draft, drop);
}


void place_gpu_moves(PlanDraft* draft) {
  compose_layout_transposes(draft);
  concat_in_place(draft);
  transposes_write_output_casts(draft);
}

}  // namespace jetplan::converter
