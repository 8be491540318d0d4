// The Int8 weights of an INT8 conv (converter/src/precision/int8_precision.h): symmetric, one
// scale per output channel; and the channel forms the INT8 conv kernels take.
#pragma once

#include <cstdint>
#include <vector>

#include "converter/src/lower/lower.h"

namespace jetplan::converter {

// Quantizes Float32 weight `w` ([Cout, ...], constant) per output channel into `q` and returns
// the scales: `given` where the model gives them (explicit quantization, one scale or one per
// output channel: w / s gives back its integers, saturated to [-128, 127]), else max |w| / 127
// (1 for an all-zero channel), rounding to nearest even into [-127, 127]. Throws ConvertError
// naming the tensor for a weight that is not finite.
std::vector<float> quantize_conv_weights(const DraftTensor& w, const std::vector<float>* given,
                                         std::vector<uint8_t>* q);

// Null where the CUDA INT8 conv kernels take a conv of these channels (kernels/cuda/conv.cu):
// groups 1 (with Cin % 8 != 0 padded to int8_padded_channels), depthwise, or grouped with 8k
// input channels a group (kernels::conv_grouped_igemm_fits); else why not.
const char* int8_conv_form_refusal(int64_t groups, int64_t cin, int64_t cout);

// The input channels an INT8 conv reads: Cin, or for groups 1 with Cin % 8 != 0 (an RGB stem)
// Cin rounded up to a multiple of 8, the unit the kernels load (8-byte cp.async halves); the
// input is quantized with zeros in the added channels (a Quantize step of the image form) and
// the weight padded with zeros (pad_input_channels), so the int32 sums are the same.
int64_t int8_padded_channels(int64_t groups, int64_t cin);

// Float32 OHWI weight w ([Cout, KH, KW, C]) with its input channels padded to cp with +0.0, in
// `storage` (which the result's data points to).
DraftTensor pad_input_channels(const DraftTensor& w, int64_t cp, std::vector<uint8_t>* storage);

}  // namespace jetplan::converter
