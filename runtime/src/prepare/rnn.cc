// Rnn: the recurrent cells RNN, LSTM and GRU, one direction or both, with ONNX's optional
// inputs and outputs (present ones only, in ONNX order; the params' has_* flags say which).
#include <cinttypes>
#include <cmath>

#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

static_assert(static_cast<int>(kernels::RnnCell::kGru) == static_cast<int>(fb::RnnCell::Gru) &&
                  static_cast<int>(kernels::RnnDirection::kBidirectional) ==
                      static_cast<int>(fb::RnnDirection::Bidirectional) &&
                  static_cast<int>(kernels::RnnActivationKind::kAffine) ==
                      static_cast<int>(fb::RnnActivationKind::Affine),
              "kernels' recurrent enums must mirror schemas/plan.fbs");

// The tensors a recurrent step reads and writes, in the order of schemas/plan.fbs RnnParams
// (into plan.tensors; null where the step has none).
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

RnnTensors rnn_tensors(const jp_plan& plan, const PreparedStep& s, const fb::RnnParams& p) {
  RnnTensors t;
  uint32_t next = 0;
  t.x = &input_at(plan, s, next++);
  t.w = &input_at(plan, s, next++);
  t.r = &input_at(plan, s, next++);
  if (p.has_bias()) t.b = &input_at(plan, s, next++);
  if (p.has_sequence_lens()) t.sequence_lens = &input_at(plan, s, next++);
  if (p.has_initial_h()) t.initial_h = &input_at(plan, s, next++);
  if (p.has_initial_c()) t.initial_c = &input_at(plan, s, next++);
  if (p.has_peepholes()) t.p = &input_at(plan, s, next++);
  next = 0;
  if (p.has_y()) t.y = &output_at(plan, s, next++);
  if (p.has_y_h()) t.y_h = &output_at(plan, s, next++);
  if (p.has_y_c()) t.y_c = &output_at(plan, s, next++);
  return t;
}

// One float dtype for all of them: Float32, or Float16 storage in CUDA plans.
Status check_rnn_dtypes(const jp_plan& plan, const PreparedStep& s, const RnnTensors& t) {
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
  const fb::DType want = plan.backend == JP_BACKEND_CUDA && t.x->dtype == fb::DType::Float16
                             ? fb::DType::Float16
                             : fb::DType::Float32;
  for (const auto& f : floats) {
    if (f.tensor) JP_RETURN_IF_ERROR(check_role_dtype(s, *f.tensor, want, f.role));
  }
  if (t.sequence_lens) {
    JP_RETURN_IF_ERROR(check_role_dtype(s, *t.sequence_lens, fb::DType::Int32, "sequence_lens"));
  }
  return JP_OK;
}

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

// The cell's activations, A per direction (D directions).
Status read_rnn_activations(const PreparedStep& s, const fb::RnnParams& p, int64_t D,
                            kernels::RnnParams* k) {
  const int A = kernels::rnn_activation_count(k->cell);
  const auto* acts = p.activations();
  if (acts == nullptr || acts->size() != static_cast<uint32_t>(D * A)) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %u activations, expected %d (%d per direction)",
                s.name, acts ? acts->size() : 0u, static_cast<int>(D * A), A);
  }
  for (int64_t d = 0; d < D; ++d) {
    for (int a = 0; a < A; ++a) {
      const fb::RnnActivation* act = acts->Get(static_cast<uint32_t>(d * A + a));
      JP_RETURN_IF_ERROR(
          check_enum<kernels::kRnnActivationKindCount>(s, act->kind(), "recurrent activation"));
      k->activations[d][a] = {static_cast<kernels::RnnActivationKind>(act->kind()), act->alpha(),
                              act->beta()};
    }
  }
  return JP_OK;
}

}  // namespace

Status prepare_rnn(const jp_plan& plan, const fb::RnnParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_enum<kernels::kRnnCellCount>(*s, p.cell(), "recurrent cell"));
  constexpr int kDirections = static_cast<int>(kernels::RnnDirection::kBidirectional) + 1;
  JP_RETURN_IF_ERROR(check_enum<kDirections>(*s, p.direction(), "direction"));
  kernels::RnnParams& k = fresh_params(&s->params.rnn);
  k.cell = static_cast<kernels::RnnCell>(p.cell());
  k.direction = static_cast<kernels::RnnDirection>(p.direction());
  const bool lstm = k.cell == kernels::RnnCell::kLstm;
  if (!lstm && (p.has_initial_c() || p.has_peepholes() || p.has_y_c() || p.input_forget())) {
    return invalid(*s, "initial_c, P, Y_c and input_forget belong to LSTM only");
  }
  if (k.cell != kernels::RnnCell::kGru && p.linear_before_reset()) {
    return invalid(*s, "linear_before_reset belongs to GRU only");
  }
  const uint32_t inputs = 3u + p.has_bias() + p.has_sequence_lens() + p.has_initial_h() +
                          p.has_initial_c() + p.has_peepholes();
  const uint32_t outputs = 0u + p.has_y() + p.has_y_h() + p.has_y_c();
  JP_RETURN_IF_ERROR(check_arity_of_params(*s, "Rnn", inputs, outputs));
  const RnnTensors t = rnn_tensors(plan, *s, p);
  JP_RETURN_IF_ERROR(check_rnn_dtypes(plan, *s, t));

  k.batch_major = p.batch_major();
  if (t.x->rank != 3) return invalid(*s, "X must have rank 3");
  k.seq_length = t.x->dims[k.batch_major ? 1 : 0];
  k.batch = t.x->dims[k.batch_major ? 0 : 1];
  k.input_size = t.x->dims[2];
  const int64_t D = k.direction == kernels::RnnDirection::kBidirectional ? 2 : 1;
  const int64_t G = kernels::rnn_gate_count(k.cell);
  // W's gate rows bound hidden_size before any product with it is formed.
  k.hidden_size = p.hidden_size();
  if (k.hidden_size < 1 || t.w->rank != 3 || k.hidden_size > t.w->dims[1]) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': hidden_size %" PRId64 " does not fit W '%s' (%d gates per direction)",
                s->name, k.hidden_size, t.w->name, static_cast<int>(G));
  }
  JP_RETURN_IF_ERROR(check_rnn_shapes(*s, t, k, D, G));
  JP_RETURN_IF_ERROR(read_rnn_activations(*s, p, D, &k));
  k.has_clip = p.has_clip();
  k.clip = p.clip();
  if (k.has_clip && !(std::isfinite(k.clip) && k.clip >= 0.f)) {
    return invalid(*s, "clip must be a finite non-negative number");
  }
  k.input_forget = p.input_forget();
  k.linear_before_reset = p.linear_before_reset();
  k.has_bias = p.has_bias();
  k.has_sequence_lens = p.has_sequence_lens();
  k.has_initial_h = p.has_initial_h();
  k.has_initial_c = p.has_initial_c();
  k.has_peepholes = p.has_peepholes();
  k.has_y = p.has_y();
  k.has_y_h = p.has_y_h();
  k.has_y_c = p.has_y_c();
  const int64_t need = kernels::cpu::rnn_workspace_bytes(k);
  if (s->workspace_bytes < static_cast<uint64_t>(need)) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': workspace of %" PRIu64 " bytes, the recurrence needs %" PRId64, s->name,
                s->workspace_bytes, need);
  }
  return JP_OK;
}

void run_rnn_cpu(const PreparedStep& s, void* const* tensors, void* workspace) {
  const kernels::RnnParams& p = s.params.rnn;
  // Optional tensors follow X, W, R (and Y, Y_h, Y_c) in ONNX order, present ones only.
  uint32_t next = 3;
  const float* b = p.has_bias ? in_f32(s, tensors, next++) : nullptr;
  const int32_t* lens =
      p.has_sequence_lens ? static_cast<const int32_t*>(in(s, tensors, next++)) : nullptr;
  const float* initial_h = p.has_initial_h ? in_f32(s, tensors, next++) : nullptr;
  const float* initial_c = p.has_initial_c ? in_f32(s, tensors, next++) : nullptr;
  const float* peepholes = p.has_peepholes ? in_f32(s, tensors, next++) : nullptr;
  next = 0;
  float* y = p.has_y ? out_f32(s, tensors, next++) : nullptr;
  float* y_h = p.has_y_h ? out_f32(s, tensors, next++) : nullptr;
  float* y_c = p.has_y_c ? out_f32(s, tensors, next++) : nullptr;
  kernels::cpu::rnn(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), in_f32(s, tensors, 2), b, lens,
                    initial_h, initial_c, peepholes, y, y_h, y_c, workspace);
}

}  // namespace jetplan::rt
