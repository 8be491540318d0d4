// Latency samples of camera_loop: percentiles for the live line and the summary, and the
// histogram PNG drawn at the end.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace camera_loop {

class LatencySamples {
 public:
  void add(double ms) {
    if (ms_.size() < kMaxSamples) ms_.push_back(ms);  // hours at 30 fps; bounded
  }
  size_t count() const { return ms_.size(); }
  // The q-quantile (0..1, nearest rank) of every sample so far; 0 when there is none.
  double quantile(double q) const;
  double max() const;
  const std::vector<double>& samples() const { return ms_; }
  // "p50 1.23 p99 2.34 max 3.45 ms"
  std::string summary() const;

 private:
  static constexpr size_t kMaxSamples = size_t(1) << 22;
  std::vector<double> ms_;
};

// Writes a PNG of two histograms, one above the other over the same millisecond axis (0 at the
// left edge, axis_ms at the right): inference latency (blue) and frame time (orange), each with
// its p50 (white) and p99 (red) marked. False with *error on a write failure.
bool write_histogram_png(const std::string& path, const LatencySamples& inference,
                         const LatencySamples& frame, double* axis_ms, std::string* error);

}  // namespace camera_loop
