// Pool: max or average pooling over 1 to 3 spatial dims, with ONNX MaxPool's optional Indices
// output (CPU backend, NCHW); Max also of Int8.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"
#include "runtime/src/prepare/sliding_window.h"

namespace jetplan::rt {
namespace {

// MaxPool with Indices, chosen by prepare for a step with a second output.
void run_pool_indices_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::pool(s.params.pool, in_f32(s, tensors, 0), out_f32(s, tensors),
                     out_i64(s, tensors, 1));
}

// The second output: Int64 of y's shape, from a Max pool in NCHW.
Status check_indices(const PreparedStep& s, const fb::PoolParams& p, const TensorInfo& x,
                     const TensorInfo& y, const TensorInfo& idx) {
  if (p.kind() != fb::PoolKind::Max || channels_last(x)) {
    return fail(JP_ERROR_UNSUPPORTED,
                "step '%s': a Pool step with an indices output must be a Max pool in NCHW",
                s.name);
  }
  if (idx.dtype != fb::DType::Int64 || !same_shape(idx, y)) {
    return invalid(s, "the indices output must be Int64 of the output's shape");
  }
  return JP_OK;
}

void run_max_pool_int8_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::max_pool_int8(s.params.pool, static_cast<const int8_t*>(in(s, tensors, 0)),
                              static_cast<int8_t*>(out(s, tensors)));
}

}  // namespace

Status prepare_pool(const jp_plan& plan, const fb::PoolParams& p, PreparedStep* s) {
  const bool with_indices = s->outputs->size() == 2;
  if (with_indices) {
    if (s->inputs->size() != 1) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s' (Pool) has %u inputs, expected 1", s->name,
                  s->inputs->size());
    }
  } else {
    JP_RETURN_IF_ERROR(check_input_range(*s, "Pool", 1, 1));
  }
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  // Int8: an INT8 plan's max pool between INT8 convs (y keeps x's scale).
  const bool int8 = x.dtype == fb::DType::Int8;
  if (int8) {
    if (y.dtype != fb::DType::Int8 || p.kind() != fb::PoolKind::Max || with_indices) {
      return fail(JP_ERROR_UNSUPPORTED,
                  "step '%s': an Int8 Pool must be a Max pool with an Int8 output and no indices",
                  s->name);
    }
    s->run_cpu = run_max_pool_int8_cpu;
  } else {
    JP_RETURN_IF_ERROR(check_float32(plan, *s));
  }
  if (with_indices) {
    JP_RETURN_IF_ERROR(check_indices(*s, p, x, y, output_at(plan, *s, 1)));
    s->run_cpu = run_pool_indices_cpu;
  }
  Window win;
  JP_RETURN_IF_ERROR(read_window(*s, p, x, y, &win, p.ceil_mode()));
  if (y.dims[0] != x.dims[0] || channel_dim(y) != channel_dim(x)) {
    return invalid(*s, "output batch or channels do not match the input");
  }
  if (p.kind() != fb::PoolKind::Max && p.kind() != fb::PoolKind::Average) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown pool kind %d", s->name,
                static_cast<int>(p.kind()));
  }
  for (int32_t i = 0; i < win.rank; ++i) {
    // A window wholly inside the padding would have nothing to reduce.
    if (win.pad_begin[i] >= win.dilation[i] * (win.kernel[i] - 1) + 1 ||
        win.pad_end[i] >= win.dilation[i] * (win.kernel[i] - 1) + 1) {
      return invalid(*s, "pooling pads must be smaller than the window");
    }
  }
  kernels::PoolParams& k = fresh_params(&s->params.pool);
  k.kind = p.kind() == fb::PoolKind::Max ? kernels::PoolKind::kMax : kernels::PoolKind::kAverage;
  k.spatial_rank = win.rank;
  k.batch = x.dims[0];
  k.channels = channel_dim(x);
  k.channels_last = channels_last(x);
  copy_window(win, &k);
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) k.pad_end[i] = win.pad_end[i];
  k.count_include_pad = p.count_include_pad();
  if (p.indices_column_major() && !with_indices) {
    return invalid(*s, "indices_column_major without an indices output");
  }
  k.indices_column_major = p.indices_column_major();
  k.write_indices = with_indices;
  return JP_OK;
}

void run_pool_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::pool(s.params.pool, in_f32(s, tensors, 0), out_f32(s, tensors));
}

}  // namespace jetplan::rt
