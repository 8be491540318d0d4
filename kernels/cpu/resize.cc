#include "kernels/resize.h"
#include "kernels/resize_math.h"

namespace jetplan::kernels::cpu {

using resize_math::dim_taps;
using resize_math::tap_product_sum;
using Taps = resize_math::Taps<double>;  // the twin keeps its weights in double

// Each output element: the taps of every dim, then the sum over their product in double, dim 0
// outermost and each dim's taps in increasing index order, rounded to float once. Dims that are
// not resized contribute one tap of weight 1, so the product stays small.
void resize(const ResizeParams& p, const float* x, float* y) {
  const int rank = p.rank;
  int64_t in_stride[kMaxRank];
  int64_t stride = 1;
  for (int d = rank; d-- > 0;) {
    in_stride[d] = stride;
    stride *= p.in_dims[d];
  }
  int64_t out_count = 1;
  for (int d = 0; d < rank; ++d) out_count *= p.out_dims[d];

  int64_t coord[kMaxRank] = {};  // output coordinate of element `o`, row-major odometer
  Taps taps[kMaxRank];
  for (int64_t o = 0; o < out_count; ++o) {
    bool inside = true;
    for (int d = 0; d < rank && inside; ++d) inside = dim_taps(p, d, coord[d], &taps[d]);
    if (!inside) {
      y[o] = p.extrapolation_value;
    } else {
      const double acc =
          tap_product_sum(rank, taps, in_stride, [x](int64_t offset) { return x[offset]; });
      y[o] = static_cast<float>(acc);
    }
    for (int d = rank - 1; d >= 0 && ++coord[d] == p.out_dims[d]; --d) coord[d] = 0;
  }
}

}  // namespace jetplan::kernels::cpu
