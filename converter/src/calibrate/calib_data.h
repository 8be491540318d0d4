// The calibration set: the samples a calibration runs the model on, read from one folder.
//
// The folder holds one kind of sample (other files, and names starting with '.', are ignored):
//   - .npy files, one sample each, for a model with one input;
//   - images (.png .jpg .jpeg .bmp, through stb_image), one sample each, for a model with one
//     float32 input of rank 4, made into a tensor by a Preprocess spec;
//   - one sub-folder per sample holding <input name>.npy for every input (any model; a '/' in
//     an input's name is '_' in its file name).
// A .npy is C order, of the input's dtype (float32 inputs also take float16 and uint8, converted
// by value), and of exactly the input's shape, or of that shape without its leading 1 when the
// input's batch is 1. Samples come in the order of their names (bytewise), so a calibration is
// deterministic. Every problem is a ConvertError naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"

namespace jetplan::converter {

// One input of the plan calibration runs (jp_plan_input_desc).
struct CalibrationInput {
  std::string name;
  jp_dtype dtype = JP_FLOAT32;
  std::vector<int64_t> dims;
};

// How an image becomes an input tensor, in this order: decode (1 or 3 channels, as the input
// has), resize (bilinear, half-pixel centres), centre crop, x / scale, (x - mean[c]) / std[c],
// channel order, layout.
struct Preprocess {
  int64_t resize = 0;                  // "resize=N": the short side becomes N, aspect kept
  int64_t resize_h = 0, resize_w = 0;  // "resize=HxW": exactly that size
  int64_t crop_h = 0, crop_w = 0;      // "crop=N" or "crop=HxW": the centre of the image
  // One value for every channel, or one per channel in the tensor's channel order.
  std::vector<float> mean = {0.f};
  std::vector<float> std = {1.f};
  bool bgr = false;  // "order=bgr": channel 0 of the tensor is the image's blue
  enum class Layout { kAuto, kNchw, kNhwc };
  // kAuto: NCHW when dim 1 is 1 or 3, else NHWC when dim 3 is.
  Layout layout = Layout::kAuto;
  float scale = 255.f;  // pixels (0..255) are divided by it first
};

// Parses "resize=256,crop=224,mean=0.485:0.456:0.406,std=0.229:0.224:0.225,order=rgb,
// layout=nchw,scale=255" (every key optional, each at most once; mean and std take 1 or 3
// values; std and scale non-zero). Throws ConvertError naming the bad part.
Preprocess parse_preprocess(const std::string& spec);

class CalibrationSet {
 public:
  // Lists `dir` (throws ConvertError: unreadable, empty, mixed kinds, a kind that does not fit
  // the inputs, a sample folder without an input's file). max_samples > 0 keeps the first ones.
  CalibrationSet(const std::string& dir, std::vector<CalibrationInput> inputs,
                 const Preprocess& preprocess, size_t max_samples = 0);

  size_t size() const { return samples_.size(); }
  const std::string& sample_path(size_t i) const { return samples_[i]; }
  const std::vector<CalibrationInput>& inputs() const { return inputs_; }

  // Reads sample i: one buffer per input, in the input's dtype, exactly its byte size. Safe to
  // call from several threads at once. Throws ConvertError naming the file.
  std::vector<std::vector<uint8_t>> load(size_t i) const;

 private:
  enum class Kind { kNpy, kImage, kFolder };
  std::vector<uint8_t> load_npy(const std::string& path, const CalibrationInput& input) const;
  std::vector<uint8_t> load_image(const std::string& path, const CalibrationInput& input) const;

  std::string dir_;
  std::vector<CalibrationInput> inputs_;
  Preprocess preprocess_;
  Kind kind_ = Kind::kNpy;
  std::vector<std::string> samples_;  // paths, sorted by name
};

// The file a sample folder holds for `input_name`: "<name with '/' as '_'>.npy".
std::string sample_file_name(const std::string& input_name);

}  // namespace jetplan::converter
