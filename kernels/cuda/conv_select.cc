// Conv selection: channels_last steps only (GPU plans are NHWC). FP16: 2-D groups-1 convs go to
// an implicit-GEMM tile (the largest whose tiles still fill the SMs; serial split-K when even
// the smallest cannot), grouped ones of 4k channels a group to the grouped form's tiles,
// depthwise convs to the depthwise kernels, the rest to the direct one.
// INT8 (Int8 x and w): 2-D groups-1 convs with Cin % 8 == 0 to an INT8 tile by rules of their
// own (select_conv_int8; Cin % 16 != 0 to the tile of 8-byte halves), 2-D depthwise convs to
// the depthwise INT8 kernel, the variant writing y's type (Int8, or Float16: _f16out).
#include <algorithm>

#include "kernels/conv.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {
namespace {

struct Tile {
  VariantId id;
  uint32_t bm, bn, bk;  // bk: K elements per pipeline stage
  uint32_t elem_bytes = 2;
};
constexpr Tile kTile128{VariantId::jp_conv_igemm_128x128_f16, 128, 128, 32};
constexpr Tile kTile128K64{VariantId::jp_conv_igemm_128x128k64_f16, 128, 128, 64};
constexpr Tile kTile64{VariantId::jp_conv_igemm_64x64_f16, 64, 64, 32};
constexpr Tile kTile64K64{VariantId::jp_conv_igemm_64x64k64_f16, 64, 64, 64};
constexpr Tile kTile32{VariantId::jp_conv_igemm_32x64_f16, 32, 64, 32};
constexpr Tile kTile32K64{VariantId::jp_conv_igemm_32x64k64_f16, 32, 64, 64};
constexpr Tile kTileAnyC{VariantId::jp_conv_igemm_64x64_anyc_f16, 64, 64, 32};
constexpr uint32_t kBK = 32;
// The Hopper tiles (sm_90 targets only: wgmma, IgemmWg in conv_igemm_load.cuh), 64 K a stage.
// Their INT8 twins (jp_conv_igemm_wg*_i8[_f16out]) are not selected: see select_conv_int8.
constexpr Tile kTileWg128{VariantId::jp_conv_igemm_wg128x128_f16, 128, 128, 64};
constexpr Tile kTileWg64{VariantId::jp_conv_igemm_wg64x128_f16, 64, 128, 64};

// The INT8 tiles: 64 K a stage (128 for the long-K ones), Int8 y and Float16 y.
struct TilesI8 {
  Tile t128, t64, t64k, t32, t32k;
};
constexpr TilesI8 kTilesI8{{VariantId::jp_conv_igemm_128x128_i8, 128, 128, 64, 1},
                           {VariantId::jp_conv_igemm_64x64_i8, 64, 64, 64, 1},
                           {VariantId::jp_conv_igemm_64x64k128_i8, 64, 64, 128, 1},
                           {VariantId::jp_conv_igemm_32x64_i8, 32, 64, 64, 1},
                           {VariantId::jp_conv_igemm_32x64k128_i8, 32, 64, 128, 1}};
constexpr TilesI8 kTilesI8F16{{VariantId::jp_conv_igemm_128x128_i8_f16out, 128, 128, 64, 1},
                              {VariantId::jp_conv_igemm_64x64_i8_f16out, 64, 64, 64, 1},
                              {VariantId::jp_conv_igemm_64x64k128_i8_f16out, 64, 64, 128, 1},
                              {VariantId::jp_conv_igemm_32x64_i8_f16out, 32, 64, 64, 1},
                              {VariantId::jp_conv_igemm_32x64k128_i8_f16out, 32, 64, 128, 1}};

// Cin % 8 == 0 but not 16: tiles whose 16-byte chunks load as two 8-byte halves.
constexpr Tile kTileC8{VariantId::jp_conv_igemm_32x64_c8_i8, 32, 64, 64, 1};
constexpr Tile kTileC8F16{VariantId::jp_conv_igemm_32x64_c8_i8_f16out, 32, 64, 64, 1};
constexpr Tile kTileC8x64{VariantId::jp_conv_igemm_64x64_c8_i8, 64, 64, 64, 1};
constexpr Tile kTileC8x64F16{VariantId::jp_conv_igemm_64x64_c8_i8_f16out, 64, 64, 64, 1};

// The grouped form's tiles (conv_grouped_igemm_fits), N tiles of 64 output channels.
constexpr Tile kTileG64{VariantId::jp_conv_igemm_64x64_grouped_f16, 64, 64, 32};
constexpr Tile kTileG32{VariantId::jp_conv_igemm_32x64_grouped_f16, 32, 64, 32};
constexpr Tile kTileGI8{VariantId::jp_conv_igemm_32x64_grouped_i8, 32, 64, 64, 1};
constexpr Tile kTileGI8F16{VariantId::jp_conv_igemm_32x64_grouped_i8_f16out, 32, 64, 64, 1};

uint64_t tiles_of(const Tile& t, uint64_t m, uint64_t n) {
  return uint64_t(ceil_div_u32(m, t.bm)) * ceil_div_u32(n, t.bn);
}

// The grouped form's K: the window times the most input channels an N tile of `t` runs over
// (conv_grouped_tile: the channels of the groups it covers, to multiples of 8).
uint64_t grouped_k(const ConvParams& p, const Tile& t, uint64_t kvol) {
  int64_t most = 0, first = 0;
  for (int64_t n0 = 0; n0 < p.out_channels; n0 += t.bn)
    most = std::max(most, conv_grouped_tile(p, n0, t.bn, &first));
  return kvol * uint64_t(most);
}

// The igemm launch for `t`; serial split-K when its tiles alone leave the SMs short of work:
// fewer than `ctas_per_sm` CTAs an SM, with slices of at least `min_slice_bytes` of K, and K of
// at least `min_split_bytes` unless the tiles leave 7 of 8 SMs idle.
bool launch_igemm(const Tile& t, uint64_t m, uint64_t n, uint64_t k, const TargetInfo& target,
                  LaunchChoice* out, std::string* why, double ctas_per_sm = 3,
                  uint32_t min_slice_bytes = 512, uint64_t min_split_bytes = 0) {
  out->variant = &kernel_variant(t.id);
  if (out->variant->shared_bytes > target.max_shared_per_block && target.max_shared_per_block) {
    *why = "the target's shared memory per block is too small for the conv tile";
    return false;
  }
  const uint64_t tiles = tiles_of(t, m, n);
  const uint32_t kt = ceil_div_u32(k, t.bk);
  uint32_t split = 1;
  const uint32_t sms = std::max<uint32_t>(1, target.sm_count);
  const uint64_t want = uint64_t(ctas_per_sm * sms);
  if (tiles < want && (k * t.elem_bytes >= min_split_bytes || tiles * 8 < sms)) {
    // About `ctas_per_sm` CTAs per SM, each slice at least min_slice_bytes of K, at most 8
    // slices (fitted to H100 and H200 timings of ResNet-50 at batch 1 and 8, FP16 and INT8:
    // tests/kernels/cuda/test_conv*.cc GpuConv*Bench).
    split = uint32_t((want + tiles / 2) / tiles);
    const uint32_t min_slice = ceil_div_u32(min_slice_bytes / t.elem_bytes, t.bk);
    split = std::max<uint32_t>(1, std::min<uint32_t>({split, kt / min_slice, 8}));
    const uint32_t per = ceil_div_u32(kt, split);
    split = ceil_div_u32(kt, per);  // no empty slices
  }
  out->grid[0] = ceil_div_u32(m, t.bm);
  out->grid[1] = ceil_div_u32(n, t.bn);
  out->grid[2] = split;
  out->block[0] = out->variant->block_threads;
  out->block[1] = out->block[2] = 1;
  out->shared_bytes = out->variant->shared_bytes;
  out->split_k = split;
  out->workspace_bytes = split > 1 ? tiles * (uint64_t(split) * t.bm * t.bn * 4 + 4) : 0;
  return true;
}

// FP16: the largest tile whose CTAs still fill the SMs. The tiles with 64 K a stage (half the
// barriers and waits per mma of 32-K ones) where the target's shared memory takes them, and
// for 64x64 tiles from 256 K on (H200 layer tables of session 15, GpuConvBench with
// JETPLAN_BENCH_ALL: 64x64 ones 2-23% faster on ResNet-50's batch-8 layers, 128x128 ones 12-16%
// on ViT-B's batch-8 GEMMs; below 256 K, EfficientNet-B0's early 1x1 layers at batch 8 ran up
// to 1.4x slower in 64x64k64 tiles, whose 72 KiB allow fewer CTAs an SM than 40 KiB).
// Split-K to about one CTA an SM in slices of 512 K at least, 1.7 CTAs an SM from 2048 K on:
// ResNet-50's layers of 28 to 100 tiles ran fastest so (at batch 1: 1152 K in two slices,
// 2304 K in four; batch 8's 3x3 layers of 2304 and 4608 K in two and four), 512 K unsplit.
bool launch_tiles(const Tile& t128, const Tile& t64k, const Tile& t32, const Tile& t32k,
                  uint64_t m, uint64_t n, uint64_t k, uint64_t kvol, const TargetInfo& target,
                  LaunchChoice* out, std::string* why) {
  const uint64_t k_bytes = 2 * k;
  const uint32_t sms = std::max<uint32_t>(1, target.sm_count);
  const uint64_t kt = ceil_div_u32(k_bytes, 2 * kBK);
  const auto fits = [&](const Tile& t) {
    return target.max_shared_per_block == 0 ||
           kernel_variant(t.id).shared_bytes <= target.max_shared_per_block;
  };
  const double ctas = k >= 2048 ? 1.7 : 1.0;
  const auto launch = [&](const Tile& t) {
    return launch_igemm(t, m, n, k, target, out, why, ctas, /*min_slice_bytes=*/1024);
  };
  // 128x128 tiles where N takes them and they fill two thirds of the SMs (ResNet-50's 1x1
  // layers of 98 to 104 such tiles at batch 8: 2-12% faster than in 64x64 ones), or half from
  // 2048 K on (ViT-B's MLP down-projection at batch 8: 78 tiles in 3 K slices). N of 65 to 127
  // takes them too from 256 K on: its 64-wide tiles leave as many columns empty and read the
  // long A twice (ConvNeXt-T's MLP down-projections to 96 channels at batch 8: 16.4 us against
  // 22.3 in 64x64 tiles; EfficientNet-B0's expansion of 16 channels to 96 at batch 1 ran 2%
  // slower in 128x128 tiles, where A is short and all its tiles are edge tiles). Not
  // where they would leave more than a sixth of their rows empty (ConvNeXt-T's last stage at
  // batch 8, 392 rows: 17.7 us in 64x64 tiles against 22.0), nor with 64 K a stage at a K of
  // less than 256 that is no multiple of 64 (96: 27.9 us against 29.6 with 32 K a stage).
  const bool k32 = k < 256 && k % 64 != 0;
  const Tile& big = fits(t128) && !k32 ? t128 : kTile128;
  const uint64_t tiles128 = tiles_of(big, m, n);
  const bool rows_full = uint64_t(ceil_div_u32(m, 128)) * 128 * 5 <= m * 6;
  if (fits(big) && (n % 128 == 0 || (n > 64 && n < 128 && k >= 256)) && rows_full &&
      (tiles128 * 3 >= 2 * uint64_t(sms) || (k >= 2048 && tiles128 * 2 >= sms)))
    return launch(big);
  const Tile& t64 = k >= 256 && fits(t64k) ? t64k : kTile64;
  const uint64_t tiles64 = tiles_of(t64, m, n);
  if (tiles64 * 2 >= 5 * uint64_t(sms) || (tiles64 >= sms && kvol > 1 && kt >= 16))
    return launch(t64);
  // Long-K layers take 64x64 tiles from one tile an SM at 512 K, and down to about 0.4 of one
  // from 1024 K (H200 layer tables of session 11: 4-12% on ResNet-50's long-K layers at batch
  // 8; at 512 K with fewer tiles, as at batch 1, 32x64 tiles stay faster).
  // Where those 64-row tiles would leave more than a sixth of their rows empty (ViT-B's 197
  // tokens in 256 rows), 32-row ones with 64 K a stage (ViT-B at batch 1: the QKV GEMM 10.6 us
  // against 13.4 us in 64x64 tiles, the MLP up-projection 12.7 against 13.5).
  if (tiles64 >= sms ? k >= 512 : (k >= 1024 && tiles64 * 5 >= 2 * uint64_t(sms))) {
    if (ceil_div_u32(m, 64) * 64 * 5 > m * 6 && kt >= 8 && tiles_of(t32k, m, n) >= sms)
      return launch(t32k);
    return launch(t64);
  }
  // Otherwise many 32x64 tiles; from 512 bytes of K on, twice the K a stage halves the
  // pipeline steps of these latency-bound CTAs.
  return launch(kt >= 8 ? t32k : t32);
}

// The Hopper tiles on sm_90 targets (an extra behind the same kernels' interface: other targets
// keep the mma.sync tiles above), for GEMMs of 2^29 multiply-adds or more, M of 256 rows or
// more and N of 64 or more: 128x128 tiles where they alone fill the SMs, else 64x128 ones
// split along K to about one CTA an SM in slices of 128 K at least. H100, GpuConvBench over
// ResNet-50, ViT-B/16 and ConvNeXt-T layers at batch 1 and 8 (tests/perf/RESULTS.md, session
// 30): below that size the mma.sync tiles were as fast on most layers and up to 2x faster on
// the smallest; above it the Hopper tiles took 0.56-0.95x their time. ViT-B's MLP
// down-projection at batch 8 (78 tiles of 128x128, 3072 K) was 11% faster in 128x128 tiles
// split 3 ways alone, but slower as a step of the plan (its 15 MB of partial tiles).
bool launch_hopper_tiles(uint64_t m, uint64_t n, uint64_t k, const TargetInfo& target,
                         LaunchChoice* out, std::string* why) {
  if (target.sm_arch != 90 || !target.arch_kernels || n < 64 || m < 256 ||
      m * n * k < (uint64_t(1) << 29))
    return false;
  const uint32_t sms = std::max<uint32_t>(1, target.sm_count);
  const Tile& t = tiles_of(kTileWg128, m, n) >= sms ? kTileWg128 : kTileWg64;
  return launch_igemm(t, m, n, k, target, out, why, 1, /*min_slice_bytes=*/256);
}

// The stem kernels' tiles (kConvStemRows outputs of one output row each) and N tile.
uint64_t stem_tiles(const ConvParams& p) {
  const bool r1 = p.spatial_rank == 1;
  const uint64_t oh = r1 ? 1 : uint64_t(p.out_size[0]), ow = uint64_t(p.out_size[r1 ? 0 : 1]);
  return uint64_t(p.batch) * oh * ((ow + kConvStemRows - 1) / kConvStemRows);
}
int stem_bn(const ConvParams& p) { return p.out_channels <= 32 ? 32 : 64; }
// As many CTAs as the SMs hold by shared memory (1 KiB of it reserved a CTA) and registers
// (conv.cu: 6 CTAs an SM of the 32-channel kernel, 3 of the 64-channel one).
uint64_t stem_ctas(const ConvParams& p, const TargetInfo& target) {
  const int bn = stem_bn(p);
  const uint64_t per_sm = std::clamp<uint64_t>(
      target.shared_per_sm / (conv_stem_layout(p, bn).bytes + 1024), 1, bn == 32 ? 6 : 3);
  return per_sm * std::max<uint32_t>(1, target.sm_count);
}

}  // namespace

bool launch_conv_stem(const ConvParams& p, const TargetInfo& target, LaunchChoice* out) {
  if (!conv_stem_fits(p)) return false;
  const int bn = stem_bn(p);
  const ConvStemLayout l = conv_stem_layout(p, bn);
  if (l.bytes > std::max<uint32_t>(48 * 1024, target.max_shared_per_block)) return false;
  out->variant = &kernel_variant(bn == 32 ? VariantId::jp_conv_stem_n32_f16
                                          : VariantId::jp_conv_stem_n64_f16);
  out->grid[0] = uint32_t(std::min(stem_tiles(p), stem_ctas(p, target)));
  out->grid[1] = ceil_div_u32(uint64_t(p.out_channels), uint64_t(bn));
  out->grid[2] = 1;
  out->block[0] = 128;
  out->block[1] = out->block[2] = 1;
  out->shared_bytes = l.bytes;
  out->split_k = 1;
  out->workspace_bytes = 0;
  return true;
}

bool launch_conv_dw_tiled(const ConvParams& p, const TargetInfo& target, LaunchChoice* out) {
  if (!conv_dw_tiled_fits(p)) return false;
  const bool i8 = p.int8.enabled, y8 = i8 && p.int8.y_dtype == DType::kInt8;
  const int k = p.kernel[0] == 3 ? 0 : p.kernel[0] == 5 ? 1 : 2;
  constexpr VariantId kIds[3][3] = {
      {VariantId::jp_conv_dw3_f16, VariantId::jp_conv_dw5_f16, VariantId::jp_conv_dw7_f16},
      {VariantId::jp_conv_dw3_i8, VariantId::jp_conv_dw5_i8, VariantId::jp_conv_dw7_i8},
      {VariantId::jp_conv_dw3_i8_f16out, VariantId::jp_conv_dw5_i8_f16out,
       VariantId::jp_conv_dw7_i8_f16out}};
  out->variant = &kernel_variant(kIds[!i8 ? 0 : y8 ? 1 : 2][k]);
  const uint64_t pixels = uint64_t(p.batch) * uint64_t(p.out_size[0]) * uint64_t(p.out_size[1]);
  // 3x3 INT8 with 384 threads (8 channels each) an SM or more: the kernels that hold one kernel
  // row of x at a time. H200, MobileNetV2's layers into Int8 (GpuConvInt8Bench.
  // DISABLED_MobileNetV2Depthwise): 0.76-0.88x the time at batch 8 from 56k threads on, equal
  // near the bound, 1.03-1.07x on the smaller layers below it. Into Float16 (EfficientNet-B0's
  // layers, whose outputs feed the squeeze-excitation pool): GpuConvInt8Bench.
  // DISABLED_EfficientNetB0Depthwise, tests/perf/RESULTS.md session 21.
  if (k == 0 && i8 &&
      pixels * (uint64_t(p.in_channels) / 8) >= 384ull * std::max<uint32_t>(1, target.sm_count))
    out->variant = &kernel_variant(y8 ? VariantId::jp_conv_dw3_1row_i8
                                      : VariantId::jp_conv_dw3_1row_i8_f16out);
  // Blocks of about 128 threads: up to 32 channel groups (16 for 7x7), spread evenly over the
  // blocks of a pixel, by as many pixels as make up the rest.
  const uint64_t groups = uint64_t(p.in_channels) / 8;
  const uint32_t max_bx = k == 2 ? 16 : 32;  // at most 25 KB of weights in shared memory
  const uint32_t bx = ceil_div_u32(groups, ceil_div_u32(groups, max_bx));
  const uint32_t by = std::max<uint32_t>(1, 128 / bx);
  out->block[0] = bx;
  out->block[1] = by;
  out->block[2] = 1;
  // The blocks stride over the pixels: as many as the SMs hold at once (by registers: 6 an SM
  // of the 3x3 kernels, 4 of the others; sm_90), so each stages its weights once.
  out->grid[1] = ceil_div_u32(groups, bx);
  const uint64_t resident = uint64_t(std::max<uint32_t>(1, target.sm_count)) * (k == 0 ? 6 : 4);
  out->grid[0] = std::max<uint32_t>(
      1, std::min<uint64_t>(ceil_div_u32(pixels, by), ceil_div_u32(resident, out->grid[1])));
  out->grid[2] = 1;
  out->shared_bytes = uint32_t(p.kernel[0] * p.kernel[1]) * 8 * bx * 4;  // FP32 / int32 weights
  out->split_k = 1;
  out->workspace_bytes = 0;
  return true;
}

namespace {

// INT8 convs split K from 2048 bytes of K on (in slices of 512), or where their tiles leave 7
// of 8 SMs idle: below it one slice was faster than two on every ResNet-50 layer of 1024 and
// 1152 K at batch 1, of 28 to 64 tiles (H200, session 26's split curves: 4.95 against 5.23 us
// at 1024 K, 5.88 against 6.04 at 1152; the plan 9% faster), where 2304 and 4608 K ran fastest
// in four to eight. With the floor alone EfficientNet-B0's plan was 1.3% slower: its 1152-K
// project convs of 6 and 10 tiles, which the exception splits as before (not timed yet). FP16's
// rule (slices of 1024 bytes) starts splitting at the same bytes.
constexpr uint64_t kInt8MinSplitBytes = 2048;

bool select_conv_int8(const StepDesc& step, const ConvParams& p, const TargetInfo& target,
                      LaunchChoice* out, std::string* why) {
  const DType y = step.num_outputs > 0 ? step.output_dtypes[0] : DType::kInt8;
  if (step.num_inputs < 3 || step.input_dtypes[0] != DType::kInt8 ||
      step.input_dtypes[1] != DType::kInt8 ||
      (y != DType::kInt8 && y != DType::kFloat16)) {
    *why = "an INT8 conv takes Int8 x and w and writes Int8 or Float16";
    return false;
  }
  if (p.channels_last && p.spatial_rank == 2 && p.groups == p.in_channels &&
      p.groups == p.out_channels) {  // depthwise: the tiled kernel, or a thread per pixel and
                                     // 1 or 4 channels
    // The tiled kernel (8 channels a thread) from 128 threads an SM on, or for 7x7 windows, as
    // FP16's rule (select_conv); below, one channel a thread has more threads to hide its loads
    // behind (EfficientNet-B0 at batch 1, H100, session 25: its 5x5 layers into Float16 took
    // 86.2 us tiled against FP16's 70.3 us one channel a thread; one channel a thread, INT8:
    // 240 channels 28x28 stride 2 4.4 us, 1152 at 7x7 4.6 us, against 7.8 and 7.9 at four).
    const uint64_t pixels = uint64_t(p.batch) * uint64_t(p.out_size[0]) * uint64_t(p.out_size[1]);
    const uint64_t sms = std::max<uint32_t>(1, target.sm_count);
    const bool large = pixels * uint64_t(p.in_channels) / 8 >= 128 * sms;
    if ((large || p.kernel[0] == 7) && launch_conv_dw_tiled(p, target, out)) return true;
    out->variant = &kernel_variant(y == DType::kInt8 ? VariantId::jp_conv_depthwise_i8
                                                     : VariantId::jp_conv_depthwise_i8_f16out);
    // Large layers the tiled kernel does not take: four channels a thread (four-byte loads and
    // stores; a launch of at most pixels * C / 4 threads tells the kernel so) where C allows
    // and that gives every SM 192 threads. H200 timings of MobileNetV2's depthwise layers:
    // tests/kernels/cuda/test_conv_int8_bench.cc GpuConvInt8Bench.
    const uint64_t work4 = pixels * uint64_t(p.in_channels / 4);
    const uint64_t vec = large && p.in_channels % 4 == 0 && work4 >= 192 * sms ? 4 : 1;
    launch_1d(pixels * uint64_t(p.in_channels) / vec, 256,
              std::max<uint32_t>(1, target.sm_count) * 16, out);
    return true;
  }
  const bool grouped = conv_grouped_igemm_fits(p, 8);
  if (!p.channels_last || (p.groups != 1 && !grouped) || p.spatial_rank != 2 ||
      p.in_channels % 8 != 0) {
    *why = "the CUDA INT8 conv kernels take 2-D NHWC convs, depthwise, with groups 1 and a "
           "multiple of 8 input channels, or grouped with a multiple of 8 channels a group";
    return false;
  }
  const uint64_t m = uint64_t(p.batch) * uint64_t(p.out_size[0]) * uint64_t(p.out_size[1]);
  const uint64_t n = uint64_t(p.out_channels);
  const uint64_t kvol = uint64_t(p.kernel[0]) * uint64_t(p.kernel[1]);
  const uint64_t k = kvol * uint64_t(p.in_channels);
  if (m >= (1ull << 31) || n >= (1ull << 31) || k >= (1ull << 31) - 128) {
    *why = "the INT8 conv is too large for the kernels' 32-bit GEMM sizes";
    return false;
  }
  if (grouped) {  // the grouped form's one tile (split-K as any)
    const Tile& g = y == DType::kInt8 ? kTileGI8 : kTileGI8F16;
    return launch_igemm(g, m, n, grouped_k(p, g, kvol), target, out, why);
  }
  const TilesI8& t = y == DType::kInt8 ? kTilesI8 : kTilesI8F16;
  // Cin a multiple of 8, not 16: the tiles that load 8-byte halves (split-K as any), 64 rows
  // where those tiles fill the SMs twice, as below (H100, GpuConvInt8Bench.DISABLED_Stem and
  // DISABLED_Cin24And40: the RGB stem at batch 8 33.7 against 43.4 us, the 24-channel expansion
  // 10.8 against 12.0; at batch 1, with fewer tiles, 32 rows stay faster: 7.5 against 8.2).
  // The same tiles for short K: 64 input channels or fewer, or 1x1 into 64 channels or fewer
  // from 256 K or less (H100, random operands, session 31: ResNet-50's 56x56 layers at batch 8
  // 4.20 against 5.69 us 64->64, 10.46 against 12.49 64->64 3x3, 11.55 against 13.93 64->256,
  // 6.56 against 8.52 256->64; at batch 1 2.80 against 3.34, 3.39 against 4.22 and 3.76, the
  // 3x3 a tie; with more K they lose: 256->128 13.84 against 10.47).
  if (p.in_channels % 16 != 0 || p.in_channels <= 64 || (k <= 256 && n <= 64)) {
    const Tile& t64 = y == DType::kInt8 ? kTileC8x64 : kTileC8x64F16;
    const bool rows64 = tiles_of(t64, m, n) >= 2 * uint64_t(std::max<uint32_t>(1, target.sm_count));
    return launch_igemm(rows64 ? t64 : y == DType::kInt8 ? kTileC8 : kTileC8F16, m, n, k, target,
                        out, why, 3, 512, kInt8MinSplitBytes);
  }
  // 128x128 where N allows and its tiles alone fill the SMs; 64x64 where they fill them twice;
  // else 32x64 (with split-K when even those are few). The long-K form (128 K a stage) from 256
  // K on. Fitted to H200 layer tables of ResNet-50 at batch 1 and 8 (GpuConvInt8Bench, every
  // variant timed; tests/perf/int8_layers_h200_*.txt); shapes outside them follow the same
  // occupancy reasoning.
  // The INT8 Hopper tiles (jp_conv_igemm_wg*_i8[_f16out]) are not selected: bit-exact
  // against the CPU twin (GpuConvInt8.EveryVariantMatchesCpuTwinBitForBit, H100, session 31),
  // 64x128 ones faster alone on some of ResNet-50's batch-8 layers (128->128 3x3 8.8 against
  // 10.3 us, 512->256 6.5 against 9.0) and slower on others (256->256 3x3 14x14 13.6 against
  // 11.8, 1024->512 12.7 against 9.1), but with the FP16 rule's bound (2^29 multiply-adds) the
  // whole batch-8 INT8 plan took 0.809 ms against 0.738 (tests/perf/RESULTS.md, session 31).
  const uint64_t sms = std::max<uint32_t>(1, target.sm_count);
  const KernelVariant& big = kernel_variant(t.t128.id);
  const bool big_fits = target.max_shared_per_block == 0 ||
                        big.shared_bytes <= target.max_shared_per_block;
  if (big_fits && n % 128 == 0 && k >= 128 && tiles_of(t.t128, m, n) >= sms)
    return launch_igemm(t.t128, m, n, k, target, out, why, 3, 512, kInt8MinSplitBytes);
  const bool long_k = k >= 256;
  const uint64_t tiles64 = tiles_of(t.t64, m, n);
  if (tiles64 >= 2 * sms)
    return launch_igemm(long_k ? t.t64k : t.t64, m, n, k, target, out, why, 3, 512,
                        kInt8MinSplitBytes);
  // From 512 K on, 64x64 tiles with 128 K a stage beat twice as many 32x64 ones down to about
  // 0.4 of a tile an SM, split over K only below one an SM (H200 layer tables of session 11,
  // after the igemm's index math went: 8-18% faster on ResNet-50's batch-8 layers with 56 to 224
  // such tiles; batch 1's long-K layers have fewer and keep the 32x64 rule).
  if (k >= 512 && tiles64 * 5 >= 2 * sms)
    return launch_igemm(t.t64k, m, n, k, target, out, why, /*ctas_per_sm=*/1, 512,
                        kInt8MinSplitBytes);
  return launch_igemm(long_k ? t.t32k : t.t32, m, n, k, target, out, why, 3, 512,
                      kInt8MinSplitBytes);
}

}  // namespace

bool launch_conv_igemm_f32(const ConvParams& p, LaunchChoice* out) {
  uint64_t rows = uint64_t(p.batch);
  for (int d = 0; d < p.spatial_rank; ++d) rows *= uint64_t(p.out_size[d]);
  const uint64_t col_tiles = (uint64_t(p.out_channels) + 63) / 64, row_tiles = (rows + 63) / 64;
  if (p.groups != 1 || p.int8.enabled || !p.channels_last || col_tiles > 65535 ||
      row_tiles >= (1ull << 31))
    return false;
  out->variant = &kernel_variant(VariantId::jp_conv_igemm_f32);
  out->grid[0] = uint32_t(std::max<uint64_t>(1, row_tiles));
  out->grid[1] = uint32_t(std::max<uint64_t>(1, col_tiles));
  out->grid[2] = 1;
  out->block[0] = 256;
  out->block[1] = out->block[2] = 1;
  out->shared_bytes = 0;
  out->split_k = 1;
  out->workspace_bytes = 0;
  return true;
}

bool select_conv(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string* why) {
  const auto& p = *static_cast<const ConvParams*>(step.params);
  // INT8 steps by their params (the converter describes a step by its first float tensor).
  if (p.int8.enabled) return select_conv_int8(step, p, target, out, why);
  if (step.dtype != DType::kFloat16 && step.dtype != DType::kFloat32) {
    *why = "the CUDA conv kernels take Float16, Float32 or Int8 only";
    return false;
  }
  if (!p.channels_last) {
    *why = "the CUDA conv kernels take channels_last (NHWC) tensors only";
    return false;
  }
  uint64_t out_elems = uint64_t(p.batch) * uint64_t(p.out_channels);
  for (int d = 0; d < p.spatial_rank; ++d) out_elems *= uint64_t(p.out_size[d]);
  // Float32 (GPU plans of --precision fp32): FP32 sums of FP32 products, as the CPU reference
  // computes them: the FP32 implicit GEMM for groups 1 (64x64 tiles), the direct kernel for the
  // rest (grouped and depthwise convs, and grids past its limits).
  if (step.dtype == DType::kFloat32) {
    if (launch_conv_igemm_f32(p, out)) return true;
    out->variant = &kernel_variant(VariantId::jp_conv_direct_f32);
    launch_1d(out_elems, 256, std::max<uint32_t>(1, target.sm_count) * 16, out);
    return true;
  }
  uint64_t out_vol = 1;
  for (int d = 0; d < p.spatial_rank; ++d) out_vol *= uint64_t(p.out_size[d]);
  const uint64_t m = uint64_t(p.batch) * out_vol;
  const uint64_t n = uint64_t(p.out_channels);
  uint64_t kvol = 1;
  for (int d = 0; d < p.spatial_rank; ++d) kvol *= uint64_t(p.kernel[d]);
  const uint64_t k = kvol * uint64_t(p.in_channels / std::max<int64_t>(1, p.groups));
  // The igemm kernels count GEMM rows, columns and K in 32-bit ints (offsets are 64-bit).
  const bool fits32 = m < (1ull << 31) && n < (1ull << 31) && k < (1ull << 31) - kBK;

  // 1-D convs take the 2-D kernels as convs of height 1 (geo2 in conv_igemm.cuh maps rank 1
  // to H = 1); 3-D ones the direct kernel.
  const bool planar = p.spatial_rank == 1 || p.spatial_rank == 2;
  if (p.groups == 1 && planar && fits32) {
    // Few input channels (RGB stems): the stem kernels, which read x's rows whole, where their
    // tiles are at least the CTAs the SMs hold. With fewer, each CTA loads all of K's weights
    // for one tile, and the any-C tile's pipelined loads were faster: ResNet-50's and
    // MobileNetV2's stems at batch 1, 13.2 against 12.2 us and 6.0 against 5.5 (224 tiles);
    // at batch 8 the stem kernels took 41.1 against 49.6 us (ResNet-50) and 14.7 us, faster
    // than every igemm tile (MobileNetV2), and the YOLO-style 6x6 stem at 640x640 0.18 against
    // 0.43 ms in the plan's step profile (H100, session 32: tests/perf/RESULTS.md).
    if (p.in_channels <= 4 && stem_tiles(p) >= stem_ctas(p, target) &&
        launch_conv_stem(p, target, out))
      return true;
    if (p.in_channels % 8 != 0) return launch_igemm(kTileAnyC, m, n, k, target, out, why);
    if (launch_hopper_tiles(m, n, k, target, out, why)) return true;
    return launch_tiles(kTile128K64, kTile64K64, kTile32, kTile32K64, m, n, k, kvol, target,
                        out, why);
  }
  // Grouped convs of 4k channels a group: the tensor-core tiles of the grouped form, 64x64 where
  // they fill the SMs 2.5 times over, else 32x64 (with split-K where even those are few).
  if (conv_grouped_igemm_fits(p, 4)) {
    const Tile& t = tiles_of(kTileG64, m, n) * 2 >= 5ull * std::max<uint32_t>(1, target.sm_count)
                        ? kTileG64
                        : kTileG32;
    return launch_igemm(t, m, n, grouped_k(p, t, kvol), target, out, why);
  }
  const uint64_t total = m * n;
  if (planar && p.groups == p.in_channels && p.groups == p.out_channels) {
    // The tiled kernel (8 channels a thread) from 128 threads an SM on; below, the one of a
    // channel a thread has more threads to hide its loads behind and is up to 1.3x faster
    // (MobileNetV2's and EfficientNet-B0's late 3x3 and 5x5 layers at batch 1, H200:
    // GpuConvInt8Bench). 7x7 windows always take the tiled kernel: 49 taps of scalar loads cost
    // the other 1.6-1.7x its time (ConvNeXt-T's 14x14 and 7x7 layers at batch 1, H200:
    // GpuConvBench.DISABLED_DepthwiseVariants).
    const uint64_t threads = total / 8;
    if ((threads >= 128ull * std::max<uint32_t>(1, target.sm_count) || p.kernel[0] == 7) &&
        launch_conv_dw_tiled(p, target, out))
      return true;
    out->variant = &kernel_variant(VariantId::jp_conv_depthwise_f16);
  } else {
    out->variant = &kernel_variant(VariantId::jp_conv_direct_f16);
  }
  launch_1d(total, 256, std::max<uint32_t>(1, target.sm_count) * 16, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
