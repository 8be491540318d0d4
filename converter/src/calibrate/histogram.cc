#include "converter/src/calibrate/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace jetplan::converter {
namespace {

constexpr int kLevels = 128;  // int8's non-negative levels: what entropy quantizes |x| into

// The exponent e with |x| < 2^e <= 2|x| (x finite and non-zero).
int exponent_above(float x) {
  int e = 0;
  std::frexp(static_cast<double>(x), &e);  // x = m * 2^e, m in [0.5, 1)
  return e;
}

// The index past the last non-zero bin (0 when every bin is empty).
size_t used_bins(const std::vector<uint64_t>& bins) {
  size_t n = bins.size();
  while (n > 0 && bins[n - 1] == 0) --n;
  return n;
}

double percentile_amax(const std::vector<uint64_t>& bins, uint64_t total, double width,
                       double percentile) {
  const double target = std::ceil(percentile / 100.0 * static_cast<double>(total));
  uint64_t seen = 0;
  for (size_t i = 0; i < bins.size(); ++i) {
    seen += bins[i];
    if (static_cast<double>(seen) >= target) return static_cast<double>(i + 1) * width;
  }
  return static_cast<double>(bins.size()) * width;
}

// KL(P || Q) of the histogram clipped to its first `n` bins (P: the clipped bins with the mass
// past them added to the last; Q: those n bins merged into 128 levels and spread back evenly
// over the bins that were non-zero). Q's empty entries are smoothed with a small epsilon, as
// the MXNet/TVM implementations of this procedure do, so that a lone outlier folded into P's last
// bin does not make every clip below it infinitely bad.
double clipped_divergence(const std::vector<uint64_t>& bins, size_t n, uint64_t total,
                          std::vector<double>* q) {
  uint64_t outside = 0;
  for (size_t k = n; k < bins.size(); ++k) outside += bins[k];
  // P's non-zero entries: the clipped bins, the last one holding everything past the clip.
  auto p_nonzero = [&](size_t k) { return bins[k] != 0 || (k == n - 1 && outside != 0); };
  const size_t merged = n / kLevels;
  q->assign(n, 0.0);
  for (int level = 0; level < kLevels; ++level) {
    const size_t begin = static_cast<size_t>(level) * merged;
    const size_t end = level == kLevels - 1 ? n : begin + merged;
    double sum = 0.0;
    size_t nonzero = 0;
    for (size_t k = begin; k < end; ++k) {
      sum += static_cast<double>(bins[k]);
      nonzero += p_nonzero(k);
    }
    if (nonzero == 0) continue;
    for (size_t k = begin; k < end; ++k) {
      if (p_nonzero(k)) (*q)[k] = sum / static_cast<double>(nonzero);
    }
  }
  double q_sum = 0.0;
  size_t q_zeros = 0;
  for (size_t k = 0; k < n; ++k) {
    q_sum += (*q)[k];
    q_zeros += (*q)[k] == 0.0;
  }
  if (q_sum <= 0.0) return std::numeric_limits<double>::infinity();
  constexpr double kEps = 1e-4;
  const double eps_taken = q_zeros == n ? 0.0 : kEps * q_zeros / static_cast<double>(n - q_zeros);
  double kl = 0.0;
  const double p_total = static_cast<double>(total);
  for (size_t k = 0; k < n; ++k) {
    const double p_count = static_cast<double>(bins[k] + (k == n - 1 ? outside : 0));
    if (p_count == 0.0) continue;
    const double p = p_count / p_total;
    double qk = (*q)[k] == 0.0 ? kEps : (*q)[k] / q_sum - eps_taken;
    qk = std::max(qk, 1e-12);
    kl += p * std::log(p / qk);
  }
  return kl;
}

double entropy_amax(std::vector<uint64_t> bins, double width) {
  // The first bin holds every exact zero (half of a ReLU's output): as it is, its spike merged
  // with its neighbours into level 0 outweighs everything else and drives the clip far too low.
  // It is levelled with its neighbour, as NVIDIA's pytorch-quantization does.
  if (bins.size() > 1) bins[0] = bins[1];
  uint64_t total = 0;
  for (uint64_t b : bins) total += b;
  if (total == 0) return static_cast<double>(bins.size()) * width;
  const size_t used = used_bins(bins);
  const size_t last = std::max<size_t>(used, kLevels);
  std::vector<double> q;
  double best = std::numeric_limits<double>::infinity();
  size_t best_n = last;
  for (size_t n = kLevels; n <= last; ++n) {
    const double kl = clipped_divergence(bins, n, total, &q);
    if (kl < best) {  // strict: ties keep the smaller clip, as TensorRT's argmin does
      best = kl;
      best_n = n;
    }
  }
  return static_cast<double>(best_n) * width;
}

// Mean squared error (times the count) of symmetric int8 quantize-dequantize with this amax,
// each bin standing for its centre.
double quantization_error(const std::vector<uint64_t>& bins, size_t used, double width,
                          double amax) {
  const double scale = amax / 127.0;
  double error = 0.0;
  for (size_t k = 0; k < used; ++k) {
    if (bins[k] == 0) continue;
    const double x = (static_cast<double>(k) + 0.5) * width;
    const double d = x >= amax ? x - amax : x - std::nearbyint(x / scale) * scale;
    error += static_cast<double>(bins[k]) * d * d;
  }
  return error;
}

double mse_amax(const std::vector<uint64_t>& bins, double width, double abs_max) {
  const size_t used = used_bins(bins);
  double best = std::numeric_limits<double>::infinity(), best_amax = abs_max;
  for (size_t i = 1; i <= used; ++i) {
    const double amax = std::min(static_cast<double>(i) * width, abs_max);
    const double error = quantization_error(bins, used, width, amax);
    if (error < best) {
      best = error;
      best_amax = amax;
    }
  }
  return best_amax;
}

}  // namespace

void TensorHistogram::grow_to(int exponent) {
  const int shift = std::min(exponent - exponent_, 31);
  std::vector<uint64_t> grown(kBins, 0);
  for (size_t i = 0; i < bins_.size(); ++i) grown[i >> shift] += bins_[i];
  bins_.swap(grown);
  exponent_ = exponent;
}

void TensorHistogram::add(const float* data, size_t count) {
  if (bins_.empty()) bins_.assign(kBins, 0);
  float local_max = 0.f;
  for (size_t i = 0; i < count; ++i) {
    const float a = std::fabs(data[i]);
    if (std::isfinite(a)) {
      local_max = std::max(local_max, a);
    } else {
      ++non_finite_;
    }
  }
  if (local_max > 0.f) {
    const int e = exponent_above(local_max);
    if (!has_range_) {
      exponent_ = e;  // the zeros binned so far stay in bin 0 whatever the range
      has_range_ = true;
    } else if (e > exponent_) {
      grow_to(e);
    }
  }
  abs_max_ = std::max(abs_max_, local_max);
  // 2048 / 2^e, in double: |x| times a power of two is exact, so the bin never depends on order.
  const double to_bin = std::ldexp(1.0, 11 - exponent_);
  for (size_t i = 0; i < count; ++i) {
    const float a = std::fabs(data[i]);
    if (!std::isfinite(a)) continue;
    const size_t bin = static_cast<size_t>(static_cast<double>(a) * to_bin);
    ++bins_[std::min<size_t>(bin, kBins - 1)];
    ++total_;
  }
}

void TensorHistogram::merge(const TensorHistogram& other) {
  if (other.bins_.empty()) return;
  if (bins_.empty()) {
    *this = other;
    return;
  }
  if (other.has_range_) {
    if (!has_range_) {
      exponent_ = other.exponent_;
      has_range_ = true;
    } else if (other.exponent_ > exponent_) {
      grow_to(other.exponent_);
    }
  }
  const int shift = std::min(exponent_ - other.exponent_, 31);
  for (size_t i = 0; i < other.bins_.size(); ++i) {
    bins_[other.has_range_ ? i >> shift : i] += other.bins_[i];
  }
  abs_max_ = std::max(abs_max_, other.abs_max_);
  total_ += other.total_;
  non_finite_ += other.non_finite_;
}

double TensorHistogram::range() const {
  return std::ldexp(1.0, exponent_);
}

std::optional<float> compute_amax(const TensorHistogram& h, CalibrationMethod method,
                                  double percentile) {
  if (!(h.abs_max() > 0.f) || h.bins().empty()) return std::nullopt;
  const double width = h.range() / TensorHistogram::kBins;
  const double abs_max = h.abs_max();
  double amax = abs_max;
  switch (method) {
    case CalibrationMethod::kMinMax: break;
    case CalibrationMethod::kPercentile:
      amax = percentile_amax(h.bins(), h.count(), width, percentile);
      break;
    case CalibrationMethod::kEntropy: amax = entropy_amax(h.bins(), width); break;
    case CalibrationMethod::kMse: amax = mse_amax(h.bins(), width, abs_max); break;
  }
  // A clip past the largest value seen only wastes levels; nor may it round to zero in float.
  const float result = static_cast<float>(std::min(amax, abs_max));
  if (!(result > 0.f) || !std::isfinite(result)) return static_cast<float>(abs_max);
  return result;
}

}  // namespace jetplan::converter
