// GatherElements: data picked element by element along an axis by an index tensor of the
// output's shape.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/gather_operands.h"
#include "runtime/src/prepare/op_families.h"

namespace jetplan::rt {

Status prepare_gather_elements(const jp_plan& plan, const fb::GatherElementsParams& p,
                               PreparedStep* s) {
  GatherOperands g{};
  JP_RETURN_IF_ERROR(read_gather_operands(plan, s, "GatherElements", p.axis(), &g));
  const TensorInfo &data = *g.data, &indices = *g.indices, &y = *g.y;
  if (!same_shape(indices, y) || y.rank != data.rank) {
    return invalid(*s, "indices and output must have one shape, of data's rank (>= 1)");
  }
  kernels::GatherElementsParams& k = fresh_params(&s->params.gather_elements);
  k.rank = data.rank;
  k.axis = g.axis;
  k.elem_bytes = static_cast<int64_t>(dtype_size(data.dtype));
  k.index_dtype = kernel_dtype(indices.dtype);
  for (int32_t d = 0; d < data.rank; ++d) {
    if (d != g.axis && y.dims[d] > data.dims[d]) {
      return invalid(*s, "indices are larger than data off the axis");
    }
    k.data_dims[d] = data.dims[d];
    k.out_dims[d] = y.dims[d];
  }
  return JP_OK;
}

void run_gather_elements_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::gather_elements(s.params.gather_elements, in(s, tensors, 0), in(s, tensors, 1),
                                out(s, tensors));
}

}  // namespace jetplan::rt
