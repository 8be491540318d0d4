// Images of a calibration set made into input tensors (calib_data.h: Preprocess says how).
#pragma once

#include <string>
#include <vector>

#include "converter/src/calibrate/calib_data.h"

namespace jetplan::converter {

// Throws ConvertError unless `input` can take an image: float32 [1,C,H,W] or [1,H,W,C] (as the
// spec's layout says, or either when it says none) with C 1 or 3, and mean/std of 1 or C values.
void check_image_input(const CalibrationInput& input, const Preprocess& preprocess);

// Decodes the image at `path` and preprocesses it into `input`'s tensor (float32, its exact
// element count). Throws ConvertError naming the image: it does not decode, it is smaller than
// the crop, or its preprocessed size is not the input's (both shapes named).
std::vector<float> image_tensor(const std::string& path, const CalibrationInput& input,
                                const Preprocess& preprocess);

}  // namespace jetplan::converter
