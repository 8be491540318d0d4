// Broadcast: ONNX Expand (x right-aligned to y, dims of 1 repeated) and Tile (x repeated whole
// along each dim), for any dtype.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_broadcast(const jp_plan& plan, const fb::BroadcastParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_moves_one(plan, *s, "Broadcast"));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  kernels::BroadcastParams& k = fresh_params(&s->params.broadcast);
  k.rank = y.rank;
  k.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  if (p.tile()) {
    // Tile: y repeats x whole along each dim.
    if (x.rank != y.rank) return invalid(*s, "Tile input and output ranks differ");
    for (int32_t d = 0; d < y.rank; ++d) {
      if (y.dims[d] % x.dims[d] != 0) {
        return invalid(*s, "Tile output dims are not multiples of the input's");
      }
    }
  }
  // Expand: x right-aligned to y, each dim 1 (broadcast) or y's. Tile got equal ranks above.
  if (x.rank > y.rank) return invalid(*s, "input rank is above the output's");
  int64_t stride = 1;
  for (int32_t d = y.rank - 1; d >= 0; --d) {
    const int32_t xd = d - (y.rank - x.rank);
    const int64_t dim = xd >= 0 ? x.dims[xd] : 1;
    if (!p.tile() && dim != 1 && dim != y.dims[d]) {
      return invalid(*s, "input does not broadcast to the output shape");
    }
    k.out_dims[d] = y.dims[d];
    k.x_dims[d] = dim;
    k.x_strides[d] = stride;
    stride *= dim;
  }
  return JP_OK;
}

void run_broadcast_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::broadcast(s.params.broadcast, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
