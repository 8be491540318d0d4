#include "converter/src/calibrate/image_preprocess.h"

#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "converter/src/ir/error.h"

namespace jetplan::converter {
namespace {

struct Image {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<float> pixels;  // HWC
};

bool parse_int(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *value = std::stoll(text);
  return *value > 0;
}

// "N" (both N) or "HxW".
bool parse_size(const std::string& text, int64_t* h, int64_t* w) {
  const size_t x = text.find('x');
  if (x == std::string::npos) return parse_int(text, h) && parse_int(text, w);
  return parse_int(text.substr(0, x), h) && parse_int(text.substr(x + 1), w);
}

bool parse_float(const std::string& text, float* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  *value = static_cast<float>(v);
  return true;
}

bool parse_floats(const std::string& text, std::vector<float>* values) {
  values->clear();
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ':')) {
    float v = 0.f;
    if (!parse_float(part, &v)) return false;
    values->push_back(v);
  }
  return (values->size() == 1 || values->size() == 3) && text.back() != ':';
}

// Resizes with bilinear interpolation and half-pixel centres (as OpenCV's INTER_LINEAR and
// ONNX Resize's half_pixel do, without antialiasing).
Image resize_bilinear(const Image& in, int64_t height, int64_t width) {
  Image out{height, width, in.channels, {}};
  out.pixels.resize(static_cast<size_t>(height * width * in.channels));
  auto source = [](int64_t dst, int64_t in_size, int64_t out_size, int64_t* lo, int64_t* hi) {
    double s = (dst + 0.5) * static_cast<double>(in_size) / static_cast<double>(out_size) - 0.5;
    s = std::clamp(s, 0.0, static_cast<double>(in_size - 1));
    *lo = static_cast<int64_t>(s);
    *hi = std::min(*lo + 1, in_size - 1);
    return static_cast<float>(s - static_cast<double>(*lo));
  };
  for (int64_t y = 0; y < height; ++y) {
    int64_t y0 = 0, y1 = 0;
    const float fy = source(y, in.height, height, &y0, &y1);
    for (int64_t x = 0; x < width; ++x) {
      int64_t x0 = 0, x1 = 0;
      const float fx = source(x, in.width, width, &x0, &x1);
      for (int64_t c = 0; c < in.channels; ++c) {
        auto at = [&](int64_t yy, int64_t xx) {
          return in.pixels[static_cast<size_t>((yy * in.width + xx) * in.channels + c)];
        };
        const float top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * fx;
        const float bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * fx;
        out.pixels[static_cast<size_t>((y * width + x) * in.channels + c)] =
            top + (bottom - top) * fy;
      }
    }
  }
  return out;
}

Image crop_centre(const Image& in, int64_t height, int64_t width, const std::string& path) {
  if (height > in.height || width > in.width) {
    fail("image '", path, "' is ", in.height, "x", in.width,
         " (HxW) after resizing, smaller than "
         "the crop ",
         height, "x", width);
  }
  const int64_t top = (in.height - height) / 2, left = (in.width - width) / 2;
  Image out{height, width, in.channels, {}};
  out.pixels.reserve(static_cast<size_t>(height * width * in.channels));
  for (int64_t y = 0; y < height; ++y) {
    const auto row = in.pixels.begin() + ((top + y) * in.width + left) * in.channels;
    out.pixels.insert(out.pixels.end(), row, row + width * in.channels);
  }
  return out;
}

bool nchw_layout(const CalibrationInput& input, const Preprocess& preprocess) {
  if (preprocess.layout != Preprocess::Layout::kAuto) {
    return preprocess.layout == Preprocess::Layout::kNchw;
  }
  return input.dims.size() == 4 && (input.dims[1] == 1 || input.dims[1] == 3);
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace

Preprocess parse_preprocess(const std::string& spec) {
  Preprocess p;
  std::vector<std::string> seen;
  std::istringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    auto bad = [&](const char* expected) {
      fail("preprocessing spec '", spec, "': '", item, "': expected ", expected);
    };
    if (eq == std::string::npos) bad("KEY=VALUE");
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      fail("preprocessing spec '", spec, "': '", key, "' given twice");
    }
    seen.push_back(key);
    if (key == "resize") {
      if (value.find('x') == std::string::npos) {
        if (!parse_int(value, &p.resize)) bad("resize=N (the short side) or resize=HxW");
      } else if (!parse_size(value, &p.resize_h, &p.resize_w)) {
        bad("resize=N (the short side) or resize=HxW");
      }
    } else if (key == "crop") {
      if (!parse_size(value, &p.crop_h, &p.crop_w)) bad("crop=N or crop=HxW");
    } else if (key == "mean") {
      if (!parse_floats(value, &p.mean)) bad("mean=M or mean=M0:M1:M2");
    } else if (key == "std") {
      if (!parse_floats(value, &p.std) ||
          std::any_of(p.std.begin(), p.std.end(), [](float s) { return s == 0.f; })) {
        bad("std=S or std=S0:S1:S2, non-zero");
      }
    } else if (key == "order") {
      if (value != "rgb" && value != "bgr") bad("order=rgb or order=bgr");
      p.bgr = value == "bgr";
    } else if (key == "layout") {
      if (value != "nchw" && value != "nhwc") bad("layout=nchw or layout=nhwc");
      p.layout = value == "nchw" ? Preprocess::Layout::kNchw : Preprocess::Layout::kNhwc;
    } else if (key == "scale") {
      if (!parse_float(value, &p.scale) || p.scale == 0.f) bad("scale=S, non-zero");
    } else {
      fail("preprocessing spec '", spec, "': unknown key '", key,
           "' (known: resize, crop, mean, std, order, layout, scale)");
    }
  }
  return p;
}

void check_image_input(const CalibrationInput& input, const Preprocess& preprocess) {
  const bool nchw = nchw_layout(input, preprocess);
  const int64_t channels = input.dims.size() == 4 ? input.dims[nchw ? 1 : 3] : 0;
  if (input.dtype != JP_FLOAT32 || input.dims.size() != 4 || input.dims[0] != 1 ||
      (channels != 1 && channels != 3)) {
    fail("input '", input.name, "' (", dims_text(input.dims),
         ") cannot take images: it must be "
         "float32 [1,C,H,W] or [1,H,W,C] with C = 1 or 3 (give .npy samples instead)");
  }
  for (const std::vector<float>* v : {&preprocess.mean, &preprocess.std}) {
    if (v->size() != 1 && static_cast<int64_t>(v->size()) != channels) {
      fail("preprocessing: mean and std take 1 or ", channels, " values for input '", input.name,
           "' (", channels, " channels)");
    }
  }
}

std::vector<float> image_tensor(const std::string& path, const CalibrationInput& input,
                                const Preprocess& preprocess) {
  const bool nchw = nchw_layout(input, preprocess);
  const int64_t channels = input.dims[nchw ? 1 : 3];
  const int64_t height = input.dims[nchw ? 2 : 1], width = input.dims[nchw ? 3 : 2];
  int w = 0, h = 0, n = 0;
  unsigned char* raw = stbi_load(path.c_str(), &w, &h, &n, static_cast<int>(channels));
  if (raw == nullptr) fail("cannot decode image '", path, "': ", stbi_failure_reason());
  Image image{h, w, channels, std::vector<float>(raw, raw + static_cast<size_t>(h) * w * channels)};
  stbi_image_free(raw);
  if (preprocess.resize > 0) {
    const int64_t short_side = std::min(image.height, image.width);
    const auto scaled = [&](int64_t side) {
      return std::max<int64_t>(1, std::llround(static_cast<double>(side) * preprocess.resize /
                                               static_cast<double>(short_side)));
    };
    image = resize_bilinear(image, scaled(image.height), scaled(image.width));
  } else if (preprocess.resize_h > 0) {
    image = resize_bilinear(image, preprocess.resize_h, preprocess.resize_w);
  }
  if (preprocess.crop_h > 0) image = crop_centre(image, preprocess.crop_h, preprocess.crop_w, path);
  if (image.height != height || image.width != width) {
    const std::vector<int64_t> got =
        nchw ? std::vector<int64_t>{1, channels, image.height, image.width}
             : std::vector<int64_t>{1, image.height, image.width, channels};
    fail("image '", path, "' is ", dims_text(got), " after preprocessing (", h, "x", w,
         " HxW decoded); input '", input.name, "' is ", dims_text(input.dims),
         ": resize or crop it to fit (--calib-preprocess)");
  }
  std::vector<float> out(image.pixels.size());
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t from = preprocess.bgr && channels == 3 ? 2 - c : c;
        const float mean = preprocess.mean.size() == 1 ? preprocess.mean[0] : preprocess.mean[c];
        const float std = preprocess.std.size() == 1 ? preprocess.std[0] : preprocess.std[c];
        const float v = image.pixels[static_cast<size_t>((y * width + x) * channels + from)];
        const int64_t at = nchw ? (c * height + y) * width + x : (y * width + x) * channels + c;
        out[static_cast<size_t>(at)] = (v / preprocess.scale - mean) / std;
      }
    }
  }
  return out;
}

}  // namespace jetplan::converter
