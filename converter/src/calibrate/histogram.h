// Per-tensor statistics of calibration: the running abs-max and a histogram of |x|, and the
// methods that turn them into an amax (the |x| that int8 127 stands for).
//
// Why a power-of-two range: results must not depend on how samples were split between threads.
// The range is always 2^k with every finite |x| < 2^k; a sample that exceeds it doubles the range
// (adjacent bins merge pairwise: floor(floor(x/w)/2) == floor(x/2w), so the counts stay exactly
// what direct binning would give) until it fits. Binning |x| * 2048 / 2^k is exact in float, so a
// histogram built from any partition of the samples, merged in any order, is identical bit for
// bit to one built from all of them in one pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "converter/src/calibrate/calibration_options.h"

namespace jetplan::converter {

class TensorHistogram {
 public:
  static constexpr int kBins = 2048;

  // Adds `count` values; NaN and infinities are counted apart (non_finite) and not binned.
  void add(const float* data, size_t count);
  // Adds another histogram's counts (of any range) to this one.
  void merge(const TensorHistogram& other);

  float abs_max() const { return abs_max_; }  // the largest finite |x| added (0 if none)
  uint64_t count() const { return total_; }   // finite values added
  uint64_t non_finite() const { return non_finite_; }
  // The histogram's upper edge, 2^exponent (meaningful once a non-zero value was added).
  double range() const;
  const std::vector<uint64_t>& bins() const { return bins_; }  // empty until the first add

 private:
  void grow_to(int exponent);  // doubles the range until it is 2^exponent
  std::vector<uint64_t> bins_;
  int exponent_ = 0;
  bool has_range_ = false;  // false until a non-zero finite value was seen
  float abs_max_ = 0.f;
  uint64_t total_ = 0;
  uint64_t non_finite_ = 0;
};

// The amax of `h` by `method`: positive and finite, or nullopt when h holds no finite non-zero
// value (a tensor that is always zero has no scale: never a zero one).
std::optional<float> compute_amax(const TensorHistogram& h, CalibrationMethod method,
                                  double percentile);

}  // namespace jetplan::converter
