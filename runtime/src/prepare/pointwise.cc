// Load-time preparation of Pointwise steps (a fused chain of float elementwise ops): checks the
// program (every register read is written before, every input index and op exists, sizes within
// the kernel's limits) and broadcasts each step input to the output shape by strides, merging
// dims that every input walks contiguously so the kernels index as few dims as they can.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

static_assert(static_cast<int>(kernels::PointwiseInstrKind::kActivation) ==
                      static_cast<int>(fb::PointwiseInstrKind::Activation) &&
                  kernels::kPointwiseInstrKindCount ==
                      static_cast<int>(fb::PointwiseInstrKind::MAX) + 1,
              "kernels::PointwiseInstrKind must follow fb::PointwiseInstrKind");
static_assert(sizeof(fb::PointwiseInstr) == 16, "fb::PointwiseInstr layout changed");

Status program_error(const PreparedStep& s, int32_t i, const char* what, int value) {
  return fail(JP_ERROR_INVALID_PLAN, "step '%s' (Pointwise): instruction %d %s (%d)", s.name, i,
              what, value);
}

Status read_program(const fb::PointwiseParams& p, int32_t num_inputs, PreparedStep* s,
                    kernels::PointwiseParams* k) {
  const auto* program = p.program();
  const uint32_t n = program != nullptr ? program->size() : 0;
  if (n == 0 || n > static_cast<uint32_t>(kernels::kMaxPointwiseInstrs)) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' (Pointwise): the program has %u instructions, "
                "expected 1..%d", s->name, n, kernels::kMaxPointwiseInstrs);
  }
  k->num_instrs = static_cast<int32_t>(n);
  for (int32_t i = 0; i < k->num_instrs; ++i) {
    const fb::PointwiseInstr& in = *program->Get(static_cast<flatbuffers::uoffset_t>(i));
    kernels::PointwiseInstr& out = k->program[i];
    const int kind = static_cast<int>(in.kind());
    const int op = in.op(), a = in.a(), b = in.b();
    if (kind < 0 || kind >= kernels::kPointwiseInstrKindCount) {
      return program_error(*s, i, "has an unknown kind", kind);
    }
    out.kind = static_cast<kernels::PointwiseInstrKind>(kind);
    out.op = in.op();
    out.a = in.a();
    out.b = in.b();
    // A register is the result of the instruction of its index: sources are earlier ones.
    const bool reads_a = out.kind != kernels::PointwiseInstrKind::kLoad;
    const bool reads_b = out.kind == kernels::PointwiseInstrKind::kBinary;
    if (reads_a && a >= i) return program_error(*s, i, "reads a register not written before it", a);
    if (reads_b && b >= i) return program_error(*s, i, "reads a register not written before it", b);
    switch (out.kind) {
      case kernels::PointwiseInstrKind::kLoad:
        if (op >= num_inputs) return program_error(*s, i, "loads a step input out of range", op);
        break;
      case kernels::PointwiseInstrKind::kBinary:
        if (op >= kernels::kBinaryOpCount) return program_error(*s, i, "has an unknown binary op", op);
        break;
      case kernels::PointwiseInstrKind::kUnary:
        if (op >= kernels::kUnaryOpCount ||
            kernels::unary_is_predicate(static_cast<kernels::UnaryOp>(op))) {
          return program_error(*s, i, "has a unary op that is no float math", op);
        }
        break;
      case kernels::PointwiseInstrKind::kActivation: {
        const int act = static_cast<int>(in.activation().kind());
        if (act < 0 || act >= kernels::kActivationKindCount) {
          return program_error(*s, i, "has an unknown activation", act);
        }
        out.act.kind = static_cast<kernels::ActivationKind>(act);
        out.act.alpha = in.activation().alpha();
        out.act.beta = in.activation().beta();
        break;
      }
    }
  }
  return JP_OK;
}

}  // namespace

Status prepare_pointwise(const jp_plan& plan, const fb::PointwiseParams& p, PreparedStep* s) {
  const uint32_t num_inputs = s->inputs->size();
  if (num_inputs < 1 || num_inputs > static_cast<uint32_t>(kernels::kMaxPointwiseInputs) ||
      s->outputs->size() != 1) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' (Pointwise) has %u inputs and %u outputs, "
                "expected 1..%d and 1", s->name, num_inputs, s->outputs->size(),
                kernels::kMaxPointwiseInputs);
  }
  JP_RETURN_IF_ERROR(check_float32(plan, *s));
  kernels::PointwiseParams& k = fresh_params(&s->params.pointwise);
  k.num_inputs = static_cast<int32_t>(num_inputs);
  JP_RETURN_IF_ERROR(read_program(p, k.num_inputs, s, &k));

  // Right-align every input to the output; dense strides, 0 where a dim of 1 broadcasts.
  const TensorInfo& y = output_at(plan, *s, 0);
  const int32_t rank = y.rank > 0 ? y.rank : 1;
  int64_t dims[kMaxRank];
  int64_t strides[kernels::kMaxPointwiseInputs][kMaxRank];
  for (int32_t d = 0; d < rank; ++d) dims[d] = y.rank > 0 ? y.dims[d] : 1;
  for (int32_t i = 0; i < k.num_inputs; ++i) {
    const TensorInfo& x = input_at(plan, *s, static_cast<uint32_t>(i));
    if (x.rank > y.rank) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s' (Pointwise): input '%s' has rank %d, above "
                  "the output's %d", s->name, x.name, x.rank, y.rank);
    }
    int64_t stride = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
      const int32_t xd = d - (rank - x.rank);
      const int64_t dim = xd >= 0 ? x.dims[xd] : 1;
      if (dim != dims[d] && dim != 1) {
        return fail(JP_ERROR_INVALID_PLAN, "step '%s' (Pointwise): input '%s' does not broadcast "
                    "to the output shape (dim %d is %lld, the output's %lld)", s->name, x.name, d,
                    static_cast<long long>(dim), static_cast<long long>(dims[d]));
      }
      strides[i][d] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
  }
  // Drop dims of 1 (coordinate 0 everywhere) and merge dim d into the one before it where
  // every input steps over both as over one dim.
  int32_t out_rank = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    bool merge = out_rank > 0;
    for (int32_t i = 0; merge && i < k.num_inputs; ++i) {
      merge = k.in_strides[i][out_rank - 1] == strides[i][d] * dims[d];
    }
    if (merge) {
      k.out_dims[out_rank - 1] *= dims[d];
      for (int32_t i = 0; i < k.num_inputs; ++i) k.in_strides[i][out_rank - 1] = strides[i][d];
    } else {
      k.out_dims[out_rank] = dims[d];
      for (int32_t i = 0; i < k.num_inputs; ++i) k.in_strides[i][out_rank] = strides[i][d];
      ++out_rank;
    }
  }
  k.rank = out_rank;
  return JP_OK;
}

void run_pointwise_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const void* inputs[kernels::kMaxPointwiseInputs];
  for (int32_t i = 0; i < s.params.pointwise.num_inputs; ++i) {
    inputs[i] = in(s, tensors, static_cast<uint32_t>(i));
  }
  // CPU plans are Float32 (prepare's check_float32).
  kernels::cpu::pointwise_chain(s.params.pointwise, kernels::DType::kFloat32, inputs,
                                out(s, tensors));
}

}  // namespace jetplan::rt
