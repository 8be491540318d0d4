// CPU reference kernels of the "nn" op batch (structs in kernels/params_nn.h). Same rules as
// cpu_kernels.h: FP32 data, no allocation, no failure (the parameters were validated at plan
// load), deterministic (fixed reduction order, accumulation in double), pointers borrowed for the
// call, optional pointers may be null when the matching has_* flag is false, outputs never alias
// inputs. A kernel that needs scratch takes a caller-owned workspace of *_workspace_bytes(p)
// bytes, 8-byte aligned, whose contents are undefined before and after the call (the memory plan
// may reuse it as soon as the step is done).
#pragma once

#include <cstdint>

#include "kernels/params_nn.h"

namespace jetplan::kernels::cpu {

// resize.cc
void resize(const ResizeParams& p, const float* x, float* y);

// reduce.cc
void reduce(const ReduceParams& p, const float* x, float* y);
// Float64 (CPU backend only): the same in double throughout.
void reduce(const ReduceParams& p, const double* x, double* y);

// arg_topk.cc. y, values and indices as the structs say; indices are int64.
void arg_reduce(const ArgReduceParams& p, const float* x, int64_t* y);
int64_t topk_workspace_bytes(const TopKParams& p);
void topk(const TopKParams& p, const float* x, void* workspace, float* values, int64_t* indices);

// norms.cc. scale is required; bias too, except for layer_norm without has_bias. mean and
// inv_std_dev of layer_norm are optional outputs (null: not written).
void instance_norm(const InstanceNormParams& p, const float* x, const float* scale,
                   const float* bias, float* y);
void layer_norm(const LayerNormParams& p, const float* x, const float* scale, const float* bias,
                float* y, float* mean, float* inv_std_dev);
void group_norm(const GroupNormParams& p, const float* x, const float* scale, const float* bias,
                float* y);
void lrn(const LrnParams& p, const float* x, float* y);

// conv_transpose.cc
void conv_transpose(const ConvTransposeParams& p, const float* x, const float* w,
                    const float* bias, const float* residual, float* y);

// nms.cc. selected holds nms_capacity(p) rows of 3 int64. Returns the number of selected rows
// and, where count is not null, writes it to *count too: that word is how a device twin, which
// returns nothing to the host, hands the count on (see the runtime's dynamic-output note).
int64_t nms_workspace_bytes(const NmsParams& p);
int64_t non_max_suppression(const NmsParams& p, const float* boxes, const float* scores,
                            void* workspace, int64_t* selected, int64_t* count);

}  // namespace jetplan::kernels::cpu
