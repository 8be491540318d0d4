// gpu_precision (gpu_lower.h): a GPU plan's float32 tensors become float16 inside the plan, with
// the Casts at its bindings, the output-cast epilogue, and the Float32 that quantization steps read.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "converter/src/lower/gpu_lower.h"
#include "kernels/cpu/half.h"

namespace jetplan::converter {

namespace {

// The output-cast epilogue: a step of such a family that alone produces float32 binding `t`
// (which no step reads) writes it itself, FP16 in and FP32 out, instead of an FP16 twin and a Cast.
bool producer_writes_output_cast(const PlanDraft& draft, uint32_t t) {
  const DraftStep* producer = nullptr;
  for (const DraftStep& s : draft.steps) {
    if (std::find(s.inputs.begin(), s.inputs.end(), t) != s.inputs.end()) return false;
    if (std::find(s.outputs.begin(), s.outputs.end(), t) == s.outputs.end()) continue;
    if (producer != nullptr) return false;
    producer = &s;
  }
  return producer != nullptr && producer->outputs.size() == 1 &&
         writes_output_cast(producer->op.family);
}

// A float32 input binding `t` read by one step only, a Transpose (the layout transpose of an
// image input), is read by it as is: the transpose rounds to FP16 as it moves (jp_transpose_f2h:
// the input cast fused into it, one pass over the input instead of a Cast and a Transpose), or
// moves Float32 where its output stays Float32 (an INT8 plan's quantize step reads it).
bool input_read_as_is(const PlanDraft& draft, uint32_t t) {
  const DraftStep* reader = nullptr;
  for (const DraftStep& s : draft.steps) {
    const auto n = std::count(s.inputs.begin(), s.inputs.end(), t);
    if (n == 0) continue;
    if (reader != nullptr || n > 1) return false;
    reader = &s;
  }
  return reader != nullptr && reader->op.family == fb::OpFamily::Transpose &&
         reader->inputs.size() == 1 && reader->outputs.size() == 1 &&
         (draft.tensors[reader->outputs[0]].dtype == DataType::kFloat16 ||
          draft.tensors[reader->outputs[0]].keep_float32);
}

// A new float16 arena tensor of float32 tensor b's shape and layout (":f16").
uint32_t f16_twin(PlanDraft* draft, uint32_t b) {
  DraftTensor n;
  n.name = draft->tensors[b].name + ":f16";
  n.shape = draft->tensors[b].shape;
  n.dtype = DataType::kFloat16;
  n.layout = draft->tensors[b].layout;
  n.size_bytes = draft->tensors[b].size_bytes / 2;
  draft->tensors.push_back(std::move(n));
  return static_cast<uint32_t>(draft->tensors.size() - 1);
}

}  // namespace

bool writes_output_cast(fb::OpFamily family) {
  return family == fb::OpFamily::Gemm || family == fb::OpFamily::Conv ||
         family == fb::OpFamily::Transpose;
}

void gpu_output_cast_fallback(PlanDraft* draft, size_t step) {
  const uint32_t b = draft->steps[step].outputs[0];
  const uint32_t h = f16_twin(draft, b);
  draft->steps[step].outputs[0] = h;
  std::string name = draft->tensors[b].name;
  for (const DraftBinding& o : draft->outputs)
    if (o.tensor == b) name = o.name;
  draft->steps.push_back(make_step(name + ":to_f32", fb::OpFamily::Cast, h, b));
}

namespace {

// Whether step s reads its input `slot` as Float32 whatever the plan's precision: the scale of
// QuantizeLinear and DequantizeLinear, and the three of QLinearMatMul and QLinearConv (their
// kernels take float32 scales); NonMaxSuppression's boxes and scores (its kernel decides IoU
// ties as the twin does, on the float32 coordinates); GridSample's grid (a coordinate of 500 in
// float16 is off by up to a quarter pixel); RoiAlign's and MaxRoiPool's boxes (the same).
bool reads_float32(const DraftStep& s, size_t slot) {
  const fb::OpFamily f = s.op.family;
  if (f == fb::OpFamily::Nms) return slot <= 1;
  if (f == fb::OpFamily::GridSample || f == fb::OpFamily::RoiPool) return slot == 1;
  if (f == fb::OpFamily::QLinearMatMul || f == fb::OpFamily::QLinearConv)
    return slot == 1 || slot == 4 || slot == 6;
  return (f == fb::OpFamily::Quantize || f == fb::OpFamily::Dequantize) && slot == 1;
}

// Per tensor, whether it is written as Float32 whatever the plan's precision: the scale
// DynamicQuantizeLinear computes (its kernels write it in Float32, as DequantizeLinear reads it).
std::vector<bool> written_float32(const PlanDraft& draft) {
  std::vector<bool> f32(draft.tensors.size(), false);
  for (const DraftStep& s : draft.steps)
    if (s.op.family == fb::OpFamily::DynamicQuantize && s.outputs.size() == 3)
      f32[s.outputs[1]] = true;
  return f32;
}

}  // namespace

void gpu_precision(PlanDraft* draft) {
  // Weights read as Float32 stay so, and so do the tensors written so.
  for (const DraftStep& s : draft->steps)
    for (size_t k = 0; k < s.inputs.size(); ++k)
      if (reads_float32(s, k) && draft->tensors[s.inputs[k]].storage == fb::Storage::Weight)
        draft->tensors[s.inputs[k]].keep_float32 = true;
  const std::vector<bool> f32_out = written_float32(*draft);
  for (uint32_t t = 0; t < f32_out.size(); ++t)
    if (f32_out[t]) draft->tensors[t].keep_float32 = true;
  for (DraftTensor& t : draft->tensors) {
    if (t.dtype != DataType::kFloat32 || t.storage == fb::Storage::Binding || t.keep_float32)
      continue;
    t.dtype = DataType::kFloat16;
    t.size_bytes /= 2;
    if (t.storage != fb::Storage::Weight) continue;
    const std::vector<uint8_t>& src = *t.data;
    std::vector<uint8_t>& dst = draft->owned_data.emplace_back(src.size() / 2);
    for (size_t i = 0; i + 4 <= src.size(); i += 4) {
      float f;
      std::memcpy(&f, &src[i], 4);
      // A finite weight past the half range saturates to +-65504 instead of becoming infinite:
      // masks written as (1 - m) * float32_min must stay 0 where m = 1, not 0 * -inf = NaN.
      if (std::isfinite(f)) f = std::fmin(65504.f, std::fmax(-65504.f, f));
      const uint16_t h = kernels::half_from_float(f);
      std::memcpy(&dst[i / 2], &h, 2);
    }
    t.data = &dst;
  }
  auto twin = [&](uint32_t b) { return f16_twin(draft, b); };
  std::vector<DraftStep> casts_in;
  for (const DraftBinding& b : draft->inputs) {
    if (draft->tensors[b.tensor].dtype != DataType::kFloat32) continue;
    if (input_read_as_is(*draft, b.tensor)) continue;
    // Every reader takes the Float16 twin but those reading it as Float32: a scale, and the x
    // of a QuantizeLinear or DynamicQuantizeLinear (their Float32 kernels quantize the input as
    // given, as the CPU does).
    const auto as_given = [](const DraftStep& s, size_t k) {
      return reads_float32(s, k) || (k == 0 && (s.op.family == fb::OpFamily::Quantize ||
                                                s.op.family == fb::OpFamily::DynamicQuantize));
    };
    bool narrowed = false;
    for (const DraftStep& s : draft->steps)
      for (size_t k = 0; k < s.inputs.size(); ++k)
        narrowed = narrowed || (s.inputs[k] == b.tensor && !as_given(s, k));
    if (!narrowed) continue;
    const uint32_t h = twin(b.tensor);
    for (DraftStep& s : draft->steps)
      for (size_t k = 0; k < s.inputs.size(); ++k)
        if (s.inputs[k] == b.tensor && !as_given(s, k)) s.inputs[k] = h;
    DraftStep c = make_step(b.name + ":to_f16", fb::OpFamily::Cast, b.tensor, h);
    casts_in.push_back(std::move(c));
  }
  draft->steps.insert(draft->steps.begin(), casts_in.begin(), casts_in.end());
  for (const DraftBinding& b : draft->outputs) {
    if (draft->tensors[b.tensor].dtype != DataType::kFloat32) continue;
    if (producer_writes_output_cast(*draft, b.tensor) || f32_out[b.tensor])
      continue;
    const uint32_t h = twin(b.tensor);
    for (DraftStep& s : draft->steps)
      for (auto* list : {&s.inputs, &s.outputs})
        for (uint32_t& i : *list)
          if (i == b.tensor) i = h;
    draft->steps.push_back(make_step(b.name + ":to_f32", fb::OpFamily::Cast, h, b.tensor));
  }
  // A scale computed in the plan (DynamicQuantizeLinear written out as ops) is Float16 now: a
  // Cast back to Float32 in front of the step that reads it so.
  for (size_t i = 0; i < draft->steps.size(); ++i) {
    for (size_t k = 0; k < draft->steps[i].inputs.size(); ++k) {
      const uint32_t t = draft->steps[i].inputs[k];
      if (!reads_float32(draft->steps[i], k) || draft->tensors[t].dtype != DataType::kFloat16)
        continue;
      DraftTensor wide;
      wide.name = draft->tensors[t].name + ":f32";
      wide.shape = draft->tensors[t].shape;
      wide.dtype = DataType::kFloat32;
      wide.layout = draft->tensors[t].layout;
      wide.size_bytes = draft->tensors[t].size_bytes * 2;
      wide.keep_float32 = true;
      draft->tensors.push_back(std::move(wide));
      const auto w = static_cast<uint32_t>(draft->tensors.size() - 1);
      draft->steps[i].inputs[k] = w;
      draft->steps.insert(draft->steps.begin() + static_cast<std::ptrdiff_t>(i),
                          make_step(draft->tensors[w].name, fb::OpFamily::Cast, t, w));
      ++i;  // the reader moved one on
    }
  }
  // A model's Cast between float32 and float16 now joins two float16 tensors: a byte Copy.
  for (DraftStep& s : draft->steps)
    if (s.op.family == fb::OpFamily::Cast && s.inputs.size() == 1 && s.outputs.size() == 1 &&
        draft->tensors[s.inputs[0]].dtype == draft->tensors[s.outputs[0]].dtype)
      s.op.family = fb::OpFamily::Copy;
}

}  // namespace jetplan::converter
