// Helpers of the tensor-op kernel tests (test_tensor_*.cc): shapes and coordinates, a seeded
// generator that reports its seed with every failure, and poisoned outputs. Outputs are poisoned
// before each kernel call (NaN for floats, 0xA5 then 0x5A bytes otherwise: a byte kernel runs
// once per pattern, so a byte left unwritten cannot match the reference both times) and carry a
// guard zone after their end that must stay poison. No comparison here lets NaN pass.
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

namespace jetplan::kernels::tensor_test {

using Shape = std::vector<int64_t>;
using Bytes = std::vector<unsigned char>;

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

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
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

  // Uniform integer in [lo, hi].
  int64_t integer(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
  }
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen_); }
  std::vector<float> uniform(int64_t n, float lo, float hi) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = uniform(lo, hi);
    return v;
  }
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
#define SEEDED_RNG(name) ::jetplan::kernels::tensor_test::SeededRng name(__FILE__, __LINE__)

// ------------------------------------------------------------------ poisoned outputs, compare

constexpr int64_t kGuardBytes = 64;  // after the end; must stay poison
constexpr unsigned char kBytePoisons[2] = {0xA5, 0x5A};

// A byte output of n bytes filled with one poison byte, plus a guard zone.
class ByteOutput {
 public:
  ByteOutput(int64_t n, unsigned char poison)
      : n_(n), poison_(poison), buf_(static_cast<size_t>(n + kGuardBytes), poison) {}
  unsigned char* data() { return buf_.data(); }
  const unsigned char* data() const { return buf_.data(); }
  int64_t size() const { return n_; }
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

constexpr uint32_t kPoisonBits = 0x7fc0deadu;  // a quiet NaN with a payload no kernel computes
constexpr int64_t kGuard = 16;                 // float elements after the end

inline bool is_poison(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits == kPoisonBits;
}

// A float output of n elements, poisoned NaN at construction, with a poisoned guard zone.
class FloatOutput {
 public:
  explicit FloatOutput(int64_t n) : n_(n), buf_(static_cast<size_t>(n + kGuard)) {
    float poison;
    std::memcpy(&poison, &kPoisonBits, sizeof poison);
    for (float& f : buf_) f = poison;
  }
  float* data() { return buf_.data(); }
  int64_t size() const { return n_; }
  float operator[](int64_t i) const { return buf_[static_cast<size_t>(i)]; }
  bool guard_intact() const {
    for (int64_t i = n_; i < n_ + kGuard; ++i)
      if (!is_poison((*this)[i])) return false;
    return true;
  }

 private:
  int64_t n_;
  std::vector<float> buf_;
};

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

// `inputs`, when given, is printed beside each failing element.
inline testing::AssertionResult all_close(const FloatOutput& got, const std::vector<double>& want,
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

// ------------------------------------------------------------------------------ broadcasting

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

}  // namespace jetplan::kernels::tensor_test
