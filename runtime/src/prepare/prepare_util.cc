#include "runtime/src/prepare/prepare_util.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace jetplan::rt {

// The kernels' enums are numbered as the schema's: a plan value is cast straight across.
static_assert(static_cast<int>(kernels::DType::kFloat32) == static_cast<int>(fb::DType::Float32) &&
                  static_cast<int>(kernels::DType::kFloat16) == static_cast<int>(fb::DType::Float16) &&
                  static_cast<int>(kernels::DType::kInt8) == static_cast<int>(fb::DType::Int8) &&
                  static_cast<int>(kernels::DType::kUInt8) == static_cast<int>(fb::DType::UInt8) &&
                  static_cast<int>(kernels::DType::kInt32) == static_cast<int>(fb::DType::Int32) &&
                  static_cast<int>(kernels::DType::kInt64) == static_cast<int>(fb::DType::Int64) &&
                  static_cast<int>(kernels::DType::kBool) == static_cast<int>(fb::DType::Bool) &&
                  static_cast<int>(kernels::DType::kFloat64) == static_cast<int>(fb::DType::Float64) &&
                  static_cast<int>(kernels::DType::kInt16) == static_cast<int>(fb::DType::Int16) &&
                  static_cast<int>(kernels::DType::kUInt16) == static_cast<int>(fb::DType::UInt16) &&
                  static_cast<int>(kernels::DType::kUInt32) == static_cast<int>(fb::DType::UInt32) &&
                  static_cast<int>(kernels::DType::kUInt64) == static_cast<int>(fb::DType::UInt64) &&
                  static_cast<int>(kernels::DType::kBFloat16) ==
                      static_cast<int>(fb::DType::BFloat16) &&
                  kernels::kDTypeCount == static_cast<int>(fb::DType::MAX) + 1,
              "kernels::DType must mirror fb::DType");
static_assert(kernels::kActivationKindCount == static_cast<int>(fb::ActivationKind::MAX) + 1 &&
                  static_cast<int>(kernels::ActivationKind::kGeluTanh) ==
                      static_cast<int>(fb::ActivationKind::GeluTanh),
              "kernels::ActivationKind must follow fb::ActivationKind");

bool same_shape(const TensorInfo& a, const TensorInfo& b) {
  if (a.rank != b.rank) return false;
  for (int32_t d = 0; d < a.rank; ++d) {
    if (a.dims[d] != b.dims[d]) return false;
  }
  return true;
}

Status invalid(const PreparedStep& s, const char* what) {
  return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s", s.name, what);
}

Status check_enum_value(const PreparedStep& s, int value, int count, const char* what) {
  if (value < 0 || value >= count) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown %s %d", s.name, what, value);
  }
  return JP_OK;
}

Status check_arity(const PreparedStep& s, const char* family, uint32_t inputs, uint32_t outputs) {
  if (s.inputs->size() != inputs || s.outputs->size() != outputs) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s' (%s) has %u inputs and %u outputs, expected %u and %u", s.name, family,
                s.inputs->size(), s.outputs->size(), inputs, outputs);
  }
  return JP_OK;
}

Status check_input_range(const PreparedStep& s, const char* family, uint32_t min_inputs,
                         uint32_t max_inputs) {
  const uint32_t n = s.inputs->size();
  if (n < min_inputs || n > max_inputs) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' (%s) has %u inputs, expected %u..%u", s.name,
                family, n, min_inputs, max_inputs);
  }
  if (s.outputs->size() != 1) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' (%s) has %u outputs, expected 1", s.name,
                family, s.outputs->size());
  }
  return JP_OK;
}

Status check_arity_of_params(const PreparedStep& s, const char* family, uint32_t inputs,
                             uint32_t outputs) {
  if (s.inputs->size() != inputs || s.outputs->size() != outputs) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s' (%s) has %u inputs and %u outputs; its params say %u and %u", s.name,
                family, s.inputs->size(), s.outputs->size(), inputs, outputs);
  }
  return JP_OK;
}

Status check_float32(const jp_plan& plan, const PreparedStep& s) {
  const fb::DType want = output_at(plan, s, 0).dtype;
  const bool allowed = want == fb::DType::Float32 ||
                       (want == fb::DType::Float16 && plan.backend == JP_BACKEND_CUDA);
  if (!allowed) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': output '%s' is %s; the %s backend runs this op "
                "in %s only", s.name, output_at(plan, s, 0).name,
                fb::EnumNameDType(want), plan.backend == JP_BACKEND_CUDA ? "CUDA" : "CPU",
                plan.backend == JP_BACKEND_CUDA ? "Float32 or Float16" : "Float32");
  }
  for (uint32_t i = 0; i < s.inputs->size(); ++i) {
    const TensorInfo& t = input_at(plan, s, i);
    if (t.dtype != want) {
      return fail(JP_ERROR_UNSUPPORTED, "step '%s': input '%s' is %s, the output %s; the step's "
                  "tensors must share one float dtype", s.name, t.name,
                  fb::EnumNameDType(t.dtype), fb::EnumNameDType(want));
    }
  }
  return JP_OK;
}

Status check_all_float32(const jp_plan& plan, const PreparedStep& s) {
  JP_RETURN_IF_ERROR(check_float32(plan, s));
  for (uint32_t i = 1; i < s.outputs->size(); ++i) {
    JP_RETURN_IF_ERROR(check_kernel_dtype(s, output_at(plan, s, i), output_at(plan, s, 0).dtype));
  }
  return JP_OK;
}

Status check_float_inputs(const jp_plan& plan, const PreparedStep& s, const char* family,
                          uint32_t inputs) {
  JP_RETURN_IF_ERROR(check_input_range(s, family, inputs, inputs));
  return check_float32(plan, s);
}

Status check_all_float_arity(const jp_plan& plan, const PreparedStep& s, const char* family,
                             uint32_t inputs, uint32_t outputs) {
  JP_RETURN_IF_ERROR(check_arity(s, family, inputs, outputs));
  return check_all_float32(plan, s);
}

Status check_float_epilogue(const jp_plan& plan, const PreparedStep& s) {
  if (plan.backend == JP_BACKEND_CUDA && output_at(plan, s, 0).dtype == fb::DType::Float32 &&
      s.inputs->size() > 0 && input_at(plan, s, 0).dtype == fb::DType::Float16) {
    for (uint32_t i = 0; i < s.inputs->size(); ++i) {
      const TensorInfo& t = input_at(plan, s, i);
      if (t.dtype != fb::DType::Float16) {
        return fail(JP_ERROR_UNSUPPORTED, "step '%s': input '%s' is %s, input 0 Float16; the "
                    "step's inputs must share one float dtype", s.name, t.name,
                    fb::EnumNameDType(t.dtype));
      }
    }
    return JP_OK;
  }
  return check_float32(plan, s);
}

Status check_kernel_dtype(const PreparedStep& s, const TensorInfo& t, fb::DType want) {
  if (t.dtype == want) return JP_OK;
  return fail(want == fb::DType::Float32 ? JP_ERROR_UNSUPPORTED : JP_ERROR_INVALID_PLAN,
              "step '%s': tensor '%s' is %s; the CPU backend needs %s here", s.name, t.name,
              fb::EnumNameDType(t.dtype), fb::EnumNameDType(want));
}

Status check_kernel_dtypes(const jp_plan& plan, const PreparedStep& s, const char* family,
                           std::initializer_list<fb::DType> inputs,
                           std::initializer_list<fb::DType> outputs) {
  JP_RETURN_IF_ERROR(check_arity(s, family, static_cast<uint32_t>(inputs.size()),
                                 static_cast<uint32_t>(outputs.size())));
  uint32_t i = 0;
  for (const fb::DType want : inputs) {
    JP_RETURN_IF_ERROR(check_kernel_dtype(s, input_at(plan, s, i++), want));
  }
  i = 0;
  for (const fb::DType want : outputs) {
    JP_RETURN_IF_ERROR(check_kernel_dtype(s, output_at(plan, s, i++), want));
  }
  return JP_OK;
}

Status check_role_dtype(const PreparedStep& s, const TensorInfo& t, fb::DType want,
                        const char* role) {
  if (t.dtype != want) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s '%s' is %s, expected %s", s.name, role,
                t.name, fb::EnumNameDType(t.dtype), fb::EnumNameDType(want));
  }
  return JP_OK;
}

Status check_epilogue_inputs(const jp_plan& plan, const PreparedStep& s, const char* family,
                             bool has_third, bool has_residual) {
  const uint32_t inputs = 2u + (has_third ? 1u : 0u) + (has_residual ? 1u : 0u);
  JP_RETURN_IF_ERROR(check_input_range(s, family, inputs, inputs));
  return check_float_epilogue(plan, s);
}

Status check_same_dtype(const PreparedStep& s, const TensorInfo& x, const TensorInfo& y) {
  if (x.dtype != y.dtype) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': output '%s' is %s but input '%s' is %s", s.name,
                y.name, fb::EnumNameDType(y.dtype), x.name, fb::EnumNameDType(x.dtype));
  }
  return JP_OK;
}

Status check_moves_one(const jp_plan& plan, const PreparedStep& s, const char* family) {
  JP_RETURN_IF_ERROR(check_arity(s, family, 1, 1));
  return check_same_dtype(s, input_at(plan, s, 0), output_at(plan, s, 0));
}

Status check_elements(const PreparedStep& s, const TensorInfo& t, int64_t want, const char* what) {
  if (t.elements != static_cast<uint64_t>(want)) return invalid(s, what);
  return JP_OK;
}

Status check_role_elements(const PreparedStep& s, const TensorInfo& t, uint64_t want,
                           const char* role) {
  if (t.elements != want) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': %s '%s' has %" PRIu64 " elements, expected %" PRIu64, s.name, role,
                t.name, t.elements, want);
  }
  return JP_OK;
}

Status check_dims(const PreparedStep& s, const TensorInfo& t, int32_t rank, const int64_t* want,
                  const char* role) {
  bool same = t.rank == rank;
  for (int32_t d = 0; same && d < rank; ++d) same = t.dims[d] == want[d];
  if (same) return JP_OK;
  char text[128];
  int used = 0;
  for (int32_t d = 0; d < rank && used < static_cast<int>(sizeof(text)) - 24; ++d) {
    used += snprintf(text + used, sizeof(text) - static_cast<size_t>(used), "%s%" PRId64,
                     d ? "," : "", want[d]);
  }
  return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s '%s' must be [%s]", s.name, role, t.name, text);
}

int32_t normalize_axis(int32_t axis, int32_t rank) {
  const int32_t a = axis < 0 ? axis + rank : axis;
  return a >= 0 && a < rank ? a : -1;
}

void split_at(const TensorInfo& x, int32_t axis, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int32_t d = 0; d < axis; ++d) *outer *= x.dims[d];
  for (int32_t d = axis + 1; d < x.rank; ++d) *inner *= x.dims[d];
}

Status check_scale_bias(const jp_plan& plan, const PreparedStep& s, int64_t count,
                        const char* what) {
  for (uint32_t i = 1; i < 3; ++i) {
    JP_RETURN_IF_ERROR(check_elements(s, input_at(plan, s, i), count, what));
  }
  return JP_OK;
}

Status read_epsilon(const PreparedStep& s, float epsilon, float* out) {
  if (!std::isfinite(epsilon)) return invalid(s, "epsilon must be finite");
  *out = epsilon;
  return JP_OK;
}

Status read_epsilon_activation(const PreparedStep& s, float epsilon,
                               const fb::Activation* activation, float* epsilon_out,
                               kernels::Activation* activation_out) {
  JP_RETURN_IF_ERROR(read_epsilon(s, epsilon, epsilon_out));
  return to_activation(s, activation, activation_out);
}

Status check_residual(const jp_plan& plan, const PreparedStep& s, bool has_residual,
                      uint32_t index, const char* what) {
  if (!has_residual) return JP_OK;
  const TensorInfo& r = input_at(plan, s, index);
  const TensorInfo& y = output_at(plan, s, 0);
  if (!same_shape(r, y) || channels_last(r) != channels_last(y)) return invalid(s, what);
  return JP_OK;
}

Status check_slice_residual(const jp_plan& plan, const PreparedStep& s, bool has_residual,
                            uint32_t index, int64_t out_channels) {
  if (!has_residual) return JP_OK;
  const TensorInfo& r = input_at(plan, s, index);
  const TensorInfo& y = output_at(plan, s, 0);
  bool dense = r.rank == y.rank && channels_last(r);
  for (int32_t d = 0; dense && d < r.rank; ++d)
    dense = r.dims[d] == (d == r.rank - 1 ? out_channels : y.dims[d]);
  return dense ? JP_OK
               : invalid(s, "the residual of a step writing a channel slice must have the "
                            "output's shape with the step's own channels, channels last");
}

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

namespace {

// Dense strides of `t` right-aligned to the output rank `rank` (>= t.rank), 0 where a dim of 1
// broadcasts; false when a dim neither is 1 nor equals the output's.
bool broadcast_strides(const TensorInfo& t, const TensorInfo& y, int32_t rank, int64_t* out) {
  if (t.rank > y.rank) return false;
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    const int32_t ti = i - (rank - t.rank);
    const int64_t dim = ti >= 0 ? t.dims[ti] : 1;
    const int64_t ydim = y.rank > 0 ? y.dims[i] : 1;
    if (dim != ydim && dim != 1) return false;
    out[i] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return true;
}

// The output shape must be exactly the numpy broadcast of the operands.
bool is_broadcast_of(const TensorInfo& y, int32_t rank, const TensorInfo* const* operands,
                     int count) {
  for (int32_t i = 0; i < rank; ++i) {
    int64_t widest = 1;
    for (int n = 0; n < count; ++n) {
      const int32_t ti = i - (rank - operands[n]->rank);
      const int64_t dim = ti >= 0 ? operands[n]->dims[ti] : 1;
      if (dim > widest) widest = dim;
    }
    if ((y.rank > 0 ? y.dims[i] : 1) != widest) return false;
  }
  return true;
}

}  // namespace

Status broadcast_operands(const PreparedStep& s, const TensorInfo& y,
                          const TensorInfo* const* operands, int64_t* const* strides, int count,
                          int32_t* rank, int64_t* out_dims) {
  *rank = y.rank > 0 ? y.rank : 1;
  for (int n = 0; n < count; ++n) {
    if (!broadcast_strides(*operands[n], y, *rank, strides[n])) {
      return invalid(s, "operands do not broadcast to the output shape");
    }
  }
  if (!is_broadcast_of(y, *rank, operands, count)) {
    return invalid(s, "output shape is not the broadcast of the operands");
  }
  for (int32_t i = 0; i < *rank; ++i) out_dims[i] = y.rank > 0 ? y.dims[i] : 1;
  return JP_OK;
}

bool matmul_batch_stride(const TensorInfo& t, const TensorInfo& y, int64_t matrix,
                         int64_t* stride) {
  const int32_t batch_rank = y.rank - 2;
  const int32_t rank = t.rank - 2;
  if (rank > batch_rank) return false;
  // matrix > 0: an empty operand of a step with work to do was refused at load.
  if (static_cast<int64_t>(t.elements) / matrix == 1) {
    *stride = 0;
    return true;
  }
  for (int32_t i = 0; i < batch_rank; ++i) {
    const int32_t ti = i - (batch_rank - rank);
    if ((ti >= 0 ? t.dims[ti] : 1) != y.dims[i]) return false;
  }
  *stride = matrix;
  return true;
}

Status read_spatial(const PreparedStep& s, const char* what,
                    const flatbuffers::Vector<int64_t>* list, int32_t rank, int64_t fallback,
                    int64_t min_value, int64_t* out) {
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) out[i] = fallback;
  if (list == nullptr) return JP_OK;
  if (list->size() != 0 && !aligned(list)) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s is misaligned", s.name, what);
  }
  if (list->size() != static_cast<uint32_t>(rank)) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s has %u entries, expected %d", s.name, what,
                list->size(), rank);
  }
  for (int32_t i = 0; i < rank; ++i) {
    const int64_t v = list->Get(static_cast<uint32_t>(i));
    if (v < min_value || v > kMaxWindow) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s[%d] = %" PRId64 " is out of range",
                  s.name, what, i, v);
    }
    out[i] = v;
  }
  return JP_OK;
}

Status to_activation(const PreparedStep& s, const fb::Activation* in, kernels::Activation* out) {
  *out = kernels::Activation{};
  if (in == nullptr) return JP_OK;
  JP_RETURN_IF_ERROR(check_enum<kernels::kActivationKindCount>(s, in->kind(), "activation"));
  out->kind = static_cast<kernels::ActivationKind>(in->kind());
  out->alpha = in->alpha();
  out->beta = in->beta();
  return JP_OK;
}

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

}  // namespace jetplan::rt
