// INT8 GEMMs (the Gemm family: ONNX Gemm and MatMul) run on the INT8 convolution kernels.
//
// A Gemm step y[M, N] = act(A[M, K] B + C + R) whose B is a constant matrix is a 1x1
// convolution: A's rows are pixels of K channels ([M, 1, 1, K] NHWC, the same bytes), B's
// columns the output channels' filters ([N, 1, 1, K], OHWI), C the per-channel bias. So the INT8
// implicit-GEMM kernels (mma.sync s8, the fused requantizing epilogue, kernels/cuda/
// conv_igemm.cuh) and their CPU twins serve GEMMs unchanged, scales and all, and everything the
// INT8 pass does for convs (Int8 between INT8 steps, one Quantize step in front of a Float16
// input, the error report, --int8-exclude) holds for these steps as well. FP16 GPU plans take
// the same rewrite (convert.cc), for the FP16 conv kernels' larger tiles and deeper pipelines.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "converter/src/lower/lower.h"

namespace jetplan::converter {

// GEMMs of fewer rows than this stay on the Float16 GEMM kernels (INT8 and FP16 plans alike): at a handful of rows (a
// classifier head at batch 1..8) the gemv kernels stream the weights faster than an
// implicit-GEMM tile of 32 or more rows runs them. Calibrated convs on one pixel an image at
// fewer images stay Float16 too (int8_precision.cc).
constexpr int64_t kInt8GemmMinRows = 64;

// Rewrites each Gemm step of `draft` that a 1x1 conv computes (B a constant matrix, A not
// transposed, alpha 1, C absent or one value per output column, K a multiple of 16, at least
// kInt8GemmMinRows rows; A, y and a residual row-major, of any rank: ConvNeXt's MLPs over
// [N, H, W, C] included, not NHWC-stored) and that `wanted` accepts into that Float32 Conv step,
// under the same name. wanted(step, a, y) gets the Gemm step and the indices of its A and y
// tensors. A and y keep their shapes for their other readers: the conv reads and writes NHWC views of them
// (Copy steps, which alias_views turns into views), except where every reader of a converted
// step's y is another converted step, which then reads the conv's output directly (so Int8 can
// pass between them). Returns the names of the rewritten steps.
std::vector<std::string> gemms_as_convs(
    PlanDraft* draft, const std::function<bool(const DraftStep&, uint32_t, uint32_t)>& wanted);

}  // namespace jetplan::converter
