// Load-time preparation of each op family: checks a step's arity, dtypes and shapes against its
// params (a plan is untrusted: a kernel must never index past a tensor), then resolves the
// kernel parameter struct that run passes unchanged to the kernel.
#include <cinttypes>

#include "runtime/src/op_families.h"

namespace jetplan::rt {
namespace {

constexpr int64_t kMaxWindow = int64_t{1} << 31;

const TensorInfo& tensor_at(const jp_plan& plan, const flatbuffers::Vector<uint32_t>* list,
                            uint32_t i) {
  return plan.tensors[list->Get(i)];
}

Status check_arity(const fb::Step& step, const char* family, uint32_t min_inputs,
                   uint32_t max_inputs) {
  const uint32_t n = step.inputs()->size();
  if (n < min_inputs || n > max_inputs) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' (%s) has %u inputs, expected %u..%u",
                step.name() ? step.name()->c_str() : "", family, n, min_inputs, max_inputs);
  }
  if (step.outputs()->size() != 1) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' (%s) has %u outputs, expected 1",
                step.name() ? step.name()->c_str() : "", family, step.outputs()->size());
  }
  return JP_OK;
}

}  // namespace

// Every input and the output of a float compute step share one dtype: Float32 (the CPU kernels
// are FP32), or in CUDA plans Float16 too (FP16 storage, FP32 arithmetic).
Status check_float32(const jp_plan& plan, const PreparedStep& s) {
  const fb::DType want = tensor_at(plan, s.outputs, 0).dtype;
  const bool allowed = want == fb::DType::Float32 ||
                       (want == fb::DType::Float16 && plan.backend == JP_BACKEND_CUDA);
  if (!allowed) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': output '%s' is %s; the %s backend runs this op "
                "in %s only", s.name, tensor_at(plan, s.outputs, 0).name,
                fb::EnumNameDType(want), plan.backend == JP_BACKEND_CUDA ? "CUDA" : "CPU",
                plan.backend == JP_BACKEND_CUDA ? "Float32 or Float16" : "Float32");
  }
  for (uint32_t i = 0; i < s.inputs->size(); ++i) {
    const TensorInfo& t = tensor_at(plan, s.inputs, i);
    if (t.dtype != want) {
      return fail(JP_ERROR_UNSUPPORTED, "step '%s': input '%s' is %s, the output %s; the step's "
                  "tensors must share one float dtype", s.name, t.name,
                  fb::EnumNameDType(t.dtype), fb::EnumNameDType(want));
    }
  }
  return JP_OK;
}

namespace {

Status shape_error(const PreparedStep& s, const char* what) {
  return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s", s.name, what);
}

bool same_shape(const TensorInfo& a, const TensorInfo& b) {
  if (a.rank != b.rank) return false;
  for (int32_t d = 0; d < a.rank; ++d) {
    if (a.dims[d] != b.dims[d]) return false;
  }
  return true;
}

// check_float32, except that in CUDA plans a Float16 step may write a Float32 output: the
// output-cast epilogue of the Conv and Gemm kernels (their variant rows say which do).
Status check_float_epilogue(const jp_plan& plan, const PreparedStep& s) {
  if (plan.backend == JP_BACKEND_CUDA &&
      tensor_at(plan, s.outputs, 0).dtype == fb::DType::Float32 && s.inputs->size() > 0 &&
      tensor_at(plan, s.inputs, 0).dtype == fb::DType::Float16) {
    for (uint32_t i = 0; i < s.inputs->size(); ++i) {
      const TensorInfo& t = tensor_at(plan, s.inputs, i);
      if (t.dtype != fb::DType::Float16) {
        return fail(JP_ERROR_UNSUPPORTED, "step '%s': input '%s' is %s, input 0 Float16; the "
                    "step's inputs must share one float dtype", s.name, t.name,
                    fb::EnumNameDType(t.dtype));
      }
    }
    return JP_OK;
  }
  return check_float32(plan, s);
}

// The kernels' enums are numbered as the schema's (a plan value is cast straight across).
static_assert(kernels::kActivationKindCount == static_cast<int>(fb::ActivationKind::MAX) + 1 &&
                  static_cast<int>(kernels::ActivationKind::kSelu) ==
                      static_cast<int>(fb::ActivationKind::Selu),
              "kernels::ActivationKind must follow fb::ActivationKind");
static_assert(kernels::kBinaryOpCount == static_cast<int>(fb::BinaryOp::MAX) + 1 &&
                  static_cast<int>(kernels::BinaryOp::kPRelu) ==
                      static_cast<int>(fb::BinaryOp::PRelu),
              "kernels::BinaryOp must follow fb::BinaryOp");

Status to_activation(const PreparedStep& s, const fb::Activation* in, kernels::Activation* out) {
  if (in == nullptr) {
    *out = kernels::Activation{};
    return JP_OK;
  }
  const int kind = static_cast<int>(in->kind());
  if (kind < 0 || kind >= kernels::kActivationKindCount) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown activation %d", s.name, kind);
  }
  out->kind = static_cast<kernels::ActivationKind>(kind);
  out->alpha = in->alpha();
  out->beta = in->beta();
  return JP_OK;
}

// Spatial attributes: absent lists take `fallback`; present ones must have `rank` entries within
// [min_value, kMaxWindow].
Status read_spatial(const PreparedStep& s, const char* what,
                    const flatbuffers::Vector<int64_t>* list, int32_t rank, int64_t fallback,
                    int64_t min_value, int64_t* out) {
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) out[i] = i < rank ? fallback : 1;
  if (list == nullptr) return JP_OK;
  if (list->size() != 0 && reinterpret_cast<uintptr_t>(list->data()) % alignof(int64_t) != 0) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s is misaligned", s.name, what);
  }
  if (list->size() != static_cast<uint32_t>(rank)) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s has %u entries, expected %d", s.name, what,
                list->size(), rank);
  }
  for (int32_t i = 0; i < rank; ++i) {
    const int64_t v = list->Get(i);
    if (v < min_value || v > kMaxWindow) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s[%d] = %" PRId64 " is out of range",
                  s.name, what, i, v);
    }
    out[i] = v;
  }
  return JP_OK;
}

// Output extent of a sliding window, or -1 when the window does not fit once. Ceil mode rounds
// the last partial stride up, but never starts a window inside the end padding (ONNX, PyTorch).
int64_t window_output(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                      int64_t pad_begin, int64_t pad_end, bool ceil_mode = false) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = in + pad_begin + pad_end;
  if (padded < span) return -1;
  if (!ceil_mode) return (padded - span) / stride + 1;
  int64_t out = (padded - span + stride - 1) / stride + 1;
  if ((out - 1) * stride >= in + pad_begin) --out;
  return out;
}

struct Window {
  int32_t rank;
  int64_t kernel[kernels::kMaxSpatial];
  int64_t stride[kernels::kMaxSpatial];
  int64_t dilation[kernels::kMaxSpatial];
  int64_t pad_begin[kernels::kMaxSpatial];
  int64_t pad_end[kernels::kMaxSpatial];
  int64_t in_size[kernels::kMaxSpatial];
  int64_t out_size[kernels::kMaxSpatial];
};

// Channels-last steps: x, y (and the residual) NHWC; the layouts of a step's spatial tensors
// must agree.
bool channels_last(const TensorInfo& x) { return x.layout == fb::Layout::NHWC; }
int64_t channel_dim(const TensorInfo& t) {
  return channels_last(t) ? t.dims[t.rank - 1] : t.dims[1];
}

template <typename FbParams>
Status read_window(const PreparedStep& s, const FbParams& p, const TensorInfo& x,
                   const TensorInfo& y, Window* w, bool ceil_mode = false) {
  if (p.kernel() == nullptr || p.kernel()->size() < 1 ||
      p.kernel()->size() > static_cast<uint32_t>(kernels::kMaxSpatial)) {
    return shape_error(s, "kernel must have 1 to 3 spatial dims");
  }
  w->rank = static_cast<int32_t>(p.kernel()->size());
  JP_RETURN_IF_ERROR(read_spatial(s, "kernel", p.kernel(), w->rank, 1, 1, w->kernel));
  JP_RETURN_IF_ERROR(read_spatial(s, "stride", p.stride(), w->rank, 1, 1, w->stride));
  JP_RETURN_IF_ERROR(read_spatial(s, "dilation", p.dilation(), w->rank, 1, 1, w->dilation));
  JP_RETURN_IF_ERROR(read_spatial(s, "pad_begin", p.pad_begin(), w->rank, 0, 0, w->pad_begin));
  JP_RETURN_IF_ERROR(read_spatial(s, "pad_end", p.pad_end(), w->rank, 0, 0, w->pad_end));
  if (x.rank != w->rank + 2 || y.rank != w->rank + 2) {
    return shape_error(s, "input and output rank must be 2 + the kernel's spatial rank");
  }
  if (channels_last(x) != channels_last(y)) {
    return shape_error(s, "input and output layouts differ (NHWC and NCHW)");
  }
  const int32_t first = channels_last(x) ? 1 : 2;  // the first spatial dim
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) {
    w->in_size[i] = i < w->rank ? x.dims[first + i] : 1;
    w->out_size[i] = i < w->rank ? y.dims[first + i] : 1;
    if (i >= w->rank) {
      w->pad_begin[i] = 0;
      w->pad_end[i] = 0;
      continue;
    }
    const int64_t expected = window_output(w->in_size[i], w->kernel[i], w->stride[i],
                                           w->dilation[i], w->pad_begin[i], w->pad_end[i],
                                           ceil_mode);
    if (expected != w->out_size[i]) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': output '%s' spatial dim %d is %" PRId64 ", the window gives %" PRId64,
                  s.name, y.name, i, w->out_size[i], expected);
    }
  }
  return JP_OK;
}

}  // namespace

Status prepare_conv(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::ConvParams& p = *step.params_as_ConvParams();
  const uint32_t inputs = 2u + (p.has_bias() ? 1u : 0u) + (p.has_residual() ? 1u : 0u);
  JP_RETURN_IF_ERROR(check_arity(step, "Conv", inputs, inputs));
  JP_RETURN_IF_ERROR(check_float_epilogue(plan, *s));
  const TensorInfo& x = tensor_at(plan, s->inputs, 0);
  const TensorInfo& w = tensor_at(plan, s->inputs, 1);
  const TensorInfo& y = tensor_at(plan, s->outputs, 0);
  Window win;
  JP_RETURN_IF_ERROR(read_window(*s, p, x, y, &win));
  if (w.rank != win.rank + 2) return shape_error(*s, "weight rank must match the input rank");
  const int64_t groups = p.groups();
  const bool cl = channels_last(x);
  // Weights: [Cout, Cin / groups, *kernel], or [Cout, *kernel, Cin / groups] channels-last.
  const int64_t channels = channel_dim(x), out_channels = w.dims[0];
  const int64_t w_channels = cl ? w.dims[w.rank - 1] : w.dims[1];
  if (groups < 1 || channels % groups != 0 || out_channels % groups != 0 ||
      w_channels != channels / groups) {
    return shape_error(*s, "weight channels do not match the input channels and groups");
  }
  for (int32_t i = 0; i < win.rank; ++i) {
    if (w.dims[(cl ? 1 : 2) + i] != win.kernel[i]) {
      return shape_error(*s, "weight and kernel size differ");
    }
  }
  // A channel slice of a wider NHWC y: a Concat along channels written in place.
  const int64_t y_offset = p.y_channel_offset();
  const bool slice = y_offset != 0 || channel_dim(y) != out_channels;
  if (slice && (!cl || p.has_residual() || y_offset < 0 || y_offset > channel_dim(y) ||
                out_channels > channel_dim(y) - y_offset)) {
    return shape_error(*s, "a channel slice of the output must be NHWC, without residual, and "
                           "lie within the output's channels");
  }
  if (y.dims[0] != x.dims[0] || (!slice && channel_dim(y) != out_channels)) {
    return shape_error(*s, "output batch or channels do not match");
  }
  uint32_t next = 2;
  if (p.has_bias()) {
    const TensorInfo& bias = tensor_at(plan, s->inputs, next++);
    if (bias.elements != static_cast<uint64_t>(out_channels)) {
      return shape_error(*s, "bias must have one value per output channel");
    }
  }
  if (p.has_residual() && (!same_shape(tensor_at(plan, s->inputs, next), y) ||
                           channels_last(tensor_at(plan, s->inputs, next)) != cl)) {
    return shape_error(*s, "residual must have the output's shape and layout");
  }
  kernels::ConvParams& k = s->params.conv;
  k = kernels::ConvParams{};
  k.channels_last = cl;
  k.spatial_rank = win.rank;
  k.batch = x.dims[0];
  k.in_channels = channels;
  k.out_channels = out_channels;
  k.groups = groups;
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) {
    k.in_size[i] = win.in_size[i];
    k.out_size[i] = win.out_size[i];
    k.kernel[i] = win.kernel[i];
    k.stride[i] = win.stride[i];
    k.dilation[i] = win.dilation[i];
    k.pad_begin[i] = win.pad_begin[i];
  }
  k.has_bias = p.has_bias();
  k.has_residual = p.has_residual();
  k.y_channels = channel_dim(y);
  k.y_channel_offset = y_offset;
  return to_activation(*s, p.activation(), &k.act);
}

Status prepare_pool(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::PoolParams& p = *step.params_as_PoolParams();
  // A second output: ONNX MaxPool's Indices (int64, y's shape; CPU backend, NCHW).
  const bool with_indices = step.outputs()->size() == 2;
  if (with_indices) {
    if (step.inputs()->size() != 1) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s' (Pool) has %u inputs, expected 1", s->name,
                  step.inputs()->size());
    }
  } else {
    JP_RETURN_IF_ERROR(check_arity(step, "Pool", 1, 1));
  }
  JP_RETURN_IF_ERROR(check_float32(plan, *s));
  const TensorInfo& x = tensor_at(plan, s->inputs, 0);
  const TensorInfo& y = tensor_at(plan, s->outputs, 0);
  if (with_indices) {
    const TensorInfo& idx = tensor_at(plan, s->outputs, 1);
    if (p.kind() != fb::PoolKind::Max || plan.backend != JP_BACKEND_CPU || channels_last(x)) {
      return fail(JP_ERROR_UNSUPPORTED,
                  "step '%s': a Pool step with an indices output must be a Max pool in NCHW on "
                  "the CPU backend", s->name);
    }
    if (idx.dtype != fb::DType::Int64 || idx.rank != y.rank) {
      return shape_error(*s, "the indices output must be Int64 of the output's shape");
    }
    for (int32_t d = 0; d < y.rank; ++d) {
      if (idx.dims[d] != y.dims[d]) {
        return shape_error(*s, "the indices output must be Int64 of the output's shape");
      }
    }
    s->run_cpu = run_pool_indices_cpu;
  }
  Window win;
  JP_RETURN_IF_ERROR(read_window(*s, p, x, y, &win, p.ceil_mode()));
  if (y.dims[0] != x.dims[0] || channel_dim(y) != channel_dim(x)) {
    return shape_error(*s, "output batch or channels do not match the input");
  }
  if (p.kind() != fb::PoolKind::Max && p.kind() != fb::PoolKind::Average) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown pool kind %d", s->name,
                static_cast<int>(p.kind()));
  }
  for (int32_t i = 0; i < win.rank; ++i) {
    // A window wholly inside the padding would have nothing to reduce.
    if (win.pad_begin[i] >= win.dilation[i] * (win.kernel[i] - 1) + 1 ||
        win.pad_end[i] >= win.dilation[i] * (win.kernel[i] - 1) + 1) {
      return shape_error(*s, "pooling pads must be smaller than the window");
    }
  }
  kernels::PoolParams& k = s->params.pool;
  k = kernels::PoolParams{};
  k.kind = p.kind() == fb::PoolKind::Max ? kernels::PoolKind::kMax : kernels::PoolKind::kAverage;
  k.spatial_rank = win.rank;
  k.batch = x.dims[0];
  k.channels = channel_dim(x);
  k.channels_last = channels_last(x);
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) {
    k.in_size[i] = win.in_size[i];
    k.out_size[i] = win.out_size[i];
    k.kernel[i] = win.kernel[i];
    k.stride[i] = win.stride[i];
    k.dilation[i] = win.dilation[i];
    k.pad_begin[i] = win.pad_begin[i];
    k.pad_end[i] = win.pad_end[i];
  }
  k.count_include_pad = p.count_include_pad();
  if (p.indices_column_major() && !with_indices) {
    return shape_error(*s, "indices_column_major without an indices output");
  }
  k.indices_column_major = p.indices_column_major();
  return JP_OK;
}

Status prepare_gemm(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::GemmParams& p = *step.params_as_GemmParams();
  const uint32_t inputs = 2u + (p.has_c() ? 1u : 0u) + (p.has_residual() ? 1u : 0u);
  JP_RETURN_IF_ERROR(check_arity(step, "Gemm", inputs, inputs));
  JP_RETURN_IF_ERROR(check_float_epilogue(plan, *s));
  const TensorInfo& a = tensor_at(plan, s->inputs, 0);
  const TensorInfo& b = tensor_at(plan, s->inputs, 1);
  const TensorInfo& y = tensor_at(plan, s->outputs, 0);
  if (a.rank < 2 || b.rank < 2 || y.rank < 2) return shape_error(*s, "operands need rank >= 2");
  const int64_t M = p.trans_a() ? a.dims[a.rank - 1] : a.dims[a.rank - 2];
  const int64_t K = p.trans_a() ? a.dims[a.rank - 2] : a.dims[a.rank - 1];
  const int64_t Kb = p.trans_b() ? b.dims[b.rank - 1] : b.dims[b.rank - 2];
  const int64_t N = p.trans_b() ? b.dims[b.rank - 2] : b.dims[b.rank - 1];
  if (K != Kb) return shape_error(*s, "inner dimensions of A and B differ");
  if (y.dims[y.rank - 2] != M || y.dims[y.rank - 1] != N) {
    return shape_error(*s, "output is not [.., M, N]");
  }
  const int32_t batch_rank = y.rank - 2;
  const int64_t batch = static_cast<int64_t>(y.elements) / (M * N);
  // An operand's batch dims either equal the output's (right-aligned) or are all 1.
  auto batch_stride = [&](const TensorInfo& t, int64_t matrix, int64_t* stride) {
    const int32_t rank = t.rank - 2;
    if (rank > batch_rank) return false;
    const int64_t count = static_cast<int64_t>(t.elements) / matrix;
    if (count == 1) {
      *stride = 0;
      return true;
    }
    for (int32_t i = 0; i < batch_rank; ++i) {
      const int32_t ti = i - (batch_rank - rank);
      const int64_t dim = ti >= 0 ? t.dims[ti] : 1;
      if (dim != y.dims[i]) return false;
    }
    *stride = matrix;
    return true;
  };
  kernels::GemmParams& k = s->params.gemm;
  k = kernels::GemmParams{};
  if (!batch_stride(a, M * K, &k.a_batch_stride) || !batch_stride(b, K * N, &k.b_batch_stride)) {
    return shape_error(*s, "batch dims of A or B neither match the output nor are all 1");
  }
  k.batch = batch;
  k.M = M;
  k.N = N;
  k.K = K;
  k.trans_a = p.trans_a();
  k.trans_b = p.trans_b();
  k.alpha = p.alpha();
  k.beta = p.beta();
  k.has_c = p.has_c();
  k.has_residual = p.has_residual();
  if (p.has_residual() && (!same_shape(tensor_at(plan, s->inputs, inputs - 1), y) ||
                           channels_last(tensor_at(plan, s->inputs, inputs - 1)) !=
                               channels_last(y))) {
    return shape_error(*s, "residual R must have exactly the output's shape and layout");
  }
  if (p.has_c()) {
    // C broadcasts to [*batch, M, N] by numpy rules; its matrix dims may be 1 (broadcast) and
    // its batch dims all 1 or all equal to the output's.
    const TensorInfo& c = tensor_at(plan, s->inputs, 2);
    if (c.rank > y.rank) return shape_error(*s, "C has a higher rank than the output");
    int64_t dims[kMaxRank];
    for (int32_t i = 0; i < y.rank; ++i) {
      const int32_t ci = i - (y.rank - c.rank);
      dims[i] = ci >= 0 ? c.dims[ci] : 1;
      if (dims[i] != 1 && dims[i] != y.dims[i]) return shape_error(*s, "C does not broadcast");
    }
    const int64_t cm = dims[y.rank - 2], cn = dims[y.rank - 1];
    const int64_t c_batch = static_cast<int64_t>(c.elements) / (cm * cn);
    if (c_batch != 1 && c_batch != batch) return shape_error(*s, "C's batch dims do not match");
    k.c_stride_n = cn == 1 ? 0 : 1;
    k.c_stride_m = cm == 1 ? 0 : cn;
    k.c_stride_batch = c_batch == 1 ? 0 : cm * cn;
  }
  // A batched A against one B (a Linear layer over [batch, M, K], the attention projections)
  // is one [batch * M, K] x [K, N] product: the same sums, one big GEMM instead of batch thin
  // ones. C must follow: broadcast over rows, or dense per batch.
  if (k.batch > 1 && k.b_batch_stride == 0 && !k.trans_a && k.a_batch_stride == M * K &&
      (!k.has_c || (k.c_stride_batch == 0 && k.c_stride_m == 0) ||
       (k.c_stride_batch == M * N && k.c_stride_m == N))) {
    k.M = k.batch * M;
    k.batch = 1;
    k.a_batch_stride = 0;
    k.c_stride_batch = 0;
  }
  return to_activation(*s, p.activation(), &k.act);
}

Status prepare_binary(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::BinaryParams& p = *step.params_as_BinaryParams();
  JP_RETURN_IF_ERROR(check_arity(step, "Binary", 2, 2));
  JP_RETURN_IF_ERROR(check_float32(plan, *s));
  const TensorInfo& a = tensor_at(plan, s->inputs, 0);
  const TensorInfo& b = tensor_at(plan, s->inputs, 1);
  const TensorInfo& y = tensor_at(plan, s->outputs, 0);
  const int op = static_cast<int>(p.op());
  if (op < 0 || op >= kernels::kBinaryOpCount) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown binary op %d", s->name, op);
  }
  const int32_t rank = y.rank > 0 ? y.rank : 1;
  if (a.rank > y.rank || b.rank > y.rank) return shape_error(*s, "operand rank above output's");
  kernels::BinaryParams& k = s->params.binary;
  k = kernels::BinaryParams{};
  k.op = static_cast<kernels::BinaryOp>(op);
  k.rank = rank;
  // Right-align both operands to the output; dense strides, 0 where a dim of 1 broadcasts.
  auto strides = [&](const TensorInfo& t, int64_t* out) {
    int64_t stride = 1;
    for (int32_t i = rank - 1; i >= 0; --i) {
      const int32_t ti = i - (rank - t.rank);
      const int64_t dim = ti >= 0 ? t.dims[ti] : 1;
      const int64_t ydim = y.rank > 0 ? y.dims[i] : 1;
      if (dim != ydim && dim != 1) return false;
      out[i] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
    return true;
  };
  if (!strides(a, k.a_strides) || !strides(b, k.b_strides)) {
    return shape_error(*s, "operands do not broadcast to the output shape");
  }
  for (int32_t i = 0; i < rank; ++i) {
    k.out_dims[i] = y.rank > 0 ? y.dims[i] : 1;
    const int32_t ai = i - (rank - a.rank), bi = i - (rank - b.rank);
    const int64_t ad = ai >= 0 ? a.dims[ai] : 1, bd = bi >= 0 ? b.dims[bi] : 1;
    if (k.out_dims[i] != (ad > bd ? ad : bd)) {
      return shape_error(*s, "output shape is not the broadcast of the operands");
    }
  }
  return to_activation(*s, p.activation(), &k.act);
}

Status prepare_activation(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::ActivationParams& p = *step.params_as_ActivationParams();
  JP_RETURN_IF_ERROR(check_arity(step, "Activation", 1, 1));
  JP_RETURN_IF_ERROR(check_float32(plan, *s));
  const TensorInfo& x = tensor_at(plan, s->inputs, 0);
  const TensorInfo& y = tensor_at(plan, s->outputs, 0);
  if (x.elements != y.elements) return shape_error(*s, "input and output sizes differ");
  kernels::ActivationParams& k = s->params.activation;
  k = kernels::ActivationParams{};
  k.count = static_cast<int64_t>(x.elements);
  return to_activation(*s, p.activation(), &k.act);
}

Status prepare_softmax(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::SoftmaxParams& p = *step.params_as_SoftmaxParams();
  JP_RETURN_IF_ERROR(check_arity(step, "Softmax", 1, 1));
  JP_RETURN_IF_ERROR(check_float32(plan, *s));
  const TensorInfo& x = tensor_at(plan, s->inputs, 0);
  const TensorInfo& y = tensor_at(plan, s->outputs, 0);
  if (!same_shape(x, y) || x.rank < 1) return shape_error(*s, "input and output shapes differ");
  const int32_t axis = p.axis() < 0 ? p.axis() + x.rank : p.axis();
  if (axis < 0 || axis >= x.rank) return shape_error(*s, "axis is out of range");
  kernels::SoftmaxParams& k = s->params.softmax;
  k = kernels::SoftmaxParams{};
  for (int32_t i = 0; i < axis; ++i) k.outer *= x.dims[i];
  k.axis = x.dims[axis];
  for (int32_t i = axis + 1; i < x.rank; ++i) k.inner *= x.dims[i];
  k.log = p.log();
  return JP_OK;
}

Status prepare_batch_norm(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::BatchNormParams& p = *step.params_as_BatchNormParams();
  JP_RETURN_IF_ERROR(check_arity(step, "BatchNorm", 5, 5));
  JP_RETURN_IF_ERROR(check_float32(plan, *s));
  const TensorInfo& x = tensor_at(plan, s->inputs, 0);
  const TensorInfo& y = tensor_at(plan, s->outputs, 0);
  if (!same_shape(x, y) || x.rank < 2 || channels_last(x) != channels_last(y)) {
    return shape_error(*s, "input must be [N, C, ...] (or [N, ..., C] NHWC) like the output");
  }
  for (uint32_t i = 1; i < 5; ++i) {
    if (tensor_at(plan, s->inputs, i).elements != static_cast<uint64_t>(channel_dim(x))) {
      return shape_error(*s, "scale, bias, mean and var need one value per channel");
    }
  }
  kernels::BatchNormParams& k = s->params.batch_norm;
  k = kernels::BatchNormParams{};
  k.batch = x.dims[0];
  k.channels = channel_dim(x);
  k.spatial = static_cast<int64_t>(x.elements) / (k.batch * k.channels);
  k.epsilon = p.epsilon();
  k.channels_last = channels_last(x);
  return JP_OK;
}

Status prepare_concat(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::ConcatParams& p = *step.params_as_ConcatParams();
  JP_RETURN_IF_ERROR(check_arity(step, "Concat", 1, kernels::kMaxConcatInputs));
  const TensorInfo& y = tensor_at(plan, s->outputs, 0);
  if (y.rank < 1) return shape_error(*s, "output must have rank >= 1");
  const int32_t axis = p.axis() < 0 ? p.axis() + y.rank : p.axis();
  if (axis < 0 || axis >= y.rank) return shape_error(*s, "axis is out of range");
  kernels::ConcatParams& k = s->params.concat;
  k = kernels::ConcatParams{};
  for (int32_t i = 0; i < axis; ++i) k.outer *= y.dims[i];
  for (int32_t i = axis + 1; i < y.rank; ++i) k.inner *= y.dims[i];
  k.elem_bytes = static_cast<int64_t>(dtype_size(y.dtype));
  k.num_inputs = static_cast<int32_t>(s->inputs->size());
  int64_t total = 0;
  for (int32_t n = 0; n < k.num_inputs; ++n) {
    const TensorInfo& x = tensor_at(plan, s->inputs, static_cast<uint32_t>(n));
    if (x.rank != y.rank || x.dtype != y.dtype) {
      return shape_error(*s, "inputs must have the output's rank and dtype");
    }
    for (int32_t d = 0; d < y.rank; ++d) {
      if (d != axis && x.dims[d] != y.dims[d]) {
        return shape_error(*s, "inputs differ from the output off the concat axis");
      }
    }
    k.axis_len[n] = x.dims[axis];
    total += x.dims[axis];
  }
  if (total != y.dims[axis]) return shape_error(*s, "input extents do not sum to the output's");
  return JP_OK;
}

Status prepare_copy(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(step, "Copy", 1, 1));
  const TensorInfo& x = tensor_at(plan, s->inputs, 0);
  const TensorInfo& y = tensor_at(plan, s->outputs, 0);
  if (x.bytes != y.bytes) return shape_error(*s, "input and output sizes differ");
  s->params.copy = kernels::CopyParams{};
  s->params.copy.bytes = static_cast<int64_t>(x.bytes);
  return JP_OK;
}

}  // namespace jetplan::rt
