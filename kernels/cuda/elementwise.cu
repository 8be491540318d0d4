// Elementwise (typed arithmetic, comparisons, logic with numpy broadcasting by strides), Where,
// Broadcast (Expand/Tile) and Pad (constant/reflect/edge/wrap) on the GPU. Twins:
// kernels/cpu/elementwise.cc, where.cc, broadcast.cc, pad.cc. Where, Broadcast and Pad move
// elements of p.elem_bytes (1, 2, 4 and 8 as one access, other sizes byte by byte), so they are
// bit-exact for any dtype.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/params_tensor.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ __forceinline__ int64_t dense_count(int32_t rank, const int64_t* dims) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= dims[d];
  return n;
}

template <typename T, typename U>
__device__ __forceinline__ T integer_arith(ElementwiseOp op, T a, T b) {
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  switch (op) {
    case ElementwiseOp::kAdd: return static_cast<T>(static_cast<U>(ua + ub));
    case ElementwiseOp::kSub: return static_cast<T>(static_cast<U>(ua - ub));
    case ElementwiseOp::kMul: return static_cast<T>(static_cast<U>(ua * ub));
    case ElementwiseOp::kDiv:
      if (b == 0) return 0;
      if (b == -1) return static_cast<T>(static_cast<U>(U{0} - ua));
      return a / b;
    case ElementwiseOp::kMod: {
      if (b == 0 || b == -1) return 0;
      const T r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
    }
    case ElementwiseOp::kFMod:
      if (b == 0 || b == -1) return 0;
      return a % b;
    case ElementwiseOp::kMax: return a > b ? a : b;
    case ElementwiseOp::kMin: return a < b ? a : b;
    default: break;
  }
  return a;
}

template <typename T>
__device__ __forceinline__ bool compare(ElementwiseOp op, T a, T b) {
  switch (op) {
    case ElementwiseOp::kEqual: return a == b;
    case ElementwiseOp::kLess: return a < b;
    case ElementwiseOp::kLessOrEqual: return a <= b;
    case ElementwiseOp::kGreater: return a > b;
    case ElementwiseOp::kGreaterOrEqual: return a >= b;
    case ElementwiseOp::kAnd: return a != T(0) && b != T(0);
    case ElementwiseOp::kOr: return a != T(0) || b != T(0);
    case ElementwiseOp::kXor: return (a != T(0)) != (b != T(0));
    default: break;
  }
  return false;
}

template <typename T> struct Loaded { using type = T; };
template <> struct Loaded<__half> { using type = float; };  // every half is exactly a float
template <typename T>
__device__ __forceinline__ typename Loaded<T>::type load(const T* p, int64_t i) { return p[i]; }
template <>
__device__ __forceinline__ float load<__half>(const __half* p, int64_t i) {
  return __half2float(p[i]);
}

// out[i] = f(a[i . a_strides], b[i . b_strides]) over the dense out_dims.
template <typename In, typename Out, typename F>
__device__ void broadcast2(const StepPointers& ptrs, const ElementwiseParams& p, F f) {
  const In* a = static_cast<const In*>(ptrs.in[0]);
  const In* b = static_cast<const In*>(ptrs.in[1]);
  Out* y = static_cast<Out*>(ptrs.out[0]);
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      ia += c * p.a_strides[d];
      ib += c * p.b_strides[d];
    }
    y[i] = f(load(a, ia), load(b, ib));
  }
}

template <typename T>
__device__ void compare_kernel(const StepPointers& ptrs, const ElementwiseParams& p) {
  using L = typename Loaded<T>::type;
  const ElementwiseOp op = p.op;
  broadcast2<T, unsigned char>(ptrs, p, [op](L u, L v) -> unsigned char {
    return compare<L>(op, u, v) ? 1 : 0;
  });
}

template <typename T, typename U>
__device__ void integer_kernel(const StepPointers& ptrs, const ElementwiseParams& p) {
  const ElementwiseOp op = p.op;
  broadcast2<T, T>(ptrs, p, [op](T u, T v) { return integer_arith<T, U>(op, u, v); });
}

// One element of `bytes` bytes from src to dst (both aligned to it when it is 2, 4 or 8).
__device__ __forceinline__ void copy_elem(unsigned char* dst, const unsigned char* src,
                                          int64_t bytes) {
  switch (bytes) {
    case 1: *dst = *src; return;
    case 2: *reinterpret_cast<uint16_t*>(dst) = *reinterpret_cast<const uint16_t*>(src); return;
    case 4: *reinterpret_cast<uint32_t*>(dst) = *reinterpret_cast<const uint32_t*>(src); return;
    case 8: *reinterpret_cast<uint64_t*>(dst) = *reinterpret_cast<const uint64_t*>(src); return;
    default:
      for (int64_t k = 0; k < bytes; ++k) dst[k] = src[k];
  }
}

__device__ void where_kernel(const StepPointers& ptrs, const WhereParams& p) {
  const auto* cond = static_cast<const unsigned char*>(ptrs.in[0]);
  const auto* xs = static_cast<const unsigned char*>(ptrs.in[1]);
  const auto* ys = static_cast<const unsigned char*>(ptrs.in[2]);
  auto* out = static_cast<unsigned char*>(ptrs.out[0]);
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, c_off = 0, x_off = 0, y_off = 0;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      c_off += c * p.cond_strides[d];
      x_off += c * p.x_strides[d];
      y_off += c * p.y_strides[d];
    }
    const unsigned char* src =
        cond[c_off] != 0 ? xs + x_off * p.elem_bytes : ys + y_off * p.elem_bytes;
    copy_elem(out + i * p.elem_bytes, src, p.elem_bytes);
  }
}

__device__ void broadcast_kernel(const StepPointers& ptrs, const BroadcastParams& p) {
  const auto* in = static_cast<const unsigned char*>(ptrs.in[0]);
  auto* out = static_cast<unsigned char*>(ptrs.out[0]);
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, offset = 0;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      offset += (rest % p.out_dims[d] % p.x_dims[d]) * p.x_strides[d];
      rest /= p.out_dims[d];
    }
    copy_elem(out + i * p.elem_bytes, in + offset * p.elem_bytes, p.elem_bytes);
  }
}

__device__ __forceinline__ int64_t positive_mod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

// The twin's source_coord: the x coordinate output coordinate o of dim d reads, -1 for the value.
__device__ __forceinline__ int64_t pad_source(const PadParams& p, int32_t d, int64_t o) {
  const int64_t begin = p.pads_begin[d];
  const int64_t end = p.out_dims[d] - p.x_dims[d] - begin;
  const int64_t first = begin < 0 ? -begin : 0;
  const int64_t kept = p.x_dims[d] - first - (end < 0 ? -end : 0);
  const int64_t j = o - (begin > 0 ? begin : 0);
  if (j >= 0 && j < kept) return first + j;
  if (kept <= 0) return -1;
  switch (p.mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return first + (j < 0 ? 0 : kept - 1);
    case PadMode::kWrap: return first + positive_mod(j, kept);
    case PadMode::kReflect: {
      if (kept == 1) return first;
      const int64_t period = 2 * (kept - 1);
      const int64_t r = positive_mod(j, period);
      return first + (r < kept ? r : period - r);
    }
  }
  return -1;
}

__device__ void pad_kernel(const StepPointers& ptrs, const PadParams& p) {
  const auto* in = static_cast<const unsigned char*>(ptrs.in[0]);
  auto* out = static_cast<unsigned char*>(ptrs.out[0]);
  const int64_t count = dense_count(p.rank, p.out_dims);
  unsigned char value[8];
  for (int k = 0; k < 8; ++k) value[k] = p.value[k];
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, offset = 0, stride = 1;
    bool inside = true;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      const int64_t c = pad_source(p, d, rest % p.out_dims[d]);
      rest /= p.out_dims[d];
      if (c < 0) {
        inside = false;
        break;
      }
      offset += c * stride;
      stride *= p.x_dims[d];
    }
    unsigned char* dst = out + i * p.elem_bytes;
    if (inside) {
      copy_elem(dst, in + offset * p.elem_bytes, p.elem_bytes);
    } else {
      for (int64_t k = 0; k < p.elem_bytes && k < 8; ++k) dst[k] = value[k];
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::BroadcastParams;
using jetplan::kernels::ElementwiseParams;
using jetplan::kernels::PadParams;
using jetplan::kernels::WhereParams;
using jetplan::kernels::cuda::StepPointers;
namespace k = jetplan::kernels::cuda;

#define JP_CMP(name, T)                                                               \
  extern "C" __global__ void jp_elementwise_cmp_##name(StepPointers ptrs,               \
                                                       const ElementwiseParams p) {     \
    k::compare_kernel<T>(ptrs, p);                                                      \
  }
JP_CMP(f32, float)
JP_CMP(f16, __half)
JP_CMP(f64, double)
JP_CMP(i8, int8_t)
JP_CMP(u8, uint8_t)
JP_CMP(i32, int32_t)
JP_CMP(i64, int64_t)
JP_CMP(bool, uint8_t)
#undef JP_CMP

extern "C" __global__ void jp_elementwise_i32(StepPointers ptrs, const ElementwiseParams p) {
  k::integer_kernel<int32_t, uint32_t>(ptrs, p);
}
extern "C" __global__ void jp_elementwise_i64(StepPointers ptrs, const ElementwiseParams p) {
  k::integer_kernel<int64_t, uint64_t>(ptrs, p);
}
extern "C" __global__ void jp_elementwise_fmod_f32(StepPointers ptrs, const ElementwiseParams p) {
  k::broadcast2<float, float>(ptrs, p, [](float u, float v) { return fmodf(u, v); });
}
extern "C" __global__ void jp_elementwise_fmod_f64(StepPointers ptrs, const ElementwiseParams p) {
  k::broadcast2<double, double>(ptrs, p, [](double u, double v) { return fmod(u, v); });
}
extern "C" __global__ void jp_where(StepPointers ptrs, const WhereParams p) {
  k::where_kernel(ptrs, p);
}
extern "C" __global__ void jp_broadcast(StepPointers ptrs, const BroadcastParams p) {
  k::broadcast_kernel(ptrs, p);
}
extern "C" __global__ void jp_pad(StepPointers ptrs, const PadParams p) { k::pad_kernel(ptrs, p); }
