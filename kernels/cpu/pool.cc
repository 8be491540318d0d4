#include "kernels/pool.h"

namespace jetplan::kernels::cpu {

namespace {

using Geometry = PoolGeometry;

// How a window tap at input coordinate i of dim d counts: read from x, padding, or nothing (past
// pad_end, where a ceil-mode output window may reach).
enum class Tap { kInput, kPad, kOutside };

Tap classify(const Geometry& g, int d, int64_t i) {
  if (i >= 0 && i < g.in[d]) return Tap::kInput;
  if (i >= -g.pad_begin[d] && i < g.in[d] + g.pad_end[d]) return Tap::kPad;
  return Tap::kOutside;
}

// The walk of pool() below over elements of type T (float; int8 for Max only, whose result is
// one of its inputs, so the float compare and the conversion back are exact).
template <typename T>
void pool_t(const PoolParams& p, const T* x, T* y, int64_t* indices) {
  const Geometry g = pool_geometry_3d(p);
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const bool is_max = p.kind == PoolKind::kMax;

  // A plane is one (n, c): its elements lie `step` apart (1 in NCHW, channels in NHWC).
  const int64_t step = p.channels_last ? p.channels : 1;
  for (int64_t plane = 0; plane < p.batch * p.channels; ++plane) {
    const int64_t n = plane / p.channels, c = plane % p.channels;
    const T* xp = p.channels_last ? x + n * in_plane * p.channels + c : x + plane * in_plane;
    T* yp = p.channels_last ? y + n * out_plane * p.channels + c : y + plane * out_plane;
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
          const int64_t o[3] = {o0, o1, o2};
          float max = 0.f;
          int64_t arg = 0;
          double sum = 0.0;
          int64_t inputs = 0, counted = 0;
          for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0)
            for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1)
              for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                const int64_t k[3] = {k0, k1, k2};
                int64_t i[3];
                bool all_input = true, any_outside = false;
                for (int d = 0; d < 3; ++d) {
                  i[d] = o[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
                  const Tap t = classify(g, d, i[d]);
                  all_input = all_input && t == Tap::kInput;
                  any_outside = any_outside || t == Tap::kOutside;
                }
                if (any_outside) continue;
                ++counted;
                if (!all_input) continue;
                const int64_t at = ((i[0] * g.in[1] + i[1]) * g.in[2] + i[2]) * step;
                const float v = static_cast<float>(xp[at]);
                if (inputs == 0 || v > max || v != v) {
                  max = v;
                  arg = at;
                }
                sum += v;
                ++inputs;
              }
          const int64_t divisor = p.count_include_pad ? counted : inputs;
          float result = 0.f;
          if (is_max) result = max;
          else if (divisor > 0) result = static_cast<float>(sum / static_cast<double>(divisor));
          yp[((o0 * g.out[1] + o1) * g.out[2] + o2) * step] = static_cast<T>(result);
          if (indices != nullptr) {
            // arg is row-major within the plane; column-major reverses the dims' order.
            int64_t at = arg;
            if (p.indices_column_major) {
              const int64_t i2 = arg % g.in[2], i1 = arg / g.in[2] % g.in[1],
                            i0 = arg / (g.in[2] * g.in[1]);
              at = (i2 * g.in[1] + i1) * g.in[0] + i0;
            }
            indices[plane * out_plane + (o0 * g.out[1] + o1) * g.out[2] + o2] =
                plane * in_plane + at;
          }
        }
  }
}

}  // namespace

// Max ignores padding. Average sums in double, in window order, and divides by the taps inside
// x, or with count_include_pad also by those in the padding. A window with no tap inside x (it
// lies wholly in the padding) gives 0 for both kinds: a finite, neutral value instead of -inf or
// 0/0. A NaN in a max window wins, so it stays visible.
// indices (Max, NCHW only; may be null): per output, the flat NCHW offset in x of the element it
// took (ONNX MaxPool's Indices; with indices_column_major the offset within the plane is
// column-major, storage_order 1), the first of equal ones; 0 for a window with no tap inside x.
void pool(const PoolParams& p, const float* x, float* y, int64_t* indices) {
  pool_t(p, x, y, indices);
}

void max_pool_int8(const PoolParams& p, const int8_t* x, int8_t* y) {
  pool_t(p, x, y, nullptr);
}

}  // namespace jetplan::kernels::cpu
