#include "input_files.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "npy.h"

#ifdef JETPLAN_HAVE_STB_IMAGE
#include <stb_image.h>
#endif

namespace jetplan::tools {

namespace {

std::string lower_extension(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return "";
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

bool load_npy(const std::string& path, const jp_tensor_desc& desc, std::vector<uint8_t>* bytes,
              std::string* error) {
  NpyArray array;
  if (!read_npy(path, &array, error)) return false;
  if (array.dtype != npy_descr(desc.dtype)) {
    *error = "input '" + std::string(desc.name) + "': '" + path + "' holds dtype " + array.dtype +
             ", the plan expects " + dtype_name(desc.dtype) + " (" + npy_descr(desc.dtype) +
             (desc.dtype == JP_BFLOAT16 ? ": the bfloat16 bit patterns, as numpy has no bfloat16"
                                        : "") +
             ")";
    return false;
  }
  const bool same_shape =
      array.shape.size() == static_cast<size_t>(desc.rank) &&
      std::equal(array.shape.begin(), array.shape.end(), desc.dims);
  if (!same_shape) {
    *error = "input '" + std::string(desc.name) + "': '" + path + "' has shape " +
             shape_string(array.shape.data(), static_cast<int32_t>(array.shape.size())) +
             ", the plan expects " + shape_string(desc.dims, desc.rank);
    return false;
  }
  if (array.data.size() != desc.bytes) {
    *error = "input '" + std::string(desc.name) + "': '" + path + "' holds " +
             std::to_string(array.data.size()) + " data bytes, expected " +
             std::to_string(desc.bytes);
    return false;
  }
  *bytes = std::move(array.data);
  return true;
}

#ifdef JETPLAN_HAVE_STB_IMAGE
// Images become float32 in [0, 1], laid out as the input asks: [1, C, H, W] or [1, H, W, C].
bool load_image(const std::string& path, const jp_tensor_desc& desc, std::vector<uint8_t>* bytes,
                std::string* error) {
  const std::string name(desc.name);
  if (desc.dtype != JP_FLOAT32 || desc.rank != 4 || desc.dims[0] != 1) {
    *error = "input '" + name + "' (" + shape_string(desc.dims, desc.rank) + " " +
             dtype_name(desc.dtype) + ") cannot take an image: it must be float32 [1,C,H,W] or "
             "[1,H,W,C] with C = 1 or 3";
    return false;
  }
  const bool nchw = desc.dims[1] == 1 || desc.dims[1] == 3;
  const bool nhwc = desc.dims[3] == 1 || desc.dims[3] == 3;
  if (!nchw && !nhwc) {
    *error = "input '" + name + "' has neither 1 nor 3 channels in dim 1 or 3";
    return false;
  }
  const int64_t channels = nchw ? desc.dims[1] : desc.dims[3];
  const int64_t height = nchw ? desc.dims[2] : desc.dims[1];
  const int64_t width = nchw ? desc.dims[3] : desc.dims[2];
  int w = 0, h = 0, n = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &w, &h, &n, static_cast<int>(channels));
  if (pixels == nullptr) {
    *error = "cannot decode image '" + path + "': " + stbi_failure_reason();
    return false;
  }
  if (w != width || h != height) {
    stbi_image_free(pixels);
    *error = "image '" + path + "' is " + std::to_string(w) + "x" + std::to_string(h) +
             " (WxH); input '" + name + "' needs " + std::to_string(width) + "x" +
             std::to_string(height) + ": resize it first";
    return false;
  }
  std::vector<float> values(static_cast<size_t>(channels * height * width));
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      for (int64_t c = 0; c < channels; ++c) {
        const float v = pixels[(y * width + x) * channels + c] / 255.0f;
        const int64_t at = nchw ? (c * height + y) * width + x : (y * width + x) * channels + c;
        values[static_cast<size_t>(at)] = v;
      }
    }
  }
  stbi_image_free(pixels);
  bytes->resize(values.size() * sizeof(float));
  std::memcpy(bytes->data(), values.data(), bytes->size());
  return true;
}
#endif

}  // namespace

bool load_input_file(const std::string& path, const jp_tensor_desc& desc,
                     std::vector<uint8_t>* bytes, std::string* error) {
  const std::string ext = lower_extension(path);
  if (ext == "npy") return load_npy(path, desc, bytes, error);
  if (ext == "png" || ext == "jpg" || ext == "jpeg" || ext == "bmp" || ext == "ppm" ||
      ext == "pgm" || ext == "tga") {
#ifdef JETPLAN_HAVE_STB_IMAGE
    return load_image(path, desc, bytes, error);
#else
    *error = "this jetplan-run was built without stb_image and cannot read '" + path + "'";
    return false;
#endif
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot open input file '" + path + "'";
    return false;
  }
  bytes->assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  if (bytes->size() != desc.bytes) {
    *error = "input '" + std::string(desc.name) + "': raw file '" + path + "' is " +
             std::to_string(bytes->size()) + " bytes, the plan expects " +
             std::to_string(desc.bytes) + " (" + shape_string(desc.dims, desc.rank) + " " +
             dtype_name(desc.dtype) + ")";
    return false;
  }
  return true;
}

}  // namespace jetplan::tools
