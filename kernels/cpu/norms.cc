#include <cmath>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/nn_ops.h"

namespace jetplan::kernels::cpu {

namespace {

// Population mean and 1 / sqrt(var + epsilon) of `count` elements at x[0], x[stride], ...,
// two passes in double in increasing index order (no E[x^2] - E[x]^2 cancellation).
struct Moments {
  double mean;
  double inv_std;
};

Moments moments(const float* x, int64_t count, float epsilon) {
  double sum = 0.0;
  for (int64_t i = 0; i < count; ++i) sum += x[i];
  const double mean = sum / static_cast<double>(count);
  double sq = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = x[i] - mean;
    sq += d * d;
  }
  const double var = sq / static_cast<double>(count);
  return {mean, 1.0 / std::sqrt(var + static_cast<double>(epsilon))};
}

float normalize(const Moments& m, float x, double scale, double bias, const Activation& act) {
  const double v = scale * ((x - m.mean) * m.inv_std) + bias;
  return apply_activation(act, static_cast<float>(v));
}

}  // namespace

void instance_norm(const InstanceNormParams& p, const float* x, const float* scale,
                   const float* bias, float* y) {
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) {
      const int64_t base = (n * p.channels + c) * p.spatial;
      const Moments m = moments(x + base, p.spatial, p.epsilon);
      for (int64_t s = 0; s < p.spatial; ++s)
        y[base + s] = normalize(m, x[base + s], scale[c], bias[c], p.act);
    }
}

void layer_norm(const LayerNormParams& p, const float* x, const float* scale, const float* bias,
                float* y, float* mean, float* inv_std_dev) {
  for (int64_t o = 0; o < p.outer; ++o) {
    const float* xr = x + o * p.inner;
    const Moments m = moments(xr, p.inner, p.epsilon);
    for (int64_t i = 0; i < p.inner; ++i)
      y[o * p.inner + i] = normalize(m, xr[i], scale[i], p.has_bias ? bias[i] : 0.0, p.act);
    if (mean) mean[o] = static_cast<float>(m.mean);
    if (inv_std_dev) inv_std_dev[o] = static_cast<float>(m.inv_std);
  }
}

// A group's channels are contiguous in memory, so its statistics run over one span.
void group_norm(const GroupNormParams& p, const float* x, const float* scale, const float* bias,
                float* y) {
  const int64_t per_group = p.channels / p.groups;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.groups; ++g) {
      const int64_t base = (n * p.channels + g * per_group) * p.spatial;
      const Moments m = moments(x + base, per_group * p.spatial, p.epsilon);
      for (int64_t cg = 0; cg < per_group; ++cg) {
        const int64_t c = g * per_group + cg;
        const int64_t affine = p.affine_per_group ? g : c;
        for (int64_t s = 0; s < p.spatial; ++s) {
          const int64_t i = base + cg * p.spatial + s;
          y[i] = normalize(m, x[i], scale[affine], bias[affine], p.act);
        }
      }
    }
}

// The square sum runs over the window's channels in increasing order, in double.
void lrn(const LrnParams& p, const float* x, float* y) {
  const int64_t before = (p.size - 1) / 2;
  const int64_t after = p.size - 1 - before;  // ceil((size - 1) / 2)
  const double alpha_over_size = static_cast<double>(p.alpha) / static_cast<double>(p.size);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) {
      const int64_t first = c - before < 0 ? 0 : c - before;
      const int64_t last = c + after >= p.channels ? p.channels - 1 : c + after;
      for (int64_t s = 0; s < p.spatial; ++s) {
        double sq = 0.0;
        for (int64_t k = first; k <= last; ++k) {
          const double v = x[(n * p.channels + k) * p.spatial + s];
          sq += v * v;
        }
        const int64_t i = (n * p.channels + c) * p.spatial + s;
        const double denom = std::pow(p.bias + alpha_over_size * sq, static_cast<double>(p.beta));
        y[i] = static_cast<float>(x[i] / denom);
      }
    }
}

}  // namespace jetplan::kernels::cpu
