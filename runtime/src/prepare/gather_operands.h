// What Gather and GatherElements share: inputs data (rank >= 1) and indices (Int32 or Int64),
// an output of data's dtype, and the axis attribute (negative counts from the end) resolved to a
// dim of data. Gather indices are data, not plan: the kernels handle bad ones at run time.
#pragma once

#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

struct GatherOperands {
  const TensorInfo* data;  // into plan.tensors, as the other two
  const TensorInfo* indices;
  const TensorInfo* y;
  int32_t axis;
};

inline Status read_gather_operands(const jp_plan& plan, PreparedStep* s, const char* family,
                                   int32_t axis, GatherOperands* out) {
  JP_RETURN_IF_ERROR(check_arity(*s, family, 2, 1));
  const TensorInfo& data = input_at(plan, *s, 0);
  const TensorInfo& indices = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_same_dtype(*s, data, y));
  if (indices.dtype != fb::DType::Int32 && indices.dtype != fb::DType::Int64) {
    return invalid(*s, "indices must be Int32 or Int64");
  }
  if (data.rank < 1) return invalid(*s, "data must have rank >= 1");
  if (axis < 0) axis += data.rank;
  if (axis < 0 || axis >= data.rank) return invalid(*s, "axis is out of range");
  *out = {&data, &indices, &y, axis};
  return JP_OK;
}

}  // namespace jetplan::rt
