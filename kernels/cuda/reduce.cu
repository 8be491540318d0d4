// Reduce (ONNX Reduce* over any dims, one output per thread) on the GPU: FP16 and FP32 storage
// with FP32 accumulation, FP64 storage with FP64 accumulation. Twin: kernels/cpu/reduce.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/reduce.h"

namespace jetplan::kernels::cuda {
namespace {

// What an element accumulates in: float for Float16/Float32 (sums compensated), double for
// Float64 (plain sums in the twin's order, as the twin computes them).
__device__ __forceinline__ float load_acc(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load_acc(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ double load_acc(const double* p, int64_t i) { return p[i]; }
__device__ __forceinline__ void store_acc(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store_acc(__half* p, int64_t i, float v) {
  p[i] = __float2half_rn(v);
}
__device__ __forceinline__ void store_acc(double* p, int64_t i, double v) { p[i] = v; }
__device__ __forceinline__ float acc_log(float v) { return logf(v); }
__device__ __forceinline__ double acc_log(double v) { return log(v); }
__device__ __forceinline__ float acc_exp(float v) { return expf(v); }
__device__ __forceinline__ double acc_exp(double v) { return exp(v); }
__device__ __forceinline__ float acc_sqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double acc_sqrt(double v) { return sqrt(v); }
__device__ __forceinline__ float acc_abs(float v) { return fabsf(v); }
__device__ __forceinline__ double acc_abs(double v) { return fabs(v); }

// Reduce over the dims of axis_mask: one output per thread, its reduced elements visited in
// row-major order of the reduced dims (the twin's order), accumulated in FP32 (FP64 for double).
template <typename T>
__device__ void reduce(const StepPointers& ptrs, const ReduceParams& p) {
  if (p.rank < 0 || p.rank > kMaxRank) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  int64_t rdims[kMaxRank], rstride[kMaxRank], kdims[kMaxRank], kstride[kMaxRank];
  int nr = 0, nk = 0;
  int64_t stride = 1, out_count = 1, set = 1;
  for (int d = p.rank - 1; d >= 0; --d) {
    if (p.axis_mask >> d & 1u) {
      rdims[nr] = p.in_dims[d];
      rstride[nr++] = stride;
      set *= p.in_dims[d];
    } else {
      kdims[nk] = p.in_dims[d];
      kstride[nk++] = stride;
      out_count *= p.in_dims[d];
    }
    stride *= p.in_dims[d];
  }
  // rdims/kdims run from the last dim to the first: index 0 is the fastest.
  for (int64_t o = global_thread(); o < out_count; o += global_threads()) {
    int64_t base = 0, rest = o;
    for (int k = 0; k < nk; ++k) {
      base += (rest % kdims[k]) * kstride[k];
      rest /= kdims[k];
    }
    const auto at = [&](int64_t j) {
      int64_t off = base;
      for (int r = 0; r < nr; ++r) {
        off += (j % rdims[r]) * rstride[r];
        j /= rdims[r];
      }
      return load_acc(x, off);
    };
    // FP32 sums are compensated (Kahan): a mean over a 56 x 56 plane keeps FP32 accuracy. nvcc
    // does not reassociate float arithmetic without fast-math, so the compensation survives.
    // FP64 sums are plain, in the twin's order.
    using Acc = decltype(load_acc(x, 0));
    constexpr bool kCompensated = sizeof(Acc) == sizeof(float);
    Acc acc = 0, carry = 0;
    const auto add = [&](Acc v) {
      if (!kCompensated) {
        acc += v;
        return;
      }
      const Acc yv = v - carry, t = acc + yv;
      carry = (t - acc) - yv;
      acc = t;
    };
    switch (p.op) {
      case ReduceOp::kSum:
      case ReduceOp::kMean:
      case ReduceOp::kLogSum:
        for (int64_t j = 0; j < set; ++j) add(at(j));
        if (p.op == ReduceOp::kMean) acc = acc / static_cast<Acc>(set);
        if (p.op == ReduceOp::kLogSum) acc = acc_log(acc);
        break;
      case ReduceOp::kMax:
      case ReduceOp::kMin: {
        const bool is_max = p.op == ReduceOp::kMax;
        acc = is_max ? Acc(-INFINITY) : Acc(INFINITY);
        for (int64_t j = 0; j < set; ++j) {
          const Acc v = at(j);
          if (v != v || (is_max ? v > acc : v < acc)) acc = v;
        }
        break;
      }
      case ReduceOp::kProd:
        acc = 1;
        for (int64_t j = 0; j < set; ++j) acc *= at(j);
        break;
      case ReduceOp::kL1:
        for (int64_t j = 0; j < set; ++j) add(acc_abs(at(j)));
        break;
      case ReduceOp::kL2:
      case ReduceOp::kSumSquare:
        for (int64_t j = 0; j < set; ++j) {
          const Acc v = at(j);
          add(v * v);
        }
        if (p.op == ReduceOp::kL2) acc = acc_sqrt(acc);
        break;
      case ReduceOp::kLogSumExp: {
        Acc max = Acc(-INFINITY);
        for (int64_t j = 0; j < set; ++j) {
          const Acc v = at(j);
          if (max == max && (v != v || v > max)) max = v;
        }
        if (!isfinite(max)) {
          acc = max;
          break;
        }
        for (int64_t j = 0; j < set; ++j) add(acc_exp(at(j) - max));
        acc = max + acc_log(acc);
        break;
      }
    }
    store_acc(y, o, acc);
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_reduce, ReduceParams, jetplan::kernels::cuda::reduce)
JP_STEP_KERNEL(jp_reduce_f64, ReduceParams, jetplan::kernels::cuda::reduce<double>)
