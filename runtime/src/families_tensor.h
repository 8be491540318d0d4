// Prepare and CPU run functions of the tensor families (rows in families_tensor.inc): data
// movement (Transpose, Slice, Gather, GatherElements, Pad, Broadcast, Where), typed math (Unary,
// Elementwise) and Cast. Prepare (prepare_tensor.cc) checks every shape, dtype and attribute of
// the step against its tensors, since a plan is untrusted; run (backend_cpu_tensor.cc) calls the
// reference kernel (kernels/cpu/tensor_ops.h) with what prepare resolved.
#pragma once

#include "runtime/src/plan.h"

namespace jetplan::rt {

Status prepare_transpose(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_slice(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_gather(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_gather_elements(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_pad(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_broadcast(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_unary(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_elementwise(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_where(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_cast(const jp_plan&, const fb::Step&, PreparedStep*);

void run_transpose_cpu(const PreparedStep&, void* const*, void*);
void run_slice_cpu(const PreparedStep&, void* const*, void*);
void run_gather_cpu(const PreparedStep&, void* const*, void*);
void run_gather_elements_cpu(const PreparedStep&, void* const*, void*);
void run_pad_cpu(const PreparedStep&, void* const*, void*);
void run_broadcast_cpu(const PreparedStep&, void* const*, void*);
void run_unary_cpu(const PreparedStep&, void* const*, void*);
void run_elementwise_cpu(const PreparedStep&, void* const*, void*);
void run_where_cpu(const PreparedStep&, void* const*, void*);
void run_cast_cpu(const PreparedStep&, void* const*, void*);

}  // namespace jetplan::rt
