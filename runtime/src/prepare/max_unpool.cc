// MaxUnpool: y zero but for x scattered to the flat positions `indices` name (kernels/max_unpool.h).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_max_unpool(const jp_plan& plan, const fb::MaxUnpoolParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "MaxUnpool", 2, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& indices = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_same_dtype(*s, x, y));
  if (indices.dtype != fb::DType::Int64) return invalid(*s, "indices must be Int64");
  if (!same_shape(x, indices)) return invalid(*s, "indices must have x's shape");
  const size_t elem = dtype_size(x.dtype);
  if (elem != 2 && elem != 4 && elem != 8) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': MaxUnpool on %s is not supported (elements of "
                "2, 4 or 8 bytes are)", s->name, fb::EnumNameDType(x.dtype));
  }
  kernels::MaxUnpoolParams& k = fresh_params(&s->params.max_unpool);
  k.x_count = static_cast<int64_t>(x.elements);
  k.y_count = static_cast<int64_t>(y.elements);
  k.elem_bytes = static_cast<uint32_t>(elem);
  k.rank = 0;
  const auto* shape = p.index_shape();
  if (shape == nullptr || shape->size() == 0) return JP_OK;  // a flat position of y
  if (static_cast<int32_t>(shape->size()) != y.rank) {
    return invalid(*s, "index_shape must have y's rank");
  }
  bool same = true;
  for (int32_t d = 0; d < y.rank; ++d) {
    const int64_t e = shape->Get(static_cast<flatbuffers::uoffset_t>(d));
    if (e < 1 || e > y.dims[d]) return invalid(*s, "index_shape must lie within y's extents");
    k.index_dims[d] = e;
    k.y_dims[d] = y.dims[d];
    same = same && e == y.dims[d];
  }
  if (!same) k.rank = y.rank;
  return JP_OK;
}

void run_max_unpool_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::max_unpool(s.params.max_unpool, in(s, tensors, 0),
                           static_cast<const int64_t*>(in(s, tensors, 1)), out(s, tensors));
}

}  // namespace jetplan::rt
