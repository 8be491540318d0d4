// Helpers shared by the nn-op kernel tests (test_nn_*.cc), in the conventions of
// test_cpu_kernels.cc: outputs poisoned with a NaN payload no kernel computes plus a guard zone
// after the end, comparisons that never pass on NaN, and a seeded std::mt19937 whose seed is
// printed with any failure (JETPLAN_TEST_SEED=<n> replays it).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace jetplan::kernels::nn_test {

using Shape = std::vector<int64_t>;

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
               "seed " + std::to_string(seed_) + " (replay: JETPLAN_TEST_SEED=" +
                   std::to_string(seed_) + ")") {}

  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen_); }
  std::vector<float> uniform(int64_t n, float lo, float hi) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = uniform(lo, hi);
    return v;
  }
  // Integer in [lo, hi].
  int64_t integer(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
  }
  // Small integers as floats: many exact ties.
  std::vector<float> integers(int64_t n, int lo, int hi) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = static_cast<float>(integer(lo, hi));
    return v;
  }
  bool coin() { return gen_() & 1u; }

 private:
  uint32_t seed_;
  std::mt19937 gen_;
  testing::ScopedTrace trace_;
};
#define SEEDED_RNG(name) ::jetplan::kernels::nn_test::SeededRng name(__FILE__, __LINE__)

// ------------------------------------------------------------------ poisoned outputs, compare

constexpr uint32_t kPoisonBits = 0x7fc0deadu;  // a quiet NaN with a payload no kernel computes
constexpr int64_t kPoisonInt = INT64_C(0x7eadbeefdeadbeef);  // no index or count is this
constexpr int64_t kGuard = 16;  // elements after the end that must stay poison

inline float poison_value() {
  float f;
  std::memcpy(&f, &kPoisonBits, sizeof f);
  return f;
}

inline bool is_poison(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits == kPoisonBits;
}

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

class Output : public PoisonedBuffer<float> {
 public:
  explicit Output(int64_t n) : PoisonedBuffer<float>(n, poison_value()) {}
};

class IndexOutput : public PoisonedBuffer<int64_t> {
 public:
  explicit IndexOutput(int64_t n) : PoisonedBuffer<int64_t>(n, kPoisonInt) {}
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

inline testing::AssertionResult all_close(const Output& got, const std::vector<double>& want,
                                          Tolerance tol) {
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
      detail << "\n  [" << i << "] got " << got[i] << " want " << w;
      if (is_poison(got[i])) detail << " (poison: never written)";
    }
  }
  if (failures == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << failures << " of " << got.size()
                                     << " elements differ beyond rel " << tol.rel << " abs "
                                     << tol.abs << ":" << detail.str();
}

// Elements equal one by one; the guard intact.
inline testing::AssertionResult all_equal(const IndexOutput& got, const std::vector<int64_t>& want) {
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

// A workspace of `bytes` poisoned bytes (the kernel must not expect zeros) plus a guard.
class Workspace {
 public:
  explicit Workspace(int64_t bytes)
      : bytes_(bytes), buf_(static_cast<size_t>((bytes + 7) / 8 + kGuard), kPoisonInt) {}
  void* data() { return buf_.data(); }
  bool guard_intact() const {
    for (size_t i = static_cast<size_t>((bytes_ + 7) / 8); i < buf_.size(); ++i)
      if (buf_[i] != kPoisonInt) return false;
    return true;
  }

 private:
  int64_t bytes_;
  std::vector<int64_t> buf_;
};

}  // namespace jetplan::kernels::nn_test
