// The INT8 conv tests' shared pieces (test_conv_int8.cc: kernels against the CPU twin;
// test_conv_int8_bench.cc: INT8 layers timed against FP16): a case, its params, every INT8
// igemm variant, a forced launch of one, the previous depthwise launches and the selection.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels::int8_conv_test {

inline constexpr uint16_t kConv = static_cast<uint16_t>(OpFamilyId::kConv);

struct Case {
  const char* name;
  int64_t batch, cin, cout, h, w, k, stride, dilation, pad;
  int64_t groups = 1;  // cin: depthwise; else grouped (the grouped igemm form)
};

inline ConvParams params_of(const Case& c) {
  return test_util::int8_conv2d(c.batch, c.cin, c.cout, c.groups, {c.h, c.w}, c.k, c.stride,
                                c.dilation, c.pad, true);
}

inline const char* const kVariants[] = {
    "jp_conv_igemm_128x128_i8",       "jp_conv_igemm_64x64_i8",
    "jp_conv_igemm_32x64_i8",         "jp_conv_igemm_32x64k128_i8",
    "jp_conv_igemm_128x128_i8_f16out", "jp_conv_igemm_64x64_i8_f16out",
    "jp_conv_igemm_32x64_i8_f16out",  "jp_conv_igemm_32x64k128_i8_f16out",
    "jp_conv_igemm_64x64k128_i8",     "jp_conv_igemm_64x64k128_i8_f16out",
    "jp_conv_igemm_32x64_c8_i8",      "jp_conv_igemm_32x64_c8_i8_f16out",
    "jp_conv_igemm_64x64_c8_i8",      "jp_conv_igemm_64x64_c8_i8_f16out",
    "jp_conv_igemm_32x64_grouped_i8", "jp_conv_igemm_32x64_grouped_i8_f16out",
    "jp_conv_igemm_wg128x128_i8",     "jp_conv_igemm_wg128x128_i8_f16out",
    "jp_conv_igemm_wg64x128_i8",      "jp_conv_igemm_wg64x128_i8_f16out"};

// The tile of a variant, from its name ("jp_conv_igemm_[wg]<BM>x<BN>...").
inline void tile_of(const std::string& name, uint32_t* bm, uint32_t* bn) {
  size_t at = name.find("igemm_") + 6;
  if (name.compare(at, 2, "wg") == 0) at += 2;
  *bm = uint32_t(std::stoul(name.substr(at)));
  *bn = uint32_t(std::stoul(name.substr(name.find('x', at) + 1)));
}

inline cuda::LaunchChoice choice_of(const char* name, const ConvParams& p, uint32_t split) {
  cuda::LaunchChoice c;
  c.variant = cuda::find_kernel_variant(name);
  uint32_t bm = 0, bn = 0;
  tile_of(name, &bm, &bn);
  const uint64_t m = uint64_t(p.batch) * p.out_size[0] * p.out_size[1];
  c.grid[0] = cuda::ceil_div_u32(m, bm);
  c.grid[1] = cuda::ceil_div_u32(uint64_t(p.out_channels), bn);
  c.grid[2] = split;
  c.block[0] = c.variant != nullptr ? c.variant->block_threads : 0;
  c.shared_bytes = c.variant != nullptr ? c.variant->shared_bytes : 0;
  c.split_k = split;
  const uint64_t tiles = uint64_t(c.grid[0]) * c.grid[1];
  c.workspace_bytes = split > 1 ? tiles * (uint64_t(split) * bm * bn * 4 + 4) : 0;
  return c;
}

// The previous depthwise INT8 kernel (jp_conv_depthwise_i8[_f16out], the selection's for the
// depthwise convs the tiled one does not take), launched as the selection launches it: four
// channels a thread where C % 4 == 0.
inline cuda::LaunchChoice depthwise_legacy(const ConvParams& p, bool y8) {
  cuda::LaunchChoice c;
  c.variant = cuda::find_kernel_variant(y8 ? "jp_conv_depthwise_i8" : "jp_conv_depthwise_i8_f16out");
  const uint64_t work = uint64_t(p.batch) * p.out_size[0] * p.out_size[1] * p.in_channels;
  cuda::launch_1d(work / (p.in_channels % 4 == 0 ? 4 : 1), 256,
                  gpu_test::device_target().sm_count * 16, &c);
  return c;
}

// A tiled 3x3 INT8 launch with the other of the two kernels of its output type:
// jp_conv_dw3_i8[_f16out] (the next kernel row loaded ahead) and jp_conv_dw3_1row_i8[_f16out]
// (a row at a time).
inline cuda::LaunchChoice other_dw3_i8(cuda::LaunchChoice c) {
  const std::string name = c.variant->name;
  const std::string out = name.find("_f16out") != std::string::npos ? "_f16out" : "";
  const bool ahead = name.find("_1row_") == std::string::npos;
  c.variant = cuda::find_kernel_variant(((ahead ? "jp_conv_dw3_1row_i8" : "jp_conv_dw3_i8") + out).c_str());
  EXPECT_NE(c.variant, nullptr) << name;
  return c;
}

// The depthwise INT8 launch with one thread a channel (more blocks than four channels a thread
// need: the kernel then takes one channel a thread).
inline cuda::LaunchChoice depthwise_one_channel_a_thread(cuda::LaunchChoice c, const ConvParams& p) {
  const uint64_t work = uint64_t(p.batch) * p.out_size[0] * p.out_size[1] * p.in_channels;
  c.grid[0] = cuda::ceil_div_u32(work, c.block[0]);
  return c;
}

// The selector's choice for an INT8 conv step (Int8 x and w, the Float32 channel epilogue, a
// residual where p has one, y of type `y`): "" or why it refused.
inline std::string select_int8(const ConvParams& p, DType y, cuda::LaunchChoice* out) {
  cuda::StepDesc step = gpu_test::step_of(kConv, &p, DType::kInt8);
  step.num_inputs = p.has_residual ? 4 : 3;
  step.input_dtypes[0] = step.input_dtypes[1] = DType::kInt8;
  step.input_dtypes[2] = DType::kFloat32;
  step.num_outputs = 1;
  step.output_dtypes[0] = y;
  std::string why;
  return cuda::select_kernel(step, gpu_test::device_target(), out, &why) ? "" : why;
}

}  // namespace jetplan::kernels::int8_conv_test
