// Gather: slices of data along an axis picked by an index tensor (ONNX Gather).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/gather_operands.h"
#include "runtime/src/prepare/op_families.h"

namespace jetplan::rt {

Status prepare_gather(const jp_plan& plan, const fb::GatherParams& p, PreparedStep* s) {
  GatherOperands g{};
  JP_RETURN_IF_ERROR(
      read_gather_operands(plan, s, "Gather", p.axis(), &g));
  const TensorInfo &data = *g.data, &indices = *g.indices, &y = *g.y;
  const int32_t axis = g.axis;
  // y = data's dims before the axis, then the indices' dims, then data's dims after the axis.
  if (y.rank != data.rank - 1 + indices.rank) {
    return invalid(*s, "output shape is not data's with the axis replaced by the indices' shape");
  }
  for (int32_t d = 0; d < y.rank; ++d) {
    const int64_t want = d < axis                  ? data.dims[d]
                         : d < axis + indices.rank ? indices.dims[d - axis]
                                                   : data.dims[d - indices.rank + 1];
    if (y.dims[d] != want) {
      return invalid(*s, "output shape is not data's with the axis replaced by the indices' shape");
    }
  }
  kernels::GatherParams& k = fresh_params(&s->params.gather);
  split_at(data, axis, &k.outer, &k.inner);
  k.axis_len = data.dims[axis];
  k.num_indices = static_cast<int64_t>(indices.elements);
  k.elem_bytes = static_cast<int64_t>(dtype_size(data.dtype));
  k.index_dtype = kernel_dtype(indices.dtype);
  return JP_OK;
}

void run_gather_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::gather(s.params.gather, in(s, tensors, 0), in(s, tensors, 1), out(s, tensors));
}

}  // namespace jetplan::rt
