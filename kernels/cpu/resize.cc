#include "kernels/resize.h"
#include "kernels/resize_math.h"

namespace jetplan::kernels::cpu {

using resize_math::dim_taps;
using resize_math::int8_tap_sum;
using resize_math::tap_product_sum;

namespace {

// Calls element(o, taps) for every output element o in row-major order with the taps of every
// dim (Weight: what a tap keeps), or outside(o) where tf_crop_and_resize puts it outside the
// input. in_stride: x's element strides. o is the dense result's index: it goes to y_index(p, o).
template <typename Weight, typename Element, typename Outside>
void for_each_output(const ResizeParams& p, int64_t* in_stride, Element element, Outside outside) {
  const int rank = p.rank;
  int64_t stride = 1;
  for (int d = rank; d-- > 0;) {
    in_stride[d] = stride;
    stride *= p.in_dims[d];
  }
  int64_t out_count = 1;
  for (int d = 0; d < rank; ++d) out_count *= p.out_dims[d];
  int64_t coord[kMaxRank] = {};  // output coordinate of element `o`, row-major odometer
  resize_math::Taps<Weight> taps[kMaxRank];
  for (int64_t o = 0; o < out_count; ++o) {
    bool inside = true;
    for (int d = 0; d < rank && inside; ++d) inside = dim_taps(p, d, coord[d], &taps[d]);
    if (inside) element(o, static_cast<const resize_math::Taps<Weight>*>(taps));
    else outside(o);
    for (int d = rank - 1; d >= 0 && ++coord[d] == p.out_dims[d]; --d) coord[d] = 0;
  }
}

}  // namespace

// Each output element: the taps of every dim, then the sum over their product in double, dim 0
// outermost and each dim's taps in increasing index order, rounded to float once. Dims that are
// not resized contribute one tap of weight 1, so the product stays small.
void resize(const ResizeParams& p, const float* x, float* y) {
  int64_t in_stride[kMaxRank];
  for_each_output<double>(
      p, in_stride,
      [&](int64_t o, const resize_math::Taps<double>* taps) {
        const double acc =
            tap_product_sum(p.rank, taps, in_stride, [x](int64_t offset) { return x[offset]; });
        y[y_index(p, o)] = static_cast<float>(acc);
      },
      [&](int64_t o) { y[y_index(p, o)] = p.extrapolation_value; });
}

// The GPU's arithmetic: float weights and int8_tap_sum (resize_math.h). The converter never
// makes a tf_crop_and_resize Int8 and the runtime refuses one; an output outside the input
// would be 0 here.
void resize_int8(const ResizeParams& p, const int8_t* x, int8_t* y) {
  int64_t in_stride[kMaxRank];
  for_each_output<float>(
      p, in_stride,
      [&](int64_t o, const resize_math::Taps<float>* taps) {
        y[y_index(p, o)] = int8_tap_sum(p.rank, taps, in_stride, x);
      },
      [&](int64_t o) { y[y_index(p, o)] = 0; });
}

}  // namespace jetplan::kernels::cpu
