// Load-time preparation of the seq families (see families_seq.inc): every attribute, dtype and
// shape of a step is checked against its tensors, since a plan is untrusted and the kernels
// index with what is resolved here without checking again; then the kernel parameters are
// filled in. Mirrors prepare.cc.
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "kernels/kernels.h"
#include "runtime/src/op_families.h"

namespace jetplan::rt {
namespace {

constexpr int64_t kMaxWindow = int64_t{1} << 31;

// The kernels' DType is fb::DType value for value.
static_assert(static_cast<int>(kernels::DType::kInt8) == static_cast<int>(fb::DType::Int8) &&
                  static_cast<int>(kernels::DType::kUInt8) == static_cast<int>(fb::DType::UInt8),
              "kernels::DType must mirror fb::DType");
static_assert(static_cast<int>(kernels::RnnCell::kGru) == static_cast<int>(fb::RnnCell::Gru) &&
                  static_cast<int>(kernels::RnnDirection::kBidirectional) ==
                      static_cast<int>(fb::RnnDirection::Bidirectional) &&
                  kernels::kRnnActivationKindCount ==
                      static_cast<int>(fb::RnnActivationKind::MAX) + 1 &&
                  static_cast<int>(kernels::RnnActivationKind::kAffine) ==
                      static_cast<int>(fb::RnnActivationKind::Affine),
              "kernels' recurrent enums must mirror schemas/plan.fbs");

const TensorInfo& input_at(const jp_plan& plan, const PreparedStep& s, uint32_t i) {
  return plan.tensors[s.inputs->Get(i)];
}

const TensorInfo& output_at(const jp_plan& plan, const PreparedStep& s, uint32_t i) {
  return plan.tensors[s.outputs->Get(i)];
}

Status invalid(const PreparedStep& s, const char* what) {
  return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s", s.name, what);
}

// A params union whose type is set but whose table is absent passes the FlatBuffers verifier.
Status missing_params(const PreparedStep& s, const char* table) {
  return fail(JP_ERROR_INVALID_PLAN, "step '%s' has no %s table", s.name, table);
}

Status check_io(const PreparedStep& s, const char* family, uint32_t inputs, uint32_t outputs) {
  if (s.inputs->size() != inputs || s.outputs->size() != outputs) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s' (%s) has %u inputs and %u outputs; its params say %u and %u", s.name,
                family, s.inputs->size(), s.outputs->size(), inputs, outputs);
  }
  return JP_OK;
}

Status check_dtype(const PreparedStep& s, const TensorInfo& t, fb::DType want, const char* role) {
  if (t.dtype != want) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s '%s' is %s, expected %s", s.name, role,
                t.name, fb::EnumNameDType(t.dtype), fb::EnumNameDType(want));
  }
  return JP_OK;
}

Status check_quantized(const PreparedStep& s, const TensorInfo& t, const char* role) {
  if (t.dtype != fb::DType::Int8 && t.dtype != fb::DType::UInt8) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s '%s' is %s, expected Int8 or UInt8", s.name,
                role, t.name, fb::EnumNameDType(t.dtype));
  }
  return JP_OK;
}

Status check_elements(const PreparedStep& s, const TensorInfo& t, uint64_t want, const char* role) {
  if (t.elements != want) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': %s '%s' has %" PRIu64 " elements, expected %" PRIu64, s.name, role,
                t.name, t.elements, want);
  }
  return JP_OK;
}

// t's dims are exactly `want` (rank included); the message states the shape the step needs.
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

bool same_shape(const TensorInfo& a, const TensorInfo& b) {
  if (a.rank != b.rank) return false;
  for (int32_t d = 0; d < a.rank; ++d) {
    if (a.dims[d] != b.dims[d]) return false;
  }
  return true;
}

kernels::DType kernel_dtype(fb::DType t) { return static_cast<kernels::DType>(t); }

// ------------------------------------------------------------------------------ recurrent

// The tensors a recurrent step reads and writes, in the order of schemas/plan.fbs RnnParams.
struct RnnTensors {
  const TensorInfo* x = nullptr;
  const TensorInfo* w = nullptr;
  const TensorInfo* r = nullptr;
  const TensorInfo* b = nullptr;
  const TensorInfo* sequence_lens = nullptr;
  const TensorInfo* initial_h = nullptr;
  const TensorInfo* initial_c = nullptr;
  const TensorInfo* p = nullptr;
  const TensorInfo* y = nullptr;
  const TensorInfo* y_h = nullptr;
  const TensorInfo* y_c = nullptr;
};

Status check_rnn_shapes(const PreparedStep& s, const RnnTensors& t, const kernels::RnnParams& k,
                        int64_t D, int64_t G) {
  const int64_t S = k.seq_length, N = k.batch, I = k.input_size, H = k.hidden_size;
  const int64_t w[3] = {D, G * H, I}, r[3] = {D, G * H, H}, b[2] = {D, 2 * G * H};
  const int64_t state_dims[3] = {k.batch_major ? N : D, k.batch_major ? D : N, H};
  const int64_t y[4] = {k.batch_major ? N : S, k.batch_major ? S : D, k.batch_major ? D : N, H};
  const int64_t p[2] = {D, 3 * H}, lens[1] = {N};
  JP_RETURN_IF_ERROR(check_dims(s, *t.w, 3, w, "W"));
  JP_RETURN_IF_ERROR(check_dims(s, *t.r, 3, r, "R"));
  if (t.b) JP_RETURN_IF_ERROR(check_dims(s, *t.b, 2, b, "B"));
  if (t.sequence_lens)
    JP_RETURN_IF_ERROR(check_dims(s, *t.sequence_lens, 1, lens, "sequence_lens"));
  if (t.initial_h) JP_RETURN_IF_ERROR(check_dims(s, *t.initial_h, 3, state_dims, "initial_h"));
  if (t.initial_c) JP_RETURN_IF_ERROR(check_dims(s, *t.initial_c, 3, state_dims, "initial_c"));
  if (t.p) JP_RETURN_IF_ERROR(check_dims(s, *t.p, 2, p, "P"));
  if (t.y) JP_RETURN_IF_ERROR(check_dims(s, *t.y, 4, y, "Y"));
  if (t.y_h) JP_RETURN_IF_ERROR(check_dims(s, *t.y_h, 3, state_dims, "Y_h"));
  if (t.y_c) JP_RETURN_IF_ERROR(check_dims(s, *t.y_c, 3, state_dims, "Y_c"));
  return JP_OK;
}

// ------------------------------------------------------------------------------ quantized

Status prepare_quantize_linear(const jp_plan& plan, const fb::Step& step, PreparedStep* s,
                               bool quantize) {
  const char* family = quantize ? "Quantize" : "Dequantize";
  const fb::QuantizeParams* p = step.params_as_QuantizeParams();
  if (p == nullptr) return missing_params(*s, "QuantizeParams");
  JP_RETURN_IF_ERROR(check_io(*s, family, p->has_zero_point() ? 3u : 2u, 1u));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& scale = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  const TensorInfo& q = quantize ? y : x;
  JP_RETURN_IF_ERROR(
      check_dtype(*s, quantize ? x : y, fb::DType::Float32, quantize ? "input" : "output"));
  JP_RETURN_IF_ERROR(check_quantized(*s, q, quantize ? "output" : "input"));
  JP_RETURN_IF_ERROR(check_dtype(*s, scale, fb::DType::Float32, "scale"));
  if (!same_shape(x, y)) return invalid(*s, "input and output shapes differ");

  kernels::QuantizeLinearParams& k = s->params.quantize;
  k = kernels::QuantizeLinearParams{};
  k.qtype = kernel_dtype(q.dtype);
  k.has_zero_point = p->has_zero_point();
  k.per_channel = p->per_axis();
  if (p->per_axis()) {
    const int32_t axis = p->axis() < 0 ? p->axis() + x.rank : p->axis();
    if (axis < 0 || axis >= x.rank) return invalid(*s, "the quantization axis is out of range");
    for (int32_t d = 0; d < axis; ++d) k.outer *= x.dims[d];
    k.channels = x.dims[axis];
    for (int32_t d = axis + 1; d < x.rank; ++d) k.inner *= x.dims[d];
  } else {
    k.inner = static_cast<int64_t>(x.elements);
  }
  const uint64_t params = p->per_axis() ? static_cast<uint64_t>(k.channels) : 1;
  JP_RETURN_IF_ERROR(check_elements(*s, scale, params, "scale"));
  if (p->has_zero_point()) {
    const TensorInfo& zp = input_at(plan, *s, 2);
    JP_RETURN_IF_ERROR(check_dtype(*s, zp, q.dtype, "zero point"));
    JP_RETURN_IF_ERROR(check_elements(*s, zp, params, "zero point"));
  }
  return JP_OK;
}

// Scale and zero point of one operand: float32 and the operand's type, one element or `count`
// (per row or column). Returns whether they are per row/column.
Status check_scale_pair(const PreparedStep& s, const TensorInfo& scale, const TensorInfo& zp,
                        fb::DType type, uint64_t count, const char* role, bool* per_entry) {
  if (scale.dtype != fb::DType::Float32 || zp.dtype != type) {
    const bool bad_scale = scale.dtype != fb::DType::Float32;
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s %s '%s' is %s, expected %s", s.name, role,
                bad_scale ? "scale" : "zero point", bad_scale ? scale.name : zp.name,
                fb::EnumNameDType(bad_scale ? scale.dtype : zp.dtype),
                fb::EnumNameDType(bad_scale ? fb::DType::Float32 : type));
  }
  if ((scale.elements != 1 && scale.elements != count) || zp.elements != scale.elements) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': %s scale '%s' and zero point '%s' need 1 or %" PRIu64
                " elements each, the same for both",
                s.name, role, scale.name, zp.name, count);
  }
  *per_entry = scale.elements != 1;
  return JP_OK;
}

// Spatial attributes of QLinearConv (as prepare.cc's read_spatial): absent lists take
// `fallback`; present ones need `rank` entries within [min_value, kMaxWindow].
Status read_spatial(const PreparedStep& s, const char* what,
                    const flatbuffers::Vector<int64_t>* list, int32_t rank, int64_t fallback,
                    int64_t min_value, int64_t* out) {
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) out[i] = i < rank ? fallback : 1;
  if (list == nullptr) return JP_OK;
  if (list->size() != static_cast<uint32_t>(rank)) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s has %u entries, expected %d", s.name, what,
                list->size(), rank);
  }
  for (int32_t i = 0; i < rank; ++i) {
    const int64_t v = list->Get(i);
    if (v < min_value || v > kMaxWindow) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s[%d] = %" PRId64 " is out of range", s.name,
                  what, i, v);
    }
    out[i] = v;
  }
  return JP_OK;
}

}  // namespace

Status prepare_rnn(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::RnnParams* p = step.params_as_RnnParams();
  if (p == nullptr) return missing_params(*s, "RnnParams");
  const int cell = static_cast<int>(p->cell());
  const int direction = static_cast<int>(p->direction());
  if (cell < 0 || cell >= kernels::kRnnCellCount) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown recurrent cell %d", s->name, cell);
  }
  if (direction < 0 || direction > static_cast<int>(kernels::RnnDirection::kBidirectional)) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown direction %d", s->name, direction);
  }
  kernels::RnnParams& k = s->params.rnn;
  k = kernels::RnnParams{};
  k.cell = static_cast<kernels::RnnCell>(cell);
  k.direction = static_cast<kernels::RnnDirection>(direction);
  const bool lstm = k.cell == kernels::RnnCell::kLstm;
  if (!lstm && (p->has_initial_c() || p->has_peepholes() || p->has_y_c() || p->input_forget())) {
    return invalid(*s, "initial_c, P, Y_c and input_forget belong to LSTM only");
  }
  if (k.cell != kernels::RnnCell::kGru && p->linear_before_reset()) {
    return invalid(*s, "linear_before_reset belongs to GRU only");
  }
  const uint32_t inputs = 3u + p->has_bias() + p->has_sequence_lens() + p->has_initial_h() +
                          p->has_initial_c() + p->has_peepholes();
  const uint32_t outputs = 0u + p->has_y() + p->has_y_h() + p->has_y_c();
  JP_RETURN_IF_ERROR(check_io(*s, "Rnn", inputs, outputs));

  RnnTensors t;
  uint32_t next = 0;
  t.x = &input_at(plan, *s, next++);
  t.w = &input_at(plan, *s, next++);
  t.r = &input_at(plan, *s, next++);
  if (p->has_bias()) t.b = &input_at(plan, *s, next++);
  if (p->has_sequence_lens()) t.sequence_lens = &input_at(plan, *s, next++);
  if (p->has_initial_h()) t.initial_h = &input_at(plan, *s, next++);
  if (p->has_initial_c()) t.initial_c = &input_at(plan, *s, next++);
  if (p->has_peepholes()) t.p = &input_at(plan, *s, next++);
  next = 0;
  if (p->has_y()) t.y = &output_at(plan, *s, next++);
  if (p->has_y_h()) t.y_h = &output_at(plan, *s, next++);
  if (p->has_y_c()) t.y_c = &output_at(plan, *s, next++);
  const struct {
    const TensorInfo* tensor;
    const char* role;
  } floats[] = {{t.x, "X"},
                {t.w, "W"},
                {t.r, "R"},
                {t.b, "B"},
                {t.initial_h, "initial_h"},
                {t.initial_c, "initial_c"},
                {t.p, "P"},
                {t.y, "Y"},
                {t.y_h, "Y_h"},
                {t.y_c, "Y_c"}};
  // One float dtype for all of them: Float32, or Float16 storage in CUDA plans.
  const fb::DType want = plan.backend == JP_BACKEND_CUDA && t.x->dtype == fb::DType::Float16
                             ? fb::DType::Float16
                             : fb::DType::Float32;
  for (const auto& f : floats) {
    if (f.tensor) JP_RETURN_IF_ERROR(check_dtype(*s, *f.tensor, want, f.role));
  }
  if (t.sequence_lens) {
    JP_RETURN_IF_ERROR(check_dtype(*s, *t.sequence_lens, fb::DType::Int32, "sequence_lens"));
  }

  k.batch_major = p->batch_major();
  if (t.x->rank != 3) return invalid(*s, "X must have rank 3");
  k.seq_length = t.x->dims[k.batch_major ? 1 : 0];
  k.batch = t.x->dims[k.batch_major ? 0 : 1];
  k.input_size = t.x->dims[2];
  const int64_t D = k.direction == kernels::RnnDirection::kBidirectional ? 2 : 1;
  const int64_t G = kernels::rnn_gate_count(k.cell);
  // W's gate rows bound hidden_size before any product with it is formed.
  k.hidden_size = p->hidden_size();
  if (k.hidden_size < 1 || t.w->rank != 3 || k.hidden_size > t.w->dims[1]) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': hidden_size %" PRId64 " does not fit W '%s' (%d gates per direction)",
                s->name, k.hidden_size, t.w->name, static_cast<int>(G));
  }
  JP_RETURN_IF_ERROR(check_rnn_shapes(*s, t, k, D, G));

  const int A = kernels::rnn_activation_count(k.cell);
  const auto* acts = p->activations();
  if (acts == nullptr || acts->size() != static_cast<uint32_t>(D * A)) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %u activations, expected %d (%d per direction)",
                s->name, acts ? acts->size() : 0u, static_cast<int>(D * A), A);
  }
  for (int64_t d = 0; d < D; ++d) {
    for (int a = 0; a < A; ++a) {
      const fb::RnnActivation* act = acts->Get(static_cast<uint32_t>(d * A + a));
      const int kind = static_cast<int>(act->kind());
      if (kind < 0 || kind >= kernels::kRnnActivationKindCount) {
        return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown recurrent activation %d", s->name,
                    kind);
      }
      k.activations[d][a] = {static_cast<kernels::RnnActivationKind>(kind), act->alpha(),
                             act->beta()};
    }
  }
  k.has_clip = p->has_clip();
  k.clip = p->clip();
  if (k.has_clip && !(std::isfinite(k.clip) && k.clip >= 0.f)) {
    return invalid(*s, "clip must be a finite non-negative number");
  }
  k.input_forget = p->input_forget();
  k.linear_before_reset = p->linear_before_reset();
  k.has_bias = p->has_bias();
  k.has_sequence_lens = p->has_sequence_lens();
  k.has_initial_h = p->has_initial_h();
  k.has_initial_c = p->has_initial_c();
  k.has_peepholes = p->has_peepholes();
  k.has_y = p->has_y();
  k.has_y_h = p->has_y_h();
  k.has_y_c = p->has_y_c();
  const int64_t need = kernels::cpu::rnn_workspace_bytes(k);
  if (s->workspace_bytes < static_cast<uint64_t>(need)) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': workspace of %" PRIu64 " bytes, the recurrence needs %" PRId64, s->name,
                s->workspace_bytes, need);
  }
  return JP_OK;
}

Status prepare_quantize(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  return prepare_quantize_linear(plan, step, s, /*quantize=*/true);
}

Status prepare_dequantize(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  return prepare_quantize_linear(plan, step, s, /*quantize=*/false);
}

Status prepare_qlinear_matmul(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  if (step.params_as_QLinearMatMulParams() == nullptr) {
    return missing_params(*s, "QLinearMatMulParams");
  }
  JP_RETURN_IF_ERROR(check_io(*s, "QLinearMatMul", 8, 1));
  const TensorInfo& a = input_at(plan, *s, 0);
  const TensorInfo& b = input_at(plan, *s, 3);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_quantized(*s, a, "A"));
  JP_RETURN_IF_ERROR(check_quantized(*s, b, "B"));
  JP_RETURN_IF_ERROR(check_quantized(*s, y, "output"));
  if (a.rank < 2 || b.rank < 2 || y.rank < 2) return invalid(*s, "operands need rank >= 2");
  kernels::QLinearMatMulParams& k = s->params.qlinear_matmul;
  k = kernels::QLinearMatMulParams{};
  k.M = a.dims[a.rank - 2];
  k.K = a.dims[a.rank - 1];
  k.N = b.dims[b.rank - 1];
  if (b.dims[b.rank - 2] != k.K) return invalid(*s, "inner dimensions of A and B differ");
  if (y.dims[y.rank - 2] != k.M || y.dims[y.rank - 1] != k.N) {
    return invalid(*s, "output is not [.., M, N]");
  }
  const int32_t batch_rank = y.rank - 2;
  k.batch = static_cast<int64_t>(y.elements) / (k.M * k.N);
  // An operand's batch dims either equal the output's (right-aligned, leading 1s added) or
  // are all 1 (its one matrix serves every batch).
  auto batch_stride = [&](const TensorInfo& t, int64_t matrix, int64_t* stride) {
    if (t.rank - 2 > batch_rank) return false;
    if (static_cast<int64_t>(t.elements) == matrix) {
      *stride = 0;
      return true;
    }
    for (int32_t i = 0; i < batch_rank; ++i) {
      const int32_t ti = i - (batch_rank - (t.rank - 2));
      if ((ti >= 0 ? t.dims[ti] : 1) != y.dims[i]) return false;
    }
    *stride = matrix;
    return true;
  };
  if (!batch_stride(a, k.M * k.K, &k.a_batch_stride) ||
      !batch_stride(b, k.K * k.N, &k.b_batch_stride)) {
    return invalid(*s, "batch dims of A or B neither match the output nor are all 1");
  }
  k.a_type = kernel_dtype(a.dtype);
  k.b_type = kernel_dtype(b.dtype);
  k.y_type = kernel_dtype(y.dtype);
  JP_RETURN_IF_ERROR(check_scale_pair(*s, input_at(plan, *s, 1), input_at(plan, *s, 2), a.dtype,
                                      static_cast<uint64_t>(k.M), "A", &k.a_per_row));
  JP_RETURN_IF_ERROR(check_scale_pair(*s, input_at(plan, *s, 4), input_at(plan, *s, 5), b.dtype,
                                      static_cast<uint64_t>(k.N), "B", &k.b_per_column));
  bool per_entry = false;
  return check_scale_pair(*s, input_at(plan, *s, 6), input_at(plan, *s, 7), y.dtype, 1, "output",
                          &per_entry);
}

Status prepare_qlinear_conv(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::QLinearConvParams* p = step.params_as_QLinearConvParams();
  if (p == nullptr) return missing_params(*s, "QLinearConvParams");
  JP_RETURN_IF_ERROR(check_io(*s, "QLinearConv", p->has_bias() ? 9u : 8u, 1u));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& w = input_at(plan, *s, 3);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_quantized(*s, x, "input"));
  JP_RETURN_IF_ERROR(check_quantized(*s, w, "weight"));
  JP_RETURN_IF_ERROR(check_quantized(*s, y, "output"));

  if (p->kernel() == nullptr || p->kernel()->size() < 1 ||
      p->kernel()->size() > static_cast<uint32_t>(kernels::kMaxSpatial)) {
    return invalid(*s, "kernel must have 1 to 3 spatial dims");
  }
  const int32_t rank = static_cast<int32_t>(p->kernel()->size());
  int64_t kernel[kernels::kMaxSpatial], stride[kernels::kMaxSpatial],
      dilation[kernels::kMaxSpatial], pad_begin[kernels::kMaxSpatial],
      pad_end[kernels::kMaxSpatial];
  JP_RETURN_IF_ERROR(read_spatial(*s, "kernel", p->kernel(), rank, 1, 1, kernel));
  JP_RETURN_IF_ERROR(read_spatial(*s, "stride", p->stride(), rank, 1, 1, stride));
  JP_RETURN_IF_ERROR(read_spatial(*s, "dilation", p->dilation(), rank, 1, 1, dilation));
  JP_RETURN_IF_ERROR(read_spatial(*s, "pad_begin", p->pad_begin(), rank, 0, 0, pad_begin));
  JP_RETURN_IF_ERROR(read_spatial(*s, "pad_end", p->pad_end(), rank, 0, 0, pad_end));
  if (x.rank != rank + 2 || y.rank != rank + 2 || w.rank != rank + 2) {
    return invalid(*s, "input, weight and output rank must be 2 + the kernel's spatial rank");
  }
  const int64_t groups = p->groups();
  const int64_t channels = x.dims[1], out_channels = w.dims[0];
  if (groups < 1 || channels % groups != 0 || out_channels % groups != 0 ||
      w.dims[1] != channels / groups) {
    return invalid(*s, "weight channels do not match the input channels and groups");
  }
  if (y.dims[0] != x.dims[0] || y.dims[1] != out_channels) {
    return invalid(*s, "output batch or channels do not match");
  }
  kernels::QLinearConvParams& k = s->params.qlinear_conv;
  k = kernels::QLinearConvParams{};
  kernels::ConvParams& c = k.conv;
  c.spatial_rank = rank;
  c.batch = x.dims[0];
  c.in_channels = channels;
  c.out_channels = out_channels;
  c.groups = groups;
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) {
    c.kernel[i] = kernel[i];
    c.stride[i] = stride[i];
    c.dilation[i] = dilation[i];
    c.pad_begin[i] = i < rank ? pad_begin[i] : 0;
    c.in_size[i] = i < rank ? x.dims[2 + i] : 1;
    c.out_size[i] = i < rank ? y.dims[2 + i] : 1;
    if (i >= rank) continue;
    if (w.dims[2 + i] != kernel[i]) return invalid(*s, "weight and kernel size differ");
    // The output extent the window gives; the kernel reads inside x for every output position.
    const int64_t span = dilation[i] * (kernel[i] - 1) + 1;
    const int64_t padded = c.in_size[i] + pad_begin[i] + pad_end[i];
    const int64_t expected = padded < span ? -1 : (padded - span) / stride[i] + 1;
    if (expected != c.out_size[i]) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': output '%s' spatial dim %d is %" PRId64 ", the window gives %" PRId64,
                  s->name, y.name, i, c.out_size[i], expected);
    }
  }
  c.has_bias = p->has_bias();
  k.x_type = kernel_dtype(x.dtype);
  k.w_type = kernel_dtype(w.dtype);
  k.y_type = kernel_dtype(y.dtype);
  bool per_entry = false;
  JP_RETURN_IF_ERROR(check_scale_pair(*s, input_at(plan, *s, 1), input_at(plan, *s, 2), x.dtype, 1,
                                      "input", &per_entry));
  JP_RETURN_IF_ERROR(check_scale_pair(*s, input_at(plan, *s, 4), input_at(plan, *s, 5), w.dtype,
                                      static_cast<uint64_t>(out_channels), "weight",
                                      &k.w_per_channel));
  JP_RETURN_IF_ERROR(check_scale_pair(*s, input_at(plan, *s, 6), input_at(plan, *s, 7), y.dtype, 1,
                                      "output", &per_entry));
  if (p->has_bias()) {
    const TensorInfo& bias = input_at(plan, *s, 8);
    JP_RETURN_IF_ERROR(check_dtype(*s, bias, fb::DType::Int32, "bias"));
    JP_RETURN_IF_ERROR(check_elements(*s, bias, static_cast<uint64_t>(out_channels), "bias"));
  }
  return JP_OK;
}

Status prepare_dynamic_quantize(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  if (step.params_as_DynamicQuantizeParams() == nullptr) {
    return missing_params(*s, "DynamicQuantizeParams");
  }
  JP_RETURN_IF_ERROR(check_io(*s, "DynamicQuantize", 1, 3));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_dtype(*s, x, fb::DType::Float32, "input"));
  JP_RETURN_IF_ERROR(check_dtype(*s, y, fb::DType::UInt8, "output"));
  if (!same_shape(x, y)) return invalid(*s, "input and output shapes differ");
  const TensorInfo& scale = output_at(plan, *s, 1);
  const TensorInfo& zp = output_at(plan, *s, 2);
  JP_RETURN_IF_ERROR(check_dtype(*s, scale, fb::DType::Float32, "scale"));
  JP_RETURN_IF_ERROR(check_elements(*s, scale, 1, "scale"));
  JP_RETURN_IF_ERROR(check_dtype(*s, zp, fb::DType::UInt8, "zero point"));
  JP_RETURN_IF_ERROR(check_elements(*s, zp, 1, "zero point"));
  s->params.dynamic_quantize = kernels::DynamicQuantizeParams{};
  s->params.dynamic_quantize.count = static_cast<int64_t>(x.elements);
  return JP_OK;
}

}  // namespace jetplan::rt
