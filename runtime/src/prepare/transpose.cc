// Transpose: a permutation of the dims of a tensor of any dtype (Float16 to Float32 and Float32
// to Float16 convert as they move).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_transpose(const jp_plan& plan, const fb::TransposeParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Transpose", 1, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  // Float16 to Float32 and back convert as they move; every other pair of types must be the same.
  const bool half_to_float = x.dtype == fb::DType::Float16 && y.dtype == fb::DType::Float32;
  const bool float_to_half = x.dtype == fb::DType::Float32 && y.dtype == fb::DType::Float16;
  if (!half_to_float && !float_to_half) JP_RETURN_IF_ERROR(check_same_dtype(*s, x, y));
  const uint32_t perm_size = p.perm() ? p.perm()->size() : 0;
  // A Transpose writing its part of a Concat in place (y_block > 0) has the Concat's y.
  const bool in_place = p.y_block() != 0;
  if (perm_size != static_cast<uint32_t>(x.rank) || (!in_place && y.rank != x.rank)) {
    return invalid(*s, "perm, input and output must have the same rank");
  }
  int64_t dense[kMaxRank];
  int64_t stride = 1;
  for (int32_t d = x.rank - 1; d >= 0; --d) {
    dense[d] = stride;
    stride *= x.dims[d];
  }
  kernels::TransposeParams& k = fresh_params(&s->params.transpose);
  k.rank = x.rank;
  k.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  k.half_to_float = half_to_float;
  k.float_to_half = float_to_half;
  bool seen[kMaxRank] = {};
  for (int32_t d = 0; d < x.rank; ++d) {
    const int32_t from = p.perm()->Get(static_cast<uint32_t>(d));
    if (from < 0 || from >= x.rank || seen[from]) return invalid(*s, "perm is not a permutation");
    seen[from] = true;
    if (!in_place && y.dims[d] != x.dims[from])
      return invalid(*s, "output shape is not the permuted input's");
    k.out_dims[d] = x.dims[from];
    k.x_strides[d] = dense[from];
  }
  if (!in_place && (p.y_block_stride() != 0 || p.y_offset() != 0))
    return invalid(*s, "y_block_stride and y_offset are set but y_block is 0");
  if (in_place) {
    // x's elements (`stride` now) in blocks of y_block, y_block_stride apart from y_offset, all
    // inside y.
    int64_t y_count = 1;
    for (int32_t d = 0; d < y.rank; ++d) y_count *= y.dims[d];
    const int64_t block = p.y_block(), step = p.y_block_stride(), offset = p.y_offset();
    if (block < 0 || stride % block != 0 || step < block || offset < 0 ||
        offset > y_count - block || (stride / block - 1) > (y_count - block - offset) / step)
      return invalid(*s, "y_block, y_block_stride and y_offset place the result outside its output");
    k.y_block = block;
    k.y_block_stride = step;
    k.y_offset = offset;
  }
  // The same mapping over the fewest dims (extent-1 dims dropped, dims that x holds as one
  // merged; kernels/transpose.h coalesce_transpose): the kernels' index math runs over these.
  int64_t dims[kMaxRank], strides[kMaxRank];
  k.rank = kernels::coalesce_transpose(k, dims, strides);
  for (int32_t d = 0; d < kMaxRank; ++d) {
    k.out_dims[d] = d < k.rank ? dims[d] : 0;
    k.x_strides[d] = d < k.rank ? strides[d] : 0;
  }
  return JP_OK;
}

void run_transpose_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::transpose(s.params.transpose, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
