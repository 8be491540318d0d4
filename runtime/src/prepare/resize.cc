// Resize: nearest, linear or cubic resampling of every dim by ONNX's coordinate modes; nearest
// and linear also of Int8 (an INT8 plan's, in the input's scale).
#include <cinttypes>
#include <cmath>

#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

// A per-dim list of doubles: `rank` finite entries (absent: `fallback` in every dim).
Status read_doubles(const PreparedStep& s, const char* what,
                    const flatbuffers::Vector<double>* list, int32_t rank, double fallback,
                    bool positive, double* out) {
  for (int32_t d = 0; d < kernels::kMaxRank; ++d) out[d] = fallback;
  if (list == nullptr) return JP_OK;
  if (list->size() != static_cast<uint32_t>(rank) || !aligned(list)) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': %s has %u entries, expected %d (or is misaligned)", s.name, what,
                list->size(), rank);
  }
  for (int32_t d = 0; d < rank; ++d) {
    const double v = list->Get(static_cast<uint32_t>(d));
    if (!std::isfinite(v) || (positive && !(v > 0))) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s[%d] = %g is out of range", s.name, what, d,
                  v);
    }
    out[d] = v;
  }
  return JP_OK;
}

// The output extent is ONNX's for the scale: out / in when sizes were given, or floor(in *
// scale) in float (ONNX shape inference) when scales were (the kernel reads any extent safely;
// this catches a plan that is not what the converter wrote). A Resize writing its part of a
// Concat along dim y_axis in place has the Concat's y: its result has y's dims but along
// y_axis, where it has x's (a dim it does not resize), placed from y_axis_offset.
Status check_extents(const PreparedStep& s, const fb::ResizeParams& p, const TensorInfo& x,
                     const TensorInfo& y, kernels::ResizeParams* k) {
  const int32_t axis = p.y_axis();
  if (axis < -1 || axis >= x.rank || (axis < 0 && p.y_axis_offset() != 0))
    return invalid(s, "y_axis is out of range, or y_axis_offset is set without it");
  for (int32_t d = 0; d < x.rank; ++d) {
    k->in_dims[d] = x.dims[d];
    k->out_dims[d] = d == axis ? x.dims[d] : y.dims[d];
    if (d == axis) {
      const int64_t offset = p.y_axis_offset();
      if (k->scale[d] != 1.0 || offset < 0 || offset > y.dims[d] - x.dims[d])
        return invalid(s, "y_axis is resized, or y_axis_offset places the result outside y");
      continue;
    }
    const double in = static_cast<double>(x.dims[d]), out = static_cast<double>(y.dims[d]);
    const float product = static_cast<float>(x.dims[d]) * static_cast<float>(k->scale[d]);
    if (out / in != k->scale[d] && out != std::floor(static_cast<double>(product))) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': output '%s' dim %d is %" PRId64 ", which scale %g does not give",
                  s.name, y.name, d, y.dims[d], k->scale[d]);
    }
  }
  if (axis >= 0) {
    int64_t inner = 1;  // y's elements after y_axis
    for (int32_t d = axis + 1; d < y.rank; ++d) inner *= y.dims[d];
    k->y_block = x.dims[axis] * inner;
    k->y_block_stride = y.dims[axis] * inner;
    k->y_offset = p.y_axis_offset() * inner;
  }
  return JP_OK;
}

void run_resize_int8_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::resize_int8(s.params.resize, static_cast<const int8_t*>(in(s, tensors, 0)),
                            static_cast<int8_t*>(out(s, tensors)));
}

// Int8: an INT8 plan's nearest or linear Resize between INT8 steps (y in x's scale).
Status check_int8(const PreparedStep& s, const fb::ResizeParams& p, const TensorInfo& y) {
  if (y.dtype != fb::DType::Int8 ||
      (p.mode() != fb::ResizeMode::Nearest && p.mode() != fb::ResizeMode::Linear) ||
      p.coord() == fb::ResizeCoord::TfCropAndResize) {
    return fail(JP_ERROR_UNSUPPORTED,
                "step '%s': an Int8 Resize must be nearest or linear, not tf_crop_and_resize, "
                "with an Int8 output",
                s.name);
  }
  return JP_OK;
}

}  // namespace

Status prepare_resize(const jp_plan& plan, const fb::ResizeParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Resize", 1, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  const bool int8 = x.dtype == fb::DType::Int8;
  if (int8)
    JP_RETURN_IF_ERROR(check_int8(*s, p, y));
  else
    JP_RETURN_IF_ERROR(check_all_float32(plan, *s));
  if (x.rank < 1 || x.rank != y.rank) return invalid(*s, "input and output need one rank >= 1");
  const int mode = static_cast<int>(p.mode()), coord = static_cast<int>(p.coord());
  const int nearest = static_cast<int>(p.nearest());
  if (mode >= kernels::kResizeModeCount || coord >= kernels::kResizeCoordCount ||
      nearest >= kernels::kResizeNearestCount) {
    return fail(JP_ERROR_UNSUPPORTED,
                "step '%s': unknown resize mode %d, coordinate mode %d "
                "or nearest mode %d",
                s->name, mode, coord, nearest);
  }
  kernels::ResizeParams& k = fresh_params(&s->params.resize);
  if (p.scale() == nullptr || p.resized_length() == nullptr) {
    return invalid(*s, "scale and resized_length are required");
  }
  JP_RETURN_IF_ERROR(read_doubles(*s, "scale", p.scale(), x.rank, 1.0, true, k.scale));
  JP_RETURN_IF_ERROR(
      read_doubles(*s, "resized_length", p.resized_length(), x.rank, 0.0, true, k.resized_length));
  JP_RETURN_IF_ERROR(read_doubles(*s, "roi_start", p.roi_start(), x.rank, 0.0, false, k.roi_start));
  JP_RETURN_IF_ERROR(read_doubles(*s, "roi_end", p.roi_end(), x.rank, 1.0, false, k.roi_end));
  if (!std::isfinite(p.cubic_coeff_a()) || !std::isfinite(p.extrapolation_value())) {
    return invalid(*s, "cubic_coeff_a and extrapolation_value must be finite");
  }
  k.cubic_coeff_a = p.cubic_coeff_a();
  k.exclude_outside = p.exclude_outside();
  k.extrapolation_value = p.extrapolation_value();
  k.mode = static_cast<kernels::ResizeMode>(mode);
  k.coord = static_cast<kernels::ResizeCoord>(coord);
  k.nearest = static_cast<kernels::ResizeNearest>(nearest);
  k.rank = x.rank;
  if (int8) s->run_cpu = run_resize_int8_cpu;
  return check_extents(*s, p, x, y, &k);
}

void run_resize_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::resize(s.params.resize, in_f32(s, tensors, 0), out_f32(s, tensors));
}

}  // namespace jetplan::rt
