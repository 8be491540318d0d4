// The registry of op families: one row per fb::OpFamily value, in enum order (checked at compile
// time in op_families.cc). A row says which params table the step must carry, how load turns it
// into kernel parameters (checking every shape against the tensors, since a plan is untrusted)
// and which CPU kernel runs it.
#pragma once

#include "runtime/src/plan.h"
// Families of the ONNX coverage, one group per file pair (prepare_<group>.cc,
// backend_cpu_<group>.cc); their registry rows are in families_<group>.inc.
#include "runtime/src/families_nn.h"
#include "runtime/src/families_seq.h"
#include "runtime/src/families_tensor.h"

namespace jetplan::rt {

using PrepareFn = Status (*)(const jp_plan& plan, const fb::Step& step, PreparedStep* out);

struct OpFamilyEntry {
  fb::OpFamily op;
  fb::StepParams params_type;
  const char* name;
  PrepareFn prepare;
  RunCpuFn run_cpu;
};

// Null when `op` is not a value this runtime knows.
const OpFamilyEntry* find_op_family(fb::OpFamily op);

// A family this runtime build does not implement: its plans fail at load, naming it.
Status prepare_unimplemented(const jp_plan&, const fb::Step&, PreparedStep*);
void run_unimplemented(const PreparedStep&, void* const*, void*);

// The step's inputs and output 0 share one float dtype: Float32, or Float16 in CUDA plans.
Status check_float32(const jp_plan& plan, const PreparedStep& s);

// Prepare functions (prepare.cc).
Status prepare_conv(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_pool(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_gemm(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_binary(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_activation(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_softmax(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_batch_norm(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_concat(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_copy(const jp_plan&, const fb::Step&, PreparedStep*);
// A fused chain of float elementwise ops (prepare_pointwise.cc).
Status prepare_pointwise(const jp_plan&, const fb::Step&, PreparedStep*);

// CPU kernels behind each family (backend_cpu.cc).
void run_conv_cpu(const PreparedStep&, void* const*, void*);
void run_pool_cpu(const PreparedStep&, void* const*, void*);
void run_pool_indices_cpu(const PreparedStep&, void* const*, void*);  // MaxPool + Indices
void run_gemm_cpu(const PreparedStep&, void* const*, void*);
void run_binary_cpu(const PreparedStep&, void* const*, void*);
void run_activation_cpu(const PreparedStep&, void* const*, void*);
void run_softmax_cpu(const PreparedStep&, void* const*, void*);
void run_batch_norm_cpu(const PreparedStep&, void* const*, void*);
void run_concat_cpu(const PreparedStep&, void* const*, void*);
void run_copy_cpu(const PreparedStep&, void* const*, void*);
void run_pointwise_cpu(const PreparedStep&, void* const*, void*);


}  // namespace jetplan::rt
