#include "converter/src/calibrate/calib_data.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "converter/src/calibrate/image_preprocess.h"
#include "converter/src/ir/error.h"
#include "kernels/cpu/half.h"
#include "runtime/tools/npy.h"

namespace jetplan::converter {
namespace {

std::string lower_extension(const std::string& name) {
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos) return "";
  std::string ext = name.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

bool is_image(const std::string& ext) {
  return ext == "png" || ext == "jpg" || ext == "jpeg" || ext == "bmp";
}

std::string shape_text(const std::vector<int64_t>& dims) {
  return tools::shape_string(dims.data(), static_cast<int32_t>(dims.size()));
}

tools::NpyArray read_npy(const std::string& path) {
  tools::NpyArray npy;
  std::string error;
  if (!tools::read_npy(path, &npy, &error)) fail("calibration sample: ", error);
  return npy;
}

}  // namespace

std::string sample_file_name(const std::string& input_name) {
  std::string name = input_name;
  std::replace(name.begin(), name.end(), '/', '_');
  return name + ".npy";
}

CalibrationSet::CalibrationSet(const std::string& dir, std::vector<CalibrationInput> inputs,
                               const Preprocess& preprocess, size_t max_samples)
    : dir_(dir), inputs_(std::move(inputs)), preprocess_(preprocess) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) fail("cannot read calibration folder '", dir, "': ", std::strerror(errno));
  std::vector<std::string> npys, images, folders;
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.empty() || name[0] == '.') continue;
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) continue;
    const std::string ext = lower_extension(name);
    if (S_ISDIR(st.st_mode)) {
      folders.push_back(path);
    } else if (ext == "npy") {
      npys.push_back(path);
    } else if (is_image(ext)) {
      images.push_back(path);
    }
  }
  closedir(d);
  const int kinds = !npys.empty() + !images.empty() + !folders.empty();
  if (kinds == 0) {
    fail("calibration folder '", dir,
         "' holds no samples: expected .npy files, images (.png "
         ".jpg .jpeg .bmp) or one folder per sample");
  }
  if (kinds > 1) {
    fail("calibration folder '", dir, "' mixes ", npys.size(), " .npy files, ", images.size(),
         " images and ", folders.size(), " folders: keep one kind of sample in it");
  }
  kind_ = !npys.empty() ? Kind::kNpy : !images.empty() ? Kind::kImage : Kind::kFolder;
  samples_ = !npys.empty() ? npys : !images.empty() ? images : folders;
  std::sort(samples_.begin(), samples_.end());
  if (max_samples > 0 && samples_.size() > max_samples) samples_.resize(max_samples);
  if (kind_ != Kind::kFolder && inputs_.size() != 1) {
    std::string names;
    for (const CalibrationInput& in : inputs_)
      names += (names.empty() ? "'" : ", '") + in.name + "'";
    fail("calibration folder '", dir, "' holds one file per sample, but the model has ",
         inputs_.size(), " inputs (", names,
         "): give one folder per sample holding <input>.npy "
         "for each");
  }
  if (kind_ == Kind::kImage) check_image_input(inputs_[0], preprocess_);
  if (kind_ == Kind::kFolder) {
    for (const std::string& sample : samples_) {
      for (const CalibrationInput& in : inputs_) {
        struct stat st {};
        const std::string file = sample + "/" + sample_file_name(in.name);
        if (stat(file.c_str(), &st) != 0) {
          fail("calibration sample folder '", sample, "' has no '", sample_file_name(in.name),
               "' for input '", in.name, "'");
        }
      }
    }
  }
}

std::vector<std::vector<uint8_t>> CalibrationSet::load(size_t i) const {
  std::vector<std::vector<uint8_t>> buffers;
  const std::string& path = samples_[i];
  switch (kind_) {
    case Kind::kNpy: buffers.push_back(load_npy(path, inputs_[0])); break;
    case Kind::kImage: buffers.push_back(load_image(path, inputs_[0])); break;
    case Kind::kFolder:
      for (const CalibrationInput& in : inputs_) {
        buffers.push_back(load_npy(path + "/" + sample_file_name(in.name), in));
      }
      break;
  }
  return buffers;
}

std::vector<uint8_t> CalibrationSet::load_npy(const std::string& path,
                                              const CalibrationInput& input) const {
  const tools::NpyArray npy = read_npy(path);
  const bool as_float = input.dtype == JP_FLOAT32 && (npy.dtype == "<f2" || npy.dtype == "|u1");
  const std::vector<int64_t> unbatched(input.dims.begin() + (input.dims.empty() ? 0 : 1),
                                       input.dims.end());
  const bool shape_ok = npy.shape == input.dims ||
                        (!input.dims.empty() && input.dims[0] == 1 && npy.shape == unbatched);
  if ((npy.dtype != tools::npy_descr(input.dtype) && !as_float) || !shape_ok) {
    fail("calibration sample '", path, "' is ", shape_text(npy.shape), " '", npy.dtype,
         "'; input '", input.name, "' takes ", shape_text(input.dims), " ", tools::dtype_name(input.dtype),
         " ('", tools::npy_descr(input.dtype), "'", input.dtype == JP_FLOAT32 ? ", '<f2' or '|u1'" : "",
         ")", input.dims.size() > 0 && input.dims[0] == 1 ? ", with or without its leading 1" : "");
  }
  size_t elements = 1;
  for (int64_t d : input.dims) elements *= static_cast<size_t>(d);
  const size_t item = npy.dtype == "<f2" ? 2 : npy.dtype == "|u1" ? 1 : tools::dtype_size(input.dtype);
  if (npy.data.size() < elements * item) {
    fail("calibration sample '", path, "' is truncated: ", npy.data.size(), " data bytes for ",
         elements, " elements of '", npy.dtype, "'");
  }
  std::vector<uint8_t> out(elements * tools::dtype_size(input.dtype));
  if (!as_float) {
    std::memcpy(out.data(), npy.data.data(), out.size());
    return out;
  }
  float* values = reinterpret_cast<float*>(out.data());
  const auto* raw = reinterpret_cast<const uint8_t*>(npy.data.data());
  for (size_t k = 0; k < elements; ++k) {
    if (item == 1) {
      values[k] = static_cast<float>(raw[k]);
    } else {
      values[k] = kernels::half_to_float(static_cast<uint16_t>(raw[2 * k] | raw[2 * k + 1] << 8));
    }
  }
  return out;
}

std::vector<uint8_t> CalibrationSet::load_image(const std::string& path,
                                                const CalibrationInput& input) const {
  const std::vector<float> values = image_tensor(path, input, preprocess_);
  std::vector<uint8_t> out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace jetplan::converter
