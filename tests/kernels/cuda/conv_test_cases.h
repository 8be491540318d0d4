// The conv test cases and the forced launches of the igemm tiles, shared by the conv kernel
// tests (test_conv.cc) and the conv layer benchmarks (test_conv_bench.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels::conv_test {

struct Case {
  const char* name;
  int64_t batch, cin, cout, groups;
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end;
};

inline ConvParams params_of(const Case& c, bool epilogue, Activation act) {
  ConvParams p;
  test_util::set_window_dims(p, static_cast<int>(c.in.size()), c);
  test_util::set_conv_channels(p, c.batch, c.cin, c.cout, c.groups);
  for (size_t d = 0; d < c.in.size(); ++d)
    p.out_size[d] = (c.in[d] + c.pad_begin[d] + c.pad_end[d] - c.dilation[d] * (c.kernel[d] - 1) - 1) /
                        c.stride[d] + 1;
  p.has_bias = epilogue;
  p.has_residual = epilogue;
  p.act = act;
  p.channels_last = true;
  return p;
}

inline int64_t out_volume(const ConvParams& p) {
  int64_t v = 1;
  for (int d = 0; d < p.spatial_rank; ++d) v *= p.out_size[d];
  return v;
}
inline int64_t in_volume(const ConvParams& p) {
  int64_t v = 1;
  for (int d = 0; d < p.spatial_rank; ++d) v *= p.in_size[d];
  return v;
}
inline int64_t kernel_volume(const ConvParams& p) {
  int64_t v = 1;
  for (int d = 0; d < p.spatial_rank; ++d) v *= p.kernel[d];
  return v;
}

struct IgemmTile {
  const char* name;
  uint32_t bm, bn;
  bool any_channels;
};
inline constexpr IgemmTile kTiles[] = {{"jp_conv_igemm_128x128_f16", 128, 128, false},
                                {"jp_conv_igemm_64x64_f16", 64, 64, false},
                                {"jp_conv_igemm_32x64_f16", 32, 64, false},
                                {"jp_conv_igemm_32x64k64_f16", 32, 64, false},
                                {"jp_conv_igemm_128x128k64_f16", 128, 128, false},
                                {"jp_conv_igemm_64x64k64_f16", 64, 64, false},
                                {"jp_conv_igemm_64x64_anyc_f16", 64, 64, true},
                                {"jp_conv_igemm_wg128x128_f16", 128, 128, false},
                                {"jp_conv_igemm_wg128x128p_f16", 128, 128, false},
                                {"jp_conv_igemm_wg64x128_f16", 64, 128, false}};

// The grouped form's tiles (conv_grouped_igemm_fits).
inline constexpr IgemmTile kGroupedTiles[] = {{"jp_conv_igemm_64x64_grouped_f16", 64, 64, false},
                                       {"jp_conv_igemm_32x64_grouped_f16", 32, 64, false}};

// The launch of igemm tile `t` with `split` K slices (what conv_select.cc computes for it).
inline cuda::LaunchChoice igemm_choice(const IgemmTile& t, const ConvParams& p, uint32_t split) {
  cuda::LaunchChoice c;
  c.variant = cuda::find_kernel_variant(t.name);
  const uint64_t m = uint64_t(p.batch) * out_volume(p), n = uint64_t(p.out_channels);
  c.grid[0] = cuda::ceil_div_u32(m, t.bm);
  c.grid[1] = cuda::ceil_div_u32(n, t.bn);
  c.grid[2] = split;
  c.block[0] = c.variant->block_threads;
  c.shared_bytes = c.variant->shared_bytes;
  c.split_k = split;
  const uint64_t tiles = uint64_t(c.grid[0]) * c.grid[1];
  c.workspace_bytes = split > 1 ? tiles * (uint64_t(split) * t.bm * t.bn * 4 + 4) : 0;
  return c;
}

}  // namespace jetplan::kernels::conv_test
