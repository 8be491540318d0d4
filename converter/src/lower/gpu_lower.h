// GPU plans (targets whose backend is CUDA): the passes that turn the draft lower() made, which
// is shaped for the CPU reference kernels, into one the CUDA backend runs (kernels/cuda/launch.h).
//
//   lower -> gpu_layout -> gpu_precision -> remove_unused_tensors -> assign_memory
//         -> gpu_select (kernel + launch per step; places memory again if a workspace changed)
#pragma once

#include "converter/src/lower/lower.h"
#include "converter/src/select/targets.h"

namespace jetplan::converter {

// NHWC around Conv (1 to 3 spatial dims: [N, L, C], [N, H, W, C], [N, D, H, W, C]), around
// ConvTranspose in the upsampling form (2-D, kernel == stride, no pads, groups 1, constant
// weights: the U-Net's and FPN's), and Pool and BatchNorm over 4-D tensors: their activations get
// the channels-last physical shape and Layout NHWC, conv weights become [Cout, *kernel, Cin /
// groups] (permuted at conversion when constant, by a Transpose step when computed at run time
// or a graph input; a conv's constant x is permuted at conversion too), upsampling weights [KH,
// KW, Cout, Cin]. NHWC propagates through
// Activation, through Binary and Pointwise (other operand the same shape, an [N, C, 1, 1]
// tensor or a per-channel / scalar constant, which is reshaped to [1, 1, 1, C]; any of the
// conv ranks), through Concat along channels (4-D, axis 3), through a 4-D Resize that keeps N
// and C (its per-dim lists permuted) and into Copy where every spatial dim is 1 (the bytes are
// those of NCHW then).
// Everywhere else tensors stay NCHW; a Transpose step goes where a producer and a consumer
// disagree (one per tensor and direction, before its first such consumer). Bindings keep
// their NCHW shape. Run on a float32 draft, before gpu_precision. float32: the draft of a
// Float32 plan (--precision fp32), whose ConvTransposes stay NCHW (the channels_last upsampling
// kernels are FP16 only).
void gpu_layout(PlanDraft* draft, bool float32 = false);

// Float16 inside the plan: every float32 arena and weight tensor becomes float16 (weights
// rounded to nearest even; finite weights past the half range saturate to +-65504). Float32
// bindings keep their dtype and shape: a Cast to float16 follows each float input, a Cast back
// ends the plan for each float output, except where a step of a family that can
// (writes_output_cast) alone writes a float output no step reads: that step writes it in
// float32 itself (the output-cast epilogue; gpu_select falls back to the Cast where no kernel
// does). A model's Cast between float32 and float16, float16 to float16 now, becomes a Copy.
// The scale of QuantizeLinear and DequantizeLinear stays float32 (a scale computed in the plan
// is cast back to it), and a float32 input that a QuantizeLinear reads is quantized as given.
void gpu_precision(PlanDraft* draft);

// A resolved step of `family` from tensor `in` to tensor `out` (the passes' Casts, Transposes).
DraftStep make_step(const std::string& name, fb::OpFamily family, uint32_t in, uint32_t out);

// The families whose steps may read float16 and write a float32 graph output themselves: Conv,
// Gemm and Transpose (a conv's NHWC output reaches its NCHW binding through one).
bool writes_output_cast(fb::OpFamily family);

// The fallback: step `step` writes a float16 twin of its float32 output and a Cast after the
// last step fills the output. Tensors are added: memory must be placed again.
void gpu_output_cast_fallback(PlanDraft* draft, size_t step);

// Concats written in place by the steps that compute their inputs, where those can write their
// part of the Concat's output themselves: a Conv or ConvTranspose step (Concat along NHWC
// channels; ConvParams.y_channel_offset, ConvTransposeParams.y_channel_offset: a U-Net's
// upsampling; a residual it adds stays a dense tensor of its own), a Resize that
// does not resize the Concat's axis (ResizeParams.y_axis, y_axis_offset: the upsampled maps of
// FPN/PAN necks and U-Nets), or a Transpose, its result the input or reshaped into it by one
// Copy (TransposeParams.y_block, y_block_stride, y_offset: a YOLO head's permuted, flattened
// outputs of each scale). Each tensor on the way is read by the next step alone; the Concat step
// and those Copies go. Where some inputs are placed so, the others (read by another step too, as
// a backbone's feature map joining a neck is) are copied into their blocks of the output by
// identity Transposes (y_block) where the Concat was, as the Concat would have. Run after
// gpu_layout.
void concat_in_place(PlanDraft* draft);

// A Cast from float16 to float32 whose input only Transposes write (one, or several in place)
// and only it reads: the Transposes write its output themselves, converting as they move (the
// h2f kernels), and the Cast goes. A GPU plan's float32 output filled by a head's Transposes.
void transposes_write_output_casts(PlanDraft* draft);

// A model's Transpose of a reshape (Copy) that splits one axis of a tensor gpu_layout turned
// back to channels first: the Transpose reads the NHWC tensor itself with that axis split (the
// Copy, a view once alias_views runs), the two permutations composed, and the Transpose into
// channels first goes (each tensor on the way read by the next step alone). YOLO-style heads:
// [N, H, W, 255] -> (to NCHW) -> [N, 3, 85, H, W] -> perm (0, 1, 3, 4, 2) becomes
// [N, H, W, 3, 85] -> perm (0, 3, 1, 2, 4): one pass over the tensor instead of two.
void compose_layout_transposes(PlanDraft* draft);

// The three above in order (gpu_moves.cc): compose_layout_transposes, concat_in_place,
// transposes_write_output_casts. Run after gpu_precision (INT8 plans: after int8_precision).
void place_gpu_moves(PlanDraft* draft);

// The Transpose permutation into channels last (into_nhwc) or back of a rank-r tensor.
std::vector<int32_t> channels_last_perm(size_t r, bool into_nhwc);

// Kernel selection (gpu_select.cc): serializes the placed draft, loads it with the runtime's
// loader to get every step's resolved kernel parameters, and asks kernels::cuda::select_kernel
// for each step's variant and launch; writes DraftStep::kernel/launch and the workspace. Steps
// without a CUDA kernel are all reported in one ConvertError. Calls assign_memory again when
// a workspace changed.
void gpu_select(PlanDraft* draft, const Target& target, const PlanMetadata& metadata);

// Loads a serialized GPU plan for `target` with the runtime's loader, without a device: its
// verifier, each step's prepare, and each step's kernel against the step's dtypes and launch
// (what binding it on a device checks short of the device itself). ConvertError with the
// runtime's message: the converter never writes a GPU plan its runtime refuses.
// Also what binding checks against the device, against the target's description: its SM
// architecture and shared memory per block.
void check_gpu_plan(const std::vector<uint8_t>& plan, const Target& target);

// The only way convert_onnx turns a GPU draft (kernels selected) into bytes: serialize_plan,
// then check_gpu_plan; ConvertError and no bytes for a plan the runtime would refuse.
std::vector<uint8_t> write_gpu_plan(const PlanDraft& draft, const Target& target,
                                    const PlanMetadata& metadata);

}  // namespace jetplan::converter
