#include "converter/src/precision/int8_saturate.h"

#include <cmath>
#include <set>
#include <utility>

#include "converter/src/precision/explicit_qdq.h"

namespace jetplan::converter {

std::string draft_graph_name(std::string name) {
  // Twins of twins too ("x:nhwc:nchw": the NCHW copy of x's NHWC twin).
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const std::string suffix : {":nhwc", ":nchw", ":ohwi"}) {
      if (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        name.resize(name.size() - suffix.size());
        stripped = true;
      }
    }
  }
  return name;
}

namespace {

// Whether a Pool step's output already lies in int8's range at scale s: max and average of an
// input in [-128 s_in, 127 s_in] stay in it (a convex combination, or zero padding), so
// s_in <= s suffices, where the input is Int8 or was clipped by a pair of its own.
bool within_range(const PlanDraft& d, const std::map<std::string, float>& scales,
                  const std::vector<bool>& int8, const DraftStep& s, float scale,
                  const std::set<std::string>& clipped) {
  if (s.op.family != fb::OpFamily::Pool || s.inputs.empty()) return false;
  const uint32_t x = s.inputs[0];
  const std::string name = draft_graph_name(d.tensors[x].name);
  const auto given = scales.find(name);
  const bool bounded = int8[x] || (given != scales.end() && clipped.count(name) != 0);
  return bounded && given != scales.end() && given->second <= scale;
}

bool positive_finite(float v) { return v > 0.f && std::isfinite(v); }

}  // namespace

size_t saturate_explicit(PlanDraft* draft, const std::map<std::string, float>& scales,
                         const std::vector<bool>& int8) {
  PlanDraft& d = *draft;
  std::vector<DraftStep> steps = std::move(d.steps);
  d.steps.clear();
  std::set<std::string> clipped;
  size_t added = 0;
  for (DraftStep& s : steps) {
    std::vector<DraftStep> after;
    const bool layout_move =
        s.op.family == fb::OpFamily::Transpose || s.op.family == fb::OpFamily::Copy;
    for (uint32_t& o : s.outputs) {
      const std::string name = draft_graph_name(d.tensors[o].name);
      const auto given = scales.find(name);
      if (given == scales.end() || !positive_finite(given->second) ||
          d.tensors[o].dtype != DataType::kFloat32 || layout_move ||
          !clipped.insert(name).second)
        continue;
      const float lo = -128.f * given->second, hi = 127.f * given->second;
      if (within_range(d, scales, int8, s, given->second, clipped)) continue;
      if (s.outputs.size() == 1 && fuse_int8_range_clip(&s.op, lo, hi)) continue;
      DraftTensor pre = d.tensors[o];
      pre.name += ":unclipped";
      pre.storage = fb::Storage::Arena;
      pre.binding = -1;
      pre.output_binding = false;
      d.tensors.push_back(std::move(pre));
      DraftStep clip;
      clip.name = d.tensors[o].name + ":int8_range";
      clip.op.resolved = true;
      clip.op.family = fb::OpFamily::Activation;
      clip.op.act = {fb::ActivationKind::Clip, lo, hi};
      clip.inputs = {static_cast<uint32_t>(d.tensors.size() - 1)};
      clip.outputs = {o};
      o = clip.inputs[0];
      after.push_back(std::move(clip));
      ++added;
    }
    d.steps.push_back(std::move(s));
    for (DraftStep& a : after) d.steps.push_back(std::move(a));
  }
  return added;
}

}  // namespace jetplan::converter
