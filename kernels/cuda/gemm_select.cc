// Selection for the Gemm family (kernels/cuda/gemm.cu): Float32 storage takes jp_gemm_f32;
// FP16 storage:
//   M <= 8: the gemv variants (B [N, K]: 4 warps per column, 2 columns per CTA; B [K, N]: 64
//       columns per CTA);
//       a 64-row tensor-core tile would idle 7/8 of its rows and give ceil(N / 64) CTAs.
//   otherwise: the mma variant of the step's (trans_a, trans_b), with 64-row tiles when those
//       give at least 4 CTAs per SM, else 32-row tiles (ViT's 197-row GEMMs on a big GPU: twice
//       the CTAs, and 224 instead of 256 padded rows). It takes its 16-byte cp.async
//       path by itself when the contiguous dims and batch strides are multiples of 8 (and the
//       pointers aligned, which the arena guarantees), else it fills tiles element by element.
//   batch 1 with 32-row tiles that still leave SMs idle and at least 8 K tiles: serial split-K
//       (grid.z = slices, up to 8, each at least 4 K tiles), partial tiles in the workspace.
// Batches go to grid.z (capped at 65535; the kernels loop over the rest).
// A Float32 output over FP16 inputs (the output-cast epilogue: a graph output written by its
// producer) takes the _f32out twin of the variant; those exist for trans_a false and without
// split-K (plain 32-row tiles instead), else selection fails and the converter keeps its Cast.
#include <algorithm>
#include <string>

#include "kernels/cuda/select.h"
#include "kernels/gemm.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int64_t kTileN = 64;    // gemm_mma.cuh kBN; rows per tile: 64 or 32
constexpr int64_t kGemvMaxM = 8;  // gemm.cu
constexpr uint32_t kMaxGridYZ = 65535;

}  // namespace

bool select_gemm(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string* why) {
  // step.dtype is the output's; the inputs' when the step lists them.
  const DType in_dtype = step.num_inputs > 0 ? step.input_dtypes[0] : step.dtype;
  const DType out_dtype = step.num_outputs > 0 ? step.output_dtypes[0] : step.dtype;
  const auto* p = static_cast<const GemmParams*>(step.params);
  if (p == nullptr || p->batch < 0 || p->M < 0 || p->N < 0 || p->K < 0) {
    *why = "Gemm with negative extents";
    return false;
  }
  // Float32 storage (Float32 GPU plans): the one FP32 kernel, 64x64 tiles.
  if (in_dtype == DType::kFloat32 && out_dtype == DType::kFloat32) {
    const uint32_t row_tiles = ceil_div_u32(p->M, 64);
    if (row_tiles > kMaxGridYZ) {
      *why = "Float32 Gemm with more than " + std::to_string(kMaxGridYZ * 64) + " rows";
      return false;
    }
    out->variant = &kernel_variant(VariantId::jp_gemm_f32);
    out->grid[0] = std::max<uint32_t>(1, ceil_div_u32(p->N, 64));
    out->grid[1] = std::max<uint32_t>(1, row_tiles);
    out->grid[2] = std::max<uint32_t>(1, std::min<uint32_t>(ceil_div_u32(p->batch, 1), kMaxGridYZ));
    out->block[0] = 256;
    out->block[1] = out->block[2] = 1;
    return true;
  }
  if (in_dtype != DType::kFloat16 ||
      (out_dtype != DType::kFloat16 && out_dtype != DType::kFloat32)) {
    *why =
        "the CUDA Gemm kernels take Float16 storage (FP32 accumulation) with a Float16 or "
        "Float32 output, or Float32 storage and output";
    return false;
  }
  const bool f32_out = out_dtype == DType::kFloat32;
  if (f32_out && p->trans_a) {
    *why = "no Float32-output CUDA Gemm variant for a transposed A";
    return false;
  }
  // The FP16-output variant, or its Float32-output twin.
  const auto named = [f32_out](VariantId f16_out, VariantId f32_out_id) {
    return &kernel_variant(f32_out ? f32_out_id : f16_out);
  };
  const uint32_t batches =
      std::max<uint32_t>(1, std::min<uint32_t>(ceil_div_u32(p->batch, 1), kMaxGridYZ));
  out->grid[2] = batches;
  out->block[1] = out->block[2] = 1;
  if (p->M <= kGemvMaxM) {
    if (p->trans_b) {
      out->variant = named(VariantId::jp_gemm_f16_gemv_bt, VariantId::jp_gemm_f16_gemv_bt_f32out);
      out->grid[0] = std::max<uint32_t>(1, ceil_div_u32(p->N, 2));  // gemv_bt's kGemvBtCols
    } else {
      out->variant = named(VariantId::jp_gemm_f16_gemv_bn, VariantId::jp_gemm_f16_gemv_bn_f32out);
      out->grid[0] = std::max<uint32_t>(1, ceil_div_u32(p->N, 64));
    }
    out->grid[1] = 1;
    out->block[0] = 256;
    return true;
  }
  const uint64_t col_tiles = ceil_div_u32(p->N, kTileN);
  const uint64_t tiles64 = col_tiles * ceil_div_u32(p->M, 64) * static_cast<uint64_t>(p->batch);
  const bool small = target.sm_count > 0 && tiles64 < 4ull * target.sm_count;
  const int64_t tile_m = small ? 32 : 64;
  const uint32_t row_tiles = ceil_div_u32(p->M, tile_m);
  if (row_tiles > kMaxGridYZ) {
    *why = "Gemm with more than " + std::to_string(kMaxGridYZ * tile_m) + " rows";
    return false;
  }
  // [small][trans_a][trans_b]; the Float32-output ones [small][trans_b] (no transposed A).
  static constexpr VariantId kMma[2][2][2] = {
      {{VariantId::jp_gemm_f16_mma64_nn, VariantId::jp_gemm_f16_mma64_nt},
       {VariantId::jp_gemm_f16_mma64_tn, VariantId::jp_gemm_f16_mma64_tt}},
      {{VariantId::jp_gemm_f16_mma32_nn, VariantId::jp_gemm_f16_mma32_nt},
       {VariantId::jp_gemm_f16_mma32_tn, VariantId::jp_gemm_f16_mma32_tt}}};
  static constexpr VariantId kMmaF32Out[2][2] = {
      {VariantId::jp_gemm_f16_mma64_nn_f32out, VariantId::jp_gemm_f16_mma64_nt_f32out},
      {VariantId::jp_gemm_f16_mma32_nn_f32out, VariantId::jp_gemm_f16_mma32_nt_f32out}};
  out->variant = named(kMma[small ? 1 : 0][p->trans_a ? 1 : 0][p->trans_b ? 1 : 0],
                       kMmaF32Out[small ? 1 : 0][p->trans_b ? 1 : 0]);
  const uint64_t tiles = col_tiles * row_tiles;
  const uint64_t ktiles = (static_cast<uint64_t>(p->K) + 31) / 32;
  if (small && !f32_out && p->batch == 1 && tiles < target.sm_count && ktiles >= 8) {
    const uint64_t splits =
        std::min<uint64_t>({8, ktiles / 4, (2ull * target.sm_count + tiles - 1) / tiles});
    static constexpr VariantId kSplit[2][2] = {
        {VariantId::jp_gemm_f16_mma32_splitk_nn, VariantId::jp_gemm_f16_mma32_splitk_nt},
        {VariantId::jp_gemm_f16_mma32_splitk_tn, VariantId::jp_gemm_f16_mma32_splitk_tt}};
    out->variant = &kernel_variant(kSplit[p->trans_a ? 1 : 0][p->trans_b ? 1 : 0]);
    out->grid[2] = static_cast<uint32_t>(splits);
    out->split_k = static_cast<uint32_t>(splits);
    // gemm_mma.cuh split_workspace_bytes: counters (256-byte aligned), then FP32 32x64 tiles.
    out->workspace_bytes = (tiles * 4 + 255) / 256 * 256 + tiles * splits * 32 * 64 * 4;
  }
  out->grid[0] = std::max<uint32_t>(1, static_cast<uint32_t>(col_tiles));
  out->grid[1] = row_tiles;
  out->block[0] = 128;
  return true;
}

}  // namespace jetplan::kernels::cuda
