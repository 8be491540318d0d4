// Load-time preparation of the nn families (see families_nn.inc): checks a step's arity, dtypes
// and shapes against its params (a plan is untrusted: a kernel must never index past a tensor,
// whatever the plan says), then resolves the kernel parameter struct run passes to the kernel.
#include <cinttypes>
#include <cmath>

#include "kernels/kernels.h"
#include "runtime/src/op_families.h"

namespace jetplan::rt {
namespace {

constexpr int64_t kMaxWindow = int64_t{1} << 31;

const TensorInfo& input_at(const jp_plan& plan, const PreparedStep& s, uint32_t i) {
  return plan.tensors[s.inputs->Get(i)];
}

const TensorInfo& output_at(const jp_plan& plan, const PreparedStep& s, uint32_t i) {
  return plan.tensors[s.outputs->Get(i)];
}

Status invalid(const PreparedStep& s, const char* what) {
  return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s", s.name, what);
}

Status check_arity(const PreparedStep& s, const char* family, uint32_t inputs, uint32_t outputs) {
  if (s.inputs->size() != inputs || s.outputs->size() != outputs) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s' (%s) has %u inputs and %u outputs, expected %u and %u", s.name, family,
                s.inputs->size(), s.outputs->size(), inputs, outputs);
  }
  return JP_OK;
}

// The CPU kernels compute in float32; their index outputs are int64.
Status check_dtype(const PreparedStep& s, const TensorInfo& t, fb::DType want) {
  if (t.dtype == want) return JP_OK;
  return fail(want == fb::DType::Float32 ? JP_ERROR_UNSUPPORTED : JP_ERROR_INVALID_PLAN,
              "step '%s': tensor '%s' is %s; the CPU backend needs %s here", s.name, t.name,
              fb::EnumNameDType(t.dtype), fb::EnumNameDType(want));
}

// Every input and output shares one float dtype (the families without index tensors): Float32,
// or Float16 in CUDA plans (check_float32).
Status check_all_float32(const jp_plan& plan, const PreparedStep& s) {
  JP_RETURN_IF_ERROR(check_float32(plan, s));
  for (uint32_t i = 1; i < s.outputs->size(); ++i) {
    JP_RETURN_IF_ERROR(check_dtype(s, output_at(plan, s, i), output_at(plan, s, 0).dtype));
  }
  return JP_OK;
}

bool same_shape(const TensorInfo& a, const TensorInfo& b) {
  if (a.rank != b.rank) return false;
  for (int32_t d = 0; d < a.rank; ++d) {
    if (a.dims[d] != b.dims[d]) return false;
  }
  return true;
}

// axis in [-rank, rank) -> [0, rank), or -1.
int32_t normalize_axis(int32_t axis, int32_t rank) {
  const int32_t a = axis < 0 ? axis + rank : axis;
  return a >= 0 && a < rank ? a : -1;
}

// x viewed as [outer, dims[axis], inner].
void split_at(const TensorInfo& x, int32_t axis, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int32_t d = 0; d < axis; ++d) *outer *= x.dims[d];
  for (int32_t d = axis + 1; d < x.rank; ++d) *inner *= x.dims[d];
}

Status to_activation(const PreparedStep& s, const fb::Activation* in, kernels::Activation* out) {
  *out = kernels::Activation{};
  if (in == nullptr) return JP_OK;
  const int kind = static_cast<int>(in->kind());
  if (kind < 0 || kind >= kernels::kActivationKindCount) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown activation %d", s.name, kind);
  }
  out->kind = static_cast<kernels::ActivationKind>(kind);
  out->alpha = in->alpha();
  out->beta = in->beta();
  return JP_OK;
}

// The kernels that keep indices in their workspace (TopK, NMS) index tensors with them: the
// workspace must be large enough and share no byte with the step's own arena tensors, which
// the kernel writes while it still reads the indices.
Status check_workspace(const jp_plan& plan, const PreparedStep& s, int64_t need) {
  if (need < 0 || s.workspace_bytes < static_cast<uint64_t>(need)) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': workspace of %" PRIu64 " bytes, the kernel needs %" PRId64, s.name,
                s.workspace_bytes, need);
  }
  const uint64_t begin = s.workspace_offset, end = s.workspace_offset + s.workspace_bytes;
  for (const auto* list : {s.inputs, s.outputs}) {
    for (uint32_t i = 0; i < list->size(); ++i) {
      const TensorInfo& t = plan.tensors[list->Get(i)];
      if (t.storage == fb::Storage::Arena && t.offset < end && begin < t.offset + t.bytes) {
        return fail(JP_ERROR_INVALID_PLAN, "step '%s': its workspace overlaps tensor '%s'", s.name,
                    t.name);
      }
    }
  }
  return JP_OK;
}

bool finite(double v) { return std::isfinite(v); }

// The Verifier checks a vector's 4-byte length prefix only: 8-byte elements of a corrupt plan can
// sit misaligned, and reading them would be undefined behaviour.
template <typename T>
bool aligned(const flatbuffers::Vector<T>* list) {
  return reinterpret_cast<uintptr_t>(list->data()) % alignof(T) == 0;
}

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
    if (!finite(v) || (positive && !(v > 0))) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s[%d] = %g is out of range", s.name, what, d,
                  v);
    }
    out[d] = v;
  }
  return JP_OK;
}

// A spatial list: `rank` entries within [min_value, kMaxWindow] (absent: `fallback`).
Status read_spatial(const PreparedStep& s, const char* what,
                    const flatbuffers::Vector<int64_t>* list, int32_t rank, int64_t fallback,
                    int64_t min_value, int64_t* out) {
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) out[i] = i < rank ? fallback : 0;
  if (list == nullptr) return JP_OK;
  if (list->size() != static_cast<uint32_t>(rank) || !aligned(list)) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': %s has %u entries, expected %d (or is misaligned)", s.name, what,
                list->size(), rank);
  }
  for (int32_t i = 0; i < rank; ++i) {
    const int64_t v = list->Get(static_cast<uint32_t>(i));
    if (v < min_value || v > kMaxWindow) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s[%d] = %" PRId64 " is out of range", s.name,
                  what, i, v);
    }
    out[i] = v;
  }
  return JP_OK;
}

// Instance, group norm and LRN: x [N, C, ...] and y of its shape.
Status read_channels(const jp_plan& plan, const PreparedStep& s, int64_t* batch, int64_t* channels,
                     int64_t* spatial) {
  const TensorInfo& x = input_at(plan, s, 0);
  if (x.rank < 2) return invalid(s, "input must be [N, C, ...]");
  if (!same_shape(x, output_at(plan, s, 0))) return invalid(s, "output shape differs from input");
  *batch = x.dims[0];
  *channels = x.dims[1];
  *spatial = static_cast<int64_t>(x.elements) / (x.dims[0] * x.dims[1]);
  return JP_OK;
}

Status check_elements(const PreparedStep& s, const TensorInfo& t, int64_t want, const char* what) {
  if (t.elements != static_cast<uint64_t>(want)) return invalid(s, what);
  return JP_OK;
}

}  // namespace

Status prepare_conv_transpose(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::ConvTransposeParams& p = *step.params_as_ConvTransposeParams();
  const uint32_t inputs = 2u + (p.has_bias() ? 1u : 0u) + (p.has_residual() ? 1u : 0u);
  JP_RETURN_IF_ERROR(check_arity(*s, "ConvTranspose", inputs, 1));
  JP_RETURN_IF_ERROR(check_all_float32(plan, *s));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& w = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (p.kernel() == nullptr || p.kernel()->size() < 1 ||
      p.kernel()->size() > static_cast<uint32_t>(kernels::kMaxSpatial)) {
    return invalid(*s, "kernel must have 1 to 3 spatial dims");
  }
  kernels::ConvTransposeParams& k = s->params.conv_transpose;
  k = kernels::ConvTransposeParams{};
  const int32_t rank = static_cast<int32_t>(p.kernel()->size());
  int64_t pad_end[kernels::kMaxSpatial], output_padding[kernels::kMaxSpatial];
  JP_RETURN_IF_ERROR(read_spatial(*s, "kernel", p.kernel(), rank, 1, 1, k.kernel));
  JP_RETURN_IF_ERROR(read_spatial(*s, "stride", p.stride(), rank, 1, 1, k.stride));
  JP_RETURN_IF_ERROR(read_spatial(*s, "dilation", p.dilation(), rank, 1, 1, k.dilation));
  // Pads may be negative: output_shape can ask for positions past the full convolution.
  JP_RETURN_IF_ERROR(
      read_spatial(*s, "pad_begin", p.pad_begin(), rank, 0, -kMaxWindow, k.pad_begin));
  JP_RETURN_IF_ERROR(read_spatial(*s, "pad_end", p.pad_end(), rank, 0, -kMaxWindow, pad_end));
  JP_RETURN_IF_ERROR(
      read_spatial(*s, "output_padding", p.output_padding(), rank, 0, 0, output_padding));
  if (x.rank != rank + 2 || y.rank != rank + 2 || w.rank != rank + 2) {
    return invalid(*s, "input, weight and output rank must be 2 + the kernel's spatial rank");
  }
  const int64_t channels = x.dims[1], groups = p.groups();
  if (groups < 1 || w.dims[0] != channels || channels % groups != 0) {
    return invalid(*s, "weight channels do not match the input channels and groups");
  }
  // w.dims[1] * groups <= w.dims[1] * w.dims[0] <= w.elements: no overflow.
  const int64_t out_channels = w.dims[1] * groups;
  if (y.dims[0] != x.dims[0] || y.dims[1] != out_channels) {
    return invalid(*s, "output batch or channels do not match");
  }
  k.spatial_rank = rank;
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) {
    k.in_size[i] = i < rank ? x.dims[2 + i] : 1;
    k.out_size[i] = i < rank ? y.dims[2 + i] : 1;
    if (i >= rank) {
      k.kernel[i] = k.stride[i] = k.dilation[i] = 1;
      k.pad_begin[i] = 0;
      continue;
    }
    if (w.dims[2 + i] != k.kernel[i]) return invalid(*s, "weight and kernel size differ");
    const __int128 expected =
        static_cast<__int128>(k.stride[i]) * (k.in_size[i] - 1) + output_padding[i] +
        static_cast<__int128>(k.dilation[i]) * (k.kernel[i] - 1) + 1 - k.pad_begin[i] - pad_end[i];
    if (expected != k.out_size[i]) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': output '%s' spatial dim %d is %" PRId64
                  ", the transposed window gives another size",
                  s->name, y.name, i, k.out_size[i]);
    }
  }
  uint32_t next = 2;
  if (p.has_bias()) {
    JP_RETURN_IF_ERROR(check_elements(*s, input_at(plan, *s, next++), out_channels,
                                      "bias must have one value per output channel"));
  }
  if (p.has_residual() && !same_shape(input_at(plan, *s, next), y)) {
    return invalid(*s, "residual must have the output's shape");
  }
  k.batch = x.dims[0];
  k.in_channels = channels;
  k.out_channels = out_channels;
  k.groups = groups;
  k.has_bias = p.has_bias();
  k.has_residual = p.has_residual();
  return to_activation(*s, p.activation(), &k.act);
}

Status prepare_resize(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::ResizeParams& p = *step.params_as_ResizeParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Resize", 1, 1));
  JP_RETURN_IF_ERROR(check_all_float32(plan, *s));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
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
  kernels::ResizeParams& k = s->params.resize;
  k = kernels::ResizeParams{};
  if (p.scale() == nullptr || p.resized_length() == nullptr) {
    return invalid(*s, "scale and resized_length are required");
  }
  JP_RETURN_IF_ERROR(read_doubles(*s, "scale", p.scale(), x.rank, 1.0, true, k.scale));
  JP_RETURN_IF_ERROR(
      read_doubles(*s, "resized_length", p.resized_length(), x.rank, 0.0, true, k.resized_length));
  JP_RETURN_IF_ERROR(read_doubles(*s, "roi_start", p.roi_start(), x.rank, 0.0, false, k.roi_start));
  JP_RETURN_IF_ERROR(read_doubles(*s, "roi_end", p.roi_end(), x.rank, 1.0, false, k.roi_end));
  if (!finite(p.cubic_coeff_a()) || !finite(p.extrapolation_value())) {
    return invalid(*s, "cubic_coeff_a and extrapolation_value must be finite");
  }
  k.mode = static_cast<kernels::ResizeMode>(mode);
  k.coord = static_cast<kernels::ResizeCoord>(coord);
  k.nearest = static_cast<kernels::ResizeNearest>(nearest);
  k.rank = x.rank;
  for (int32_t d = 0; d < x.rank; ++d) {
    k.in_dims[d] = x.dims[d];
    k.out_dims[d] = y.dims[d];
    // The output extent is ONNX's for the scale: out / in when sizes were given, or
    // floor(in * scale) in float (ONNX shape inference) when scales were (the kernel reads any
    // extent safely; this catches a plan that is not what the converter wrote).
    const double in = static_cast<double>(x.dims[d]), out = static_cast<double>(y.dims[d]);
    const float product = static_cast<float>(x.dims[d]) * static_cast<float>(k.scale[d]);
    if (out / in != k.scale[d] && out != std::floor(static_cast<double>(product))) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': output '%s' dim %d is %" PRId64 ", which scale %g does not give",
                  s->name, y.name, d, y.dims[d], k.scale[d]);
    }
  }
  k.cubic_coeff_a = p.cubic_coeff_a();
  k.exclude_outside = p.exclude_outside();
  k.extrapolation_value = p.extrapolation_value();
  return JP_OK;
}

Status prepare_reduce(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::ReduceParams& p = *step.params_as_ReduceParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Reduce", 1, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (x.dtype == fb::DType::Float64 && plan.backend == JP_BACKEND_CPU) {
    // Float64 reductions are the CPU backend's only (the CUDA kernels compute float32/float16).
    JP_RETURN_IF_ERROR(check_dtype(*s, y, fb::DType::Float64));
    s->run_cpu = run_reduce_f64_cpu;
  } else {
    JP_RETURN_IF_ERROR(check_all_float32(plan, *s));
  }
  const int op = static_cast<int>(p.op());
  if (op >= kernels::kReduceOpCount) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown reduce op %d", s->name, op);
  }
  uint32_t mask = 0;
  if (p.axes() != nullptr) {
    for (uint32_t i = 0; i < p.axes()->size(); ++i) {
      const int32_t a = p.axes()->Get(i);
      if (a < 0 || a >= x.rank || (mask >> a & 1u)) {
        return invalid(*s, "axes must be distinct dims of the input");
      }
      mask |= 1u << a;
    }
  }
  if (y.rank != x.rank) return invalid(*s, "output rank differs from the input's");
  for (int32_t d = 0; d < x.rank; ++d) {
    if (y.dims[d] != ((mask >> d & 1u) ? 1 : x.dims[d])) {
      return invalid(*s, "output is not the input with the reduced dims of extent 1");
    }
  }
  kernels::ReduceParams& k = s->params.reduce;
  k = kernels::ReduceParams{};
  k.op = static_cast<kernels::ReduceOp>(op);
  k.rank = x.rank;
  for (int32_t d = 0; d < x.rank; ++d) k.in_dims[d] = x.dims[d];
  k.axis_mask = mask;
  return JP_OK;
}

Status prepare_arg_reduce(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::ArgReduceParams& p = *step.params_as_ArgReduceParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "ArgReduce", 1, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_dtype(*s, x, fb::DType::Float32));
  JP_RETURN_IF_ERROR(check_dtype(*s, y, fb::DType::Int64));
  if (p.kind() != fb::ArgKind::Max && p.kind() != fb::ArgKind::Min) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown arg kind %d", s->name,
                static_cast<int>(p.kind()));
  }
  const int32_t axis = normalize_axis(p.axis(), x.rank);
  if (axis < 0) return invalid(*s, "axis is out of range");
  if (y.rank != x.rank) return invalid(*s, "output rank differs from the input's");
  for (int32_t d = 0; d < x.rank; ++d) {
    if (y.dims[d] != (d == axis ? 1 : x.dims[d])) {
      return invalid(*s, "output is not the input with the axis of extent 1");
    }
  }
  kernels::ArgReduceParams& k = s->params.arg_reduce;
  k = kernels::ArgReduceParams{};
  k.kind = p.kind() == fb::ArgKind::Max ? kernels::ArgKind::kMax : kernels::ArgKind::kMin;
  k.select_last_index = p.select_last_index();
  split_at(x, axis, &k.outer, &k.inner);
  k.axis = x.dims[axis];
  return JP_OK;
}

Status prepare_top_k(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::TopKParams& p = *step.params_as_TopKParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "TopK", 1, 2));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& values = output_at(plan, *s, 0);
  const TensorInfo& indices = output_at(plan, *s, 1);
  JP_RETURN_IF_ERROR(check_dtype(*s, x, fb::DType::Float32));
  JP_RETURN_IF_ERROR(check_dtype(*s, values, fb::DType::Float32));
  JP_RETURN_IF_ERROR(check_dtype(*s, indices, fb::DType::Int64));
  const int32_t axis = normalize_axis(p.axis(), x.rank);
  if (axis < 0) return invalid(*s, "axis is out of range");
  if (!same_shape(values, indices) || values.rank != x.rank) {
    return invalid(*s, "values and indices need one shape of the input's rank");
  }
  for (int32_t d = 0; d < x.rank; ++d) {
    if (d == axis ? values.dims[d] > x.dims[d] : values.dims[d] != x.dims[d]) {
      return invalid(*s, "outputs are not the input with the axis of extent k <= its own");
    }
  }
  kernels::TopKParams& k = s->params.top_k;
  k = kernels::TopKParams{};
  split_at(x, axis, &k.outer, &k.inner);
  k.axis = x.dims[axis];
  k.k = values.dims[axis];
  k.largest = p.largest();
  return check_workspace(plan, *s, kernels::cpu::topk_workspace_bytes(k));
}

Status prepare_instance_norm(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::InstanceNormParams& p = *step.params_as_InstanceNormParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "InstanceNorm", 3, 1));
  JP_RETURN_IF_ERROR(check_all_float32(plan, *s));
  kernels::InstanceNormParams& k = s->params.instance_norm;
  k = kernels::InstanceNormParams{};
  JP_RETURN_IF_ERROR(read_channels(plan, *s, &k.batch, &k.channels, &k.spatial));
  for (uint32_t i = 1; i < 3; ++i) {
    JP_RETURN_IF_ERROR(check_elements(*s, input_at(plan, *s, i), k.channels,
                                      "scale and bias need one value per channel"));
  }
  if (!finite(p.epsilon())) return invalid(*s, "epsilon must be finite");
  k.epsilon = p.epsilon();
  return to_activation(*s, p.activation(), &k.act);
}

Status prepare_layer_norm(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::LayerNormParams& p = *step.params_as_LayerNormParams();
  const uint32_t outputs = 1u + (p.has_mean() ? 1u : 0u) + (p.has_inv_std_dev() ? 1u : 0u);
  JP_RETURN_IF_ERROR(check_arity(*s, "LayerNorm", p.has_bias() ? 3 : 2, outputs));
  JP_RETURN_IF_ERROR(check_all_float32(plan, *s));
  const TensorInfo& x = input_at(plan, *s, 0);
  const int32_t axis = normalize_axis(p.axis(), x.rank);
  if (axis < 0) return invalid(*s, "axis is out of range");
  if (!same_shape(x, output_at(plan, *s, 0))) return invalid(*s, "output shape differs from input");
  kernels::LayerNormParams& k = s->params.layer_norm;
  k = kernels::LayerNormParams{};
  split_at(x, axis, &k.outer, &k.inner);
  k.inner *= x.dims[axis];
  for (uint32_t i = 1; i < s->inputs->size(); ++i) {
    JP_RETURN_IF_ERROR(check_elements(*s, input_at(plan, *s, i), k.inner,
                                      "scale and bias need one value per normalized element"));
  }
  // Mean and inv_std_dev: x's shape with the normalized dims of extent 1.
  for (uint32_t o = 1; o < outputs; ++o) {
    const TensorInfo& stat = output_at(plan, *s, o);
    bool ok = stat.rank == x.rank;
    for (int32_t d = 0; ok && d < x.rank; ++d) ok = stat.dims[d] == (d < axis ? x.dims[d] : 1);
    if (!ok)
      return invalid(*s, "mean and inv_std_dev must be x's shape with the normalized dims 1");
  }
  if (!finite(p.epsilon())) return invalid(*s, "epsilon must be finite");
  k.epsilon = p.epsilon();
  k.has_bias = p.has_bias();
  // The kernel params do not say which statistic a step with one writes: its run function does.
  if (outputs == 2) {
    s->run_cpu = p.has_mean() ? run_layer_norm_mean_cpu : run_layer_norm_inv_std_dev_cpu;
  }
  return to_activation(*s, p.activation(), &k.act);
}

Status prepare_group_norm(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::GroupNormParams& p = *step.params_as_GroupNormParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "GroupNorm", 3, 1));
  JP_RETURN_IF_ERROR(check_all_float32(plan, *s));
  kernels::GroupNormParams& k = s->params.group_norm;
  k = kernels::GroupNormParams{};
  JP_RETURN_IF_ERROR(read_channels(plan, *s, &k.batch, &k.channels, &k.spatial));
  if (p.groups() < 1 || k.channels % p.groups() != 0) {
    return invalid(*s, "groups must divide the channels");
  }
  k.groups = p.groups();
  k.affine_per_group = p.affine_per_group();
  for (uint32_t i = 1; i < 3; ++i) {
    JP_RETURN_IF_ERROR(check_elements(*s, input_at(plan, *s, i),
                                      k.affine_per_group ? k.groups : k.channels,
                                      "scale and bias need one value per group or channel"));
  }
  if (!finite(p.epsilon())) return invalid(*s, "epsilon must be finite");
  k.epsilon = p.epsilon();
  return to_activation(*s, p.activation(), &k.act);
}

Status prepare_lrn(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::LrnParams& p = *step.params_as_LrnParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Lrn", 1, 1));
  JP_RETURN_IF_ERROR(check_all_float32(plan, *s));
  kernels::LrnParams& k = s->params.lrn;
  k = kernels::LrnParams{};
  JP_RETURN_IF_ERROR(read_channels(plan, *s, &k.batch, &k.channels, &k.spatial));
  if (p.size() < 1 || p.size() > kMaxWindow) return invalid(*s, "size must be in [1, 2^31]");
  k.size = p.size();
  k.alpha = p.alpha();
  k.beta = p.beta();
  k.bias = p.bias();
  return JP_OK;
}

Status prepare_nms(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::NmsParams& p = *step.params_as_NmsParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Nms", 2, 2));
  const TensorInfo& boxes = input_at(plan, *s, 0);
  const TensorInfo& scores = input_at(plan, *s, 1);
  const TensorInfo& selected = output_at(plan, *s, 0);
  const TensorInfo& count = output_at(plan, *s, 1);
  JP_RETURN_IF_ERROR(check_dtype(*s, boxes, fb::DType::Float32));
  JP_RETURN_IF_ERROR(check_dtype(*s, scores, fb::DType::Float32));
  JP_RETURN_IF_ERROR(check_dtype(*s, selected, fb::DType::Int64));
  JP_RETURN_IF_ERROR(check_dtype(*s, count, fb::DType::Int64));
  if (boxes.rank != 3 || boxes.dims[2] != 4 || scores.rank != 3 ||
      scores.dims[0] != boxes.dims[0] || scores.dims[2] != boxes.dims[1]) {
    return invalid(*s, "boxes and scores must be [B, N, 4] and [B, C, N]");
  }
  kernels::NmsParams& k = s->params.nms;
  k = kernels::NmsParams{};
  k.batch = boxes.dims[0];
  k.num_classes = scores.dims[1];
  k.num_boxes = boxes.dims[1];
  k.max_output_per_class = p.max_output_per_class();
  k.iou_threshold = p.iou_threshold();
  k.score_threshold = p.score_threshold();
  k.has_score_threshold = p.has_score_threshold();
  k.center_point_box = p.center_point_box();
  if (selected.rank != 2 || selected.dims[1] != 3 || selected.dims[0] != kernels::nms_capacity(k)) {
    return invalid(*s, "selected must be [B * C * min(N, max_output_per_class), 3]");
  }
  if (count.elements != 1) return invalid(*s, "the count output must hold one element");
  return check_workspace(plan, *s, kernels::cpu::nms_workspace_bytes(k));
}

}  // namespace jetplan::rt
