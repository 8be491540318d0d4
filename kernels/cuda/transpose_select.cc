#include "kernels/cuda/select.h"
#include "kernels/transpose.h"

namespace jetplan::kernels::cuda {
namespace {

// Tiles of the tiled transpose when the permutation coalesces to y [batch, rows, cols] with rows
// contiguous in x (NCHW <-> NHWC and every 2-D transpose); 0 when it does not. The kernel finds
// the same view on the device (transpose.cu, tile_view).
uint64_t transpose_tiles(const TransposeParams& p) {
  int64_t dims[kMaxRank], strides[kMaxRank];
  const int n = coalesce_transpose(p, dims, strides);
  const auto tiles = [](int64_t b, int64_t r, int64_t c) {
    return static_cast<uint64_t>(b) * ceil_div_u32(r, 32) * ceil_div_u32(c, 32);
  };
  if (n == 2 && strides[0] == 1 && strides[1] != 1) return tiles(1, dims[0], dims[1]);
  if (n == 3 && strides[1] == 1 && strides[2] != 1) return tiles(dims[0], dims[1], dims[2]);
  return 0;
}

}  // namespace

bool select_transpose(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                      std::string* why) {
  const auto* p = static_cast<const TransposeParams*>(step.params);
  const int64_t e = p->elem_bytes;
  if (p->half_to_float ? e != 2 : p->float_to_half ? e != 4 : (e != 1 && e != 2 && e != 4 && e != 8)) {
    *why =
        "the CUDA Transpose kernels move elements of 1, 2, 4 or 8 bytes, or convert Float16 "
        "to Float32 or Float32 to Float16";
    return false;
  }
  // [tiled][log2 of the element size], and the FP16 -> FP32 pair.
  static constexpr VariantId kMovers[2][4] = {
      {VariantId::jp_transpose_b1, VariantId::jp_transpose_b2, VariantId::jp_transpose_b4,
       VariantId::jp_transpose_b8},
      {VariantId::jp_transpose_tiled_b1, VariantId::jp_transpose_tiled_b2,
       VariantId::jp_transpose_tiled_b4, VariantId::jp_transpose_tiled_b8}};
  static constexpr VariantId kHalfToFloat[2] = {VariantId::jp_transpose_h2f,
                                                VariantId::jp_transpose_tiled_h2f};
  static constexpr VariantId kFloatToHalf[2] = {VariantId::jp_transpose_f2h,
                                                VariantId::jp_transpose_tiled_f2h};
  const uint64_t tiles = transpose_tiles(*p);
  const int tiled = tiles > 0 ? 1 : 0;
  const int log2_bytes = e == 1 ? 0 : e == 2 ? 1 : e == 4 ? 2 : 3;
  out->variant = &kernel_variant(p->half_to_float   ? kHalfToFloat[tiled]
                                 : p->float_to_half ? kFloatToHalf[tiled]
                                                    : kMovers[tiled][log2_bytes]);
  if (tiles > 0) {
    launch_1d(tiles * 256, 256, target.sm_count * 16, out);
    out->block[0] = 32;
    out->block[1] = 8;
    return true;
  }
  launch_1d(count_elements(p->rank, p->out_dims), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
