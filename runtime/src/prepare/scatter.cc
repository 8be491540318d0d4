// Scatter: ScatterElements and ScatterND, y = data with the updates applied (kernels/scatter.h).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_scatter(const jp_plan& plan, const fb::ScatterParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Scatter", 3, 1));
  const TensorInfo& data = input_at(plan, *s, 0);
  const TensorInfo& indices = input_at(plan, *s, 1);
  const TensorInfo& updates = input_at(plan, *s, 2);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_same_dtype(*s, data, y));
  JP_RETURN_IF_ERROR(check_same_dtype(*s, data, updates));
  if (!same_shape(data, y)) return invalid(*s, "the output must have data's shape");
  if (indices.dtype != fb::DType::Int32 && indices.dtype != fb::DType::Int64) {
    return invalid(*s, "indices must be Int32 or Int64");
  }
  if (p.reduction() > fb::ScatterReduction::MAX) return invalid(*s, "unknown reduction");
  kernels::ScatterParams& k = fresh_params(&s->params.scatter);
  k.nd = p.nd();
  k.sorted = p.nd() && p.sorted();
  k.axis = p.axis();
  k.reduction = static_cast<kernels::ScatterReduction>(p.reduction());
  k.dtype = kernel_dtype(data.dtype);
  k.elem_bytes = static_cast<int64_t>(dtype_size(data.dtype));
  k.index_dtype = kernel_dtype(indices.dtype);
  if (!kernels::scatter_reduces(k.reduction, k.dtype)) {
    return invalid(*s, "a reduction needs Float16, Float32, Float64, Int32 or Int64 data");
  }
  const char* why = kernels::scatter_shapes(&k, data.rank, data.dims, indices.rank, indices.dims,
                                            updates.rank, updates.dims);
  return why == nullptr ? JP_OK : invalid(*s, why);
}

void run_scatter_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::scatter(s.params.scatter, in(s, tensors, 0), in(s, tensors, 1), in(s, tensors, 2),
                        out(s, tensors));
}

}  // namespace jetplan::rt
