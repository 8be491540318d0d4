// What every kernel test shares: shapes and coordinates, a seeded generator that reports its
// seed with every failure, poisoned outputs with guard zones, and comparisons that never pass on
// NaN.
//  - Seeds: each SEEDED_RNG draws a fresh seed (JETPLAN_TEST_SEED=<n> fixes it) and attaches
//    "seed <n> (replay: JETPLAN_TEST_SEED=<n>)" to every failure reported while it lives.
//  - Float outputs start as a quiet NaN with a payload no kernel computes (kPoisonBits), int64
//    outputs as kPoisonInt; both carry kGuard poisoned elements after their end.
//  - Byte outputs are filled with one poison byte and carry kGuardBytes after their end; a byte
//    kernel runs once per kBytePoisons pattern, so a byte left unwritten cannot match the
//    reference both times.
//  - Workspaces are poisoned too (the kernel must not expect zeros) and carry a guard.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace jetplan::kernels::test_util {

using Shape = std::vector<int64_t>;
using Bytes = std::vector<unsigned char>;

// ------------------------------------------------------------------------ shapes and bytes

inline int64_t volume(const Shape& s) {
  int64_t v = 1;
  for (int64_t d : s) v *= d;
  return v;
}

// Row-major coordinates of flat index i in shape s.
inline Shape unravel(int64_t i, const Shape& s) {
  Shape c(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}

inline int64_t ravel(const Shape& c, const Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + c[d];
  return i;
}

inline std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// The entries of s into the front of a params array (dims or strides of up to kMaxRank).
template <size_t N>
void set_dims(int64_t (&to)[N], const Shape& s) {
  EXPECT_LE(s.size(), N);
  for (size_t d = 0; d < s.size() && d < N; ++d) to[d] = s[d];
}

inline Shape dense_strides(const Shape& s) {
  Shape st(s.size());
  int64_t dense = 1;
  for (size_t d = s.size(); d-- > 0;) {
    st[d] = dense;
    dense *= s[d];
  }
  return st;
}

// Element i of `from` (elements of elem bytes) copied to element j of `to`.
inline void copy_element(const Bytes& from, int64_t i, Bytes& to, int64_t j, int64_t elem) {
  std::copy_n(from.begin() + i * elem, elem, to.begin() + j * elem);
}

// The bytes of a vector of trivially copyable values, and back.
template <typename T>
Bytes to_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// A T read from the bytes at p (any alignment).
template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The bits of one trivially copyable value as another of the same size (C++20's std::bit_cast).
template <typename To, typename From>
To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast keeps the size");
  return load<To>(reinterpret_cast<const unsigned char*>(&from));
}

inline float float_of_bits(uint32_t bits) { return bit_cast<float>(bits); }
inline uint32_t bits_of_float(float f) { return bit_cast<uint32_t>(f); }

// f(T{}) for T the C++ type of the integer dtype t (not Bool), for references that read or write
// any integer the same way. Callers handle the other dtypes first and leave the rest to this; its
// switch names every dtype, so that a new one fails to compile until it is sorted here.
template <typename F>
auto with_integer_type(DType t, F f) {
  switch (t) {
    case DType::kInt8: return f(int8_t{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kUInt32: return f(uint32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kUInt64: return f(uint64_t{});
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kFloat64:
    case DType::kBFloat16:
    case DType::kBool:
      break;
  }
  ADD_FAILURE() << "dtype " << int(t) << " is not an integer type";
  return f(int8_t{});
}

inline std::vector<double> to_doubles(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// -------------------------------------------------------------------------------- broadcasting

// numpy broadcasting of several shapes, aligned at their last dim.
inline Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      if (s[i] != 1) o = s[i];
    }
  return out;
}

// Strides of a dense tensor `shape` read at the coordinates of `out`: 0 for a broadcast dim.
inline void broadcast_strides(const Shape& shape, const Shape& out, int64_t* strides) {
  const size_t lead = out.size() - shape.size();
  int64_t dense = 1;
  for (size_t i = out.size(); i-- > 0;) {
    const int64_t d = i < lead ? 1 : shape[i - lead];
    strides[i] = d == 1 ? 0 : dense;
    dense *= d;
  }
}

// Element of dense `shape` that output coordinate `c` reads, by the numpy rule: a dim of 1 is
// read at 0, any other at the output's coordinate; the shape is aligned at its last dim.
inline int64_t broadcast_index(const Shape& c, const Shape& shape) {
  const size_t lead = c.size() - shape.size();
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + (shape[d] == 1 ? 0 : c[lead + d]);
  return i;
}

// ------------------------------------------------------------------------------------ seeds

inline uint32_t fresh_seed() {
  if (const char* env = std::getenv("JETPLAN_TEST_SEED"))
    return static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
  return std::random_device{}();
}

// A generator whose seed is attached to every failure reported while it lives.
class SeededRng {
 public:
  SeededRng(const char* file, int line)
      : seed_(fresh_seed()),
        gen_(seed_),
        trace_(file, line,
               "seed " + std::to_string(seed_) +
                   " (replay: JETPLAN_TEST_SEED=" + std::to_string(seed_) + ")") {}

  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen_); }
  std::vector<float> uniform(int64_t n, float lo, float hi) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = uniform(lo, hi);
    return v;
  }
  // Magnitude in [lo, hi], random sign: keeps divisors away from 0.
  std::vector<float> signed_magnitude(int64_t n, float lo, float hi) {
    std::vector<float> v = uniform(n, lo, hi);
    for (float& e : v)
      if (gen_() & 1u) e = -e;
    return v;
  }
  // Uniform integer in [lo, hi].
  int64_t integer(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
  }
  // Small integers as floats: many exact ties.
  std::vector<float> integers(int64_t n, int lo, int hi) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = static_cast<float>(integer(lo, hi));
    return v;
  }
  // In [0, n), by one draw modulo n (n at most 2^32).
  int64_t below(int64_t n) { return static_cast<int64_t>(gen_() % static_cast<uint32_t>(n)); }
  bool coin() { return gen_() & 1u; }
  Bytes bytes(int64_t n) {
    Bytes v(static_cast<size_t>(n));
    for (unsigned char& e : v) e = static_cast<unsigned char>(gen_() & 0xffu);
    return v;
  }
  uint64_t bits64() { return (uint64_t{gen_()} << 32) | gen_(); }
  // A random shape of `rank` dims in [lo, hi].
  Shape shape(size_t rank, int64_t lo, int64_t hi) {
    Shape s(rank);
    for (int64_t& d : s) d = integer(lo, hi);
    return s;
  }
  std::mt19937& engine() { return gen_; }

 private:
  uint32_t seed_;
  std::mt19937 gen_;
  testing::ScopedTrace trace_;
};
#define SEEDED_RNG(name) ::jetplan::kernels::test_util::SeededRng name(__FILE__, __LINE__)

// ------------------------------------------------------------------------------ poison, guards

constexpr uint32_t kPoisonBits = 0x7fc0deadu;  // a quiet NaN with a payload no kernel computes
constexpr int64_t kPoisonInt = INT64_C(0x7eadbeefdeadbeef);  // no index or count is this
constexpr int64_t kGuard = 16;       // float or int64 elements after the end that must stay poison
constexpr int64_t kGuardBytes = 64;  // bytes after the end of a byte output
constexpr unsigned char kBytePoisons[2] = {0xA5, 0x5A};

inline float poison_value() { return float_of_bits(kPoisonBits); }

inline bool is_poison(float f) { return bits_of_float(f) == kPoisonBits; }

// An output of n elements, poisoned at construction, followed by a poisoned guard zone.
template <typename T>
class PoisonedBuffer {
 public:
  PoisonedBuffer(int64_t n, T poison)
      : n_(n), poison_(poison), buf_(static_cast<size_t>(n + kGuard), poison) {}
  T* data() { return buf_.data(); }
  const T* data() const { return buf_.data(); }
  int64_t size() const { return n_; }
  T operator[](int64_t i) const { return buf_[static_cast<size_t>(i)]; }
  bool guard_intact() const {
    for (int64_t i = n_; i < n_ + kGuard; ++i)
      if (std::memcmp(&buf_[static_cast<size_t>(i)], &poison_, sizeof(T)) != 0) return false;
    return true;
  }

 private:
  int64_t n_;
  T poison_;
  std::vector<T> buf_;
};

// A float output; Output() is an empty one (an output the kernel is not asked for).
class Output : public PoisonedBuffer<float> {
 public:
  explicit Output(int64_t n = 0) : PoisonedBuffer<float>(n, poison_value()) {}
};

class IndexOutput : public PoisonedBuffer<int64_t> {
 public:
  explicit IndexOutput(int64_t n) : PoisonedBuffer<int64_t>(n, kPoisonInt) {}
};

// A byte output of n bytes filled with one poison byte, plus a guard zone.
class ByteOutput {
 public:
  ByteOutput(int64_t n, unsigned char poison)
      : n_(n), poison_(poison), buf_(static_cast<size_t>(n + kGuardBytes), poison) {}
  unsigned char* data() { return buf_.data(); }
  const unsigned char* data() const { return buf_.data(); }
  int64_t size() const { return n_; }
  unsigned char operator[](int64_t i) const { return buf_[static_cast<size_t>(i)]; }
  bool guard_intact() const {
    for (int64_t i = n_; i < n_ + kGuardBytes; ++i)
      if (buf_[static_cast<size_t>(i)] != poison_) return false;
    return true;
  }
  // Exact equality with `want`; elem_bytes only makes the message name elements.
  testing::AssertionResult equals(const Bytes& want, int64_t elem_bytes = 1) const {
    if (static_cast<int64_t>(want.size()) != n_)
      return testing::AssertionFailure()
             << "reference has " << want.size() << " bytes, output " << n_;
    if (!guard_intact()) return testing::AssertionFailure() << "kernel wrote past the output";
    int64_t failures = 0;
    std::ostringstream detail;
    for (size_t i = 0; i < want.size(); ++i) {
      if (buf_[i] == want[i]) continue;
      if (failures++ < 8)
        detail << "\n  byte " << i << " (element " << int64_t(i) / elem_bytes << ") is "
               << int{buf_[i]} << ", want " << int{want[i]} << " (poison " << int{poison_} << ")";
    }
    if (failures == 0) return testing::AssertionSuccess();
    return testing::AssertionFailure()
           << failures << " of " << n_ << " bytes differ" << detail.str();
  }

 private:
  int64_t n_;
  unsigned char poison_;
  Bytes buf_;
};

// Runs `kernel(unsigned char* out)` once per poison pattern on a fresh output of want.size()
// bytes and expects the bytes of `want` exactly.
template <typename Kernel>
void expect_bytes(const Bytes& want, int64_t elem_bytes, Kernel kernel) {
  for (unsigned char poison : kBytePoisons) {
    SCOPED_TRACE("poison byte " + std::to_string(int{poison}));
    ByteOutput y(static_cast<int64_t>(want.size()), poison);
    kernel(y.data());
    EXPECT_TRUE(y.equals(want, elem_bytes));
  }
}

// A workspace of `bytes` bytes filled with a poison word, plus a guard of kGuard words.
// kPoisonWord by default; kNaNWord where the workspace holds doubles, so that a read before a
// write propagates NaN into the outputs.
constexpr uint64_t kPoisonWord = uint64_t(kPoisonInt);
constexpr uint64_t kNaNWord = UINT64_C(0x7ff80000000000a5);  // a quiet double NaN, payload 0xa5
class Workspace {
 public:
  explicit Workspace(int64_t bytes, uint64_t poison_word = kPoisonWord)
      : words_((bytes + 7) / 8), poison_(poison_word),
        buf_(static_cast<size_t>(words_ + kGuard), poison_word) {}
  void* data() { return buf_.data(); }
  bool guard_intact() const {
    for (size_t i = static_cast<size_t>(words_); i < buf_.size(); ++i)
      if (buf_[i] != poison_) return false;
    return true;
  }

 private:
  int64_t words_;
  uint64_t poison_;
  std::vector<uint64_t> buf_;
};

// ----------------------------------------------------------------------------------- compare

struct Tolerance {
  double rel;
  double abs;
};
constexpr Tolerance kExact{0.0, 0.0};

// NaN on either side never passes, nor does an infinity unless both sides are the same one.
inline bool element_close(double got, double want, Tolerance tol) {
  if (std::isnan(got) || std::isnan(want)) return false;
  if (got == want) return true;
  return std::fabs(got - want) <= tol.abs + tol.rel * std::fabs(want);
}

// Every element within tol and the guard intact. `inputs`, when given, is printed beside each
// failing element.
inline testing::AssertionResult all_close(const Output& got, const std::vector<double>& want,
                                          Tolerance tol,
                                          const std::vector<float>* inputs = nullptr) {
  if (got.size() != static_cast<int64_t>(want.size()))
    return testing::AssertionFailure()
           << "output has " << got.size() << " elements, reference " << want.size();
  if (!got.guard_intact()) return testing::AssertionFailure() << "kernel wrote past the output";
  std::ostringstream detail;
  detail << std::setprecision(9);
  int64_t failures = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    const double w = want[static_cast<size_t>(i)];
    if (element_close(got[i], w, tol)) continue;
    if (failures++ < 8) {
      detail << "\n  [" << i << "]";
      if (inputs) detail << " x " << (*inputs)[static_cast<size_t>(i)];
      detail << " got " << got[i] << " want " << w;
      if (is_poison(got[i])) detail << " (poison: never written)";
    }
  }
  if (failures == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << failures << " of " << got.size() << " elements differ beyond rel " << tol.rel << " abs "
         << tol.abs << ":" << detail.str();
}

inline testing::AssertionResult all_close(const std::vector<double>& got,
                                          const std::vector<double>& want, Tolerance tol) {
  if (got.size() != want.size())
    return testing::AssertionFailure() << "sizes " << got.size() << " and " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!element_close(got[i], want[i], tol))
      return testing::AssertionFailure()
             << std::setprecision(9) << "[" << i << "] got " << got[i] << " want " << want[i];
  return testing::AssertionSuccess();
}

// Elements equal one by one; the guard intact.
inline testing::AssertionResult all_equal(const IndexOutput& got,
                                          const std::vector<int64_t>& want) {
  if (got.size() != static_cast<int64_t>(want.size()))
    return testing::AssertionFailure()
           << "output has " << got.size() << " elements, reference " << want.size();
  if (!got.guard_intact()) return testing::AssertionFailure() << "kernel wrote past the output";
  std::ostringstream detail;
  int64_t failures = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[static_cast<size_t>(i)]) continue;
    if (failures++ < 8) {
      detail << "\n  [" << i << "] got " << got[i] << " want " << want[static_cast<size_t>(i)];
      if (got[i] == kPoisonInt) detail << " (poison: never written)";
    }
  }
  if (failures == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << failures << " of " << got.size()
                                     << " elements differ:" << detail.str();
}

// Transpose of a dense x with shape `x` by perm (y dim d is x dim perm[d]), as TransposeParams.
inline TransposeParams transpose_params(const Shape& x, const std::vector<int>& perm,
                                        int64_t elem) {
  TransposeParams p;
  p.rank = static_cast<int32_t>(x.size());
  p.elem_bytes = elem;
  const Shape strides = dense_strides(x);
  for (size_t d = 0; d < x.size(); ++d) {
    p.out_dims[d] = x[size_t(perm[d])];
    p.x_strides[d] = strides[size_t(perm[d])];
  }
  return p;
}

// Indices as the bytes of an index tensor of type t (kInt32 or kInt64).
inline Bytes index_bytes(const std::vector<int64_t>& idx, DType t) {
  if (t == DType::kInt64) return to_bytes(idx);
  return to_bytes(std::vector<int32_t>(idx.begin(), idx.end()));
}

// The spatial window of a Conv, ConvTranspose or Pool test case, one entry per spatial dim.
struct WindowShape {
  Shape in, kernel, stride, dilation, pad_begin, pad_end;
};

// A 1-D window.
inline WindowShape window_1d(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                             int64_t pad_begin, int64_t pad_end) {
  return {{in}, {kernel}, {stride}, {dilation}, {pad_begin}, {pad_end}};
}

// One more spatial dim at the end of w, for cases built dim by dim from tables.
inline void add_window_dim(WindowShape& w, int64_t in, int64_t kernel, int64_t stride,
                           int64_t dilation, int64_t pad_begin, int64_t pad_end) {
  w.in.push_back(in);
  w.kernel.push_back(kernel);
  w.stride.push_back(stride);
  w.dilation.push_back(dilation);
  w.pad_begin.push_back(pad_begin);
  w.pad_end.push_back(pad_end);
}

// The window and the output extents `out` into a ConvParams, ConvTransposeParams or PoolParams:
// spatial_rank, in_size, out_size, kernel, stride, dilation and pad_begin.
template <typename Params>
void set_window(Params& p, const WindowShape& w, const Shape& out) {
  p.spatial_rank = static_cast<int32_t>(w.in.size());
  for (size_t d = 0; d < w.in.size(); ++d) {
    p.in_size[d] = w.in[d];
    p.out_size[d] = out[d];
    p.kernel[d] = w.kernel[d];
    p.stride[d] = w.stride[d];
    p.dilation[d] = w.dilation[d];
    p.pad_begin[d] = w.pad_begin[d];
  }
}

// The same from a case that holds its window per dim (c.in, c.kernel, c.stride, c.dilation and
// c.pad_begin, arrays or vectors) for `rank` dims; out_size and pad_end are the caller's.
template <typename Params, typename Case>
void set_window_dims(Params& p, int rank, const Case& c) {
  p.spatial_rank = static_cast<int32_t>(rank);
  for (int d = 0; d < rank; ++d) {
    p.in_size[d] = c.in[d];
    p.kernel[d] = c.kernel[d];
    p.stride[d] = c.stride[d];
    p.dilation[d] = c.dilation[d];
    p.pad_begin[d] = c.pad_begin[d];
  }
}

// The channel fields that ConvParams and ConvTransposeParams share (JP_CONV_FIELDS).
template <typename Params>
void set_conv_channels(Params& p, int64_t batch, int64_t in_channels, int64_t out_channels,
                       int64_t groups) {
  p.batch = batch;
  p.in_channels = in_channels;
  p.out_channels = out_channels;
  p.groups = groups;
}

// An INT8 Conv step's params (kernels/conv.h ConvInt8): 2-D, a square k x k kernel, symmetric
// padding, the channel epilogue in the bias slot, Int8 y (the ConvInt8 defaults).
inline ConvParams int8_conv2d(int64_t batch, int64_t cin, int64_t cout, int64_t groups,
                              const int64_t (&hw)[2], int64_t k, int64_t stride,
                              int64_t dilation, int64_t pad, bool channels_last) {
  ConvParams p;
  p.spatial_rank = 2;
  set_conv_channels(p, batch, cin, cout, groups);
  for (int d = 0; d < 2; ++d) {
    p.in_size[d] = hw[d];
    p.kernel[d] = k;
    p.stride[d] = stride;
    p.dilation[d] = dilation;
    p.pad_begin[d] = pad;
    p.out_size[d] = (hw[d] + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  }
  p.channels_last = channels_last;
  p.has_bias = true;
  p.int8.enabled = true;
  return p;
}

// A DeformConv step's params (kernels/deform_conv.h) for x [n, c, h, w] into cout channels: a kh
// x kw kernel, one stride, symmetric pad and dilation in both dims; no bias, no mask.
struct DeformConvShape {
  int64_t n, c, h, w, cout, kh, kw, stride, pad, dil, groups, offset_groups;
};
inline DeformConvParams deform_conv_params(const DeformConvShape& s) {
  DeformConvParams p;
  p.batch = s.n;
  p.in_channels = s.c;
  p.out_channels = s.cout;
  p.in_h = s.h;
  p.in_w = s.w;
  p.kernel_h = s.kh;
  p.kernel_w = s.kw;
  p.stride_h = p.stride_w = s.stride;
  p.pad_top = p.pad_left = s.pad;
  p.dilation_h = p.dilation_w = s.dil;
  p.out_h = (s.h + 2 * s.pad - s.dil * (s.kh - 1) - 1) / s.stride + 1;
  p.out_w = (s.w + 2 * s.pad - s.dil * (s.kw - 1) - 1) / s.stride + 1;
  p.groups = s.groups;
  p.offset_groups = s.offset_groups;
  return p;
}

// A Conv or ConvTranspose test case's params (S: a shape with WindowShape's fields, batch, the
// channel counts, groups and out()).
template <typename Params, typename S>
Params conv_like_params(const S& s, bool bias, bool residual, Activation act) {
  Params p;
  set_window(p, s, s.out());
  set_conv_channels(p, s.batch, s.in_channels, s.out_channels, s.groups);
  p.has_bias = bias;
  p.has_residual = residual;
  p.act = act;
  return p;
}

// GemmParams of `batch` products [M, K] x [K, N] (A and B transposed as said), the rest default.
inline GemmParams gemm_shape(int64_t batch, int64_t M, int64_t N, int64_t K, bool trans_a,
                             bool trans_b) {
  GemmParams p;
  p.batch = batch;
  p.M = M;
  p.N = N;
  p.K = K;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  return p;
}

// [batch, channels, spatial] -> [batch, spatial, channels] for any spatial volume.
template <typename T>
std::vector<T> to_channels_last(const std::vector<T>& x, int64_t batch, int64_t channels,
                                int64_t spatial) {
  std::vector<T> y(x.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < spatial; ++i)
        y[size_t((n * spatial + i) * channels + c)] = x[size_t((n * channels + c) * spatial + i)];
  return y;
}

}  // namespace jetplan::kernels::test_util
