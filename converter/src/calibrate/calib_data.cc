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
  if (dims.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

const char* dtype_text(jp_dtype dtype) {
  switch (dtype) {
    case JP_FLOAT32: return "float32";
    case JP_FLOAT16: return "float16";
    case JP_INT8: return "int8";
    case JP_UINT8: return "uint8";
    case JP_INT32: return "int32";
    case JP_INT64: return "int64";
    case JP_BOOL: return "bool";
    case JP_FLOAT64: return "float64";
    case JP_INT16: return "int16";
    case JP_UINT16: return "uint16";
    case JP_UINT32: return "uint32";
    case JP_UINT64: return "uint64";
    case JP_BFLOAT16: return "bfloat16";
  }
  return "unknown";
}

// numpy's descr of each dtype (bfloat16: its bit patterns, as numpy has no bfloat16).
const char* npy_descr(jp_dtype dtype) {
  switch (dtype) {
    case JP_FLOAT32: return "<f4";
    case JP_FLOAT16: return "<f2";
    case JP_INT8: return "|i1";
    case JP_UINT8: return "|u1";
    case JP_INT32: return "<i4";
    case JP_INT64: return "<i8";
    case JP_BOOL: return "|b1";
    case JP_FLOAT64: return "<f8";
    case JP_INT16: return "<i2";
    case JP_UINT16: return "<u2";
    case JP_UINT32: return "<u4";
    case JP_UINT64: return "<u8";
    case JP_BFLOAT16: return "<u2";
  }
  return "";
}

size_t dtype_bytes(jp_dtype dtype) {
  switch (dtype) {
    case JP_INT8:
    case JP_UINT8:
    case JP_BOOL: return 1;
    case JP_FLOAT16:
    case JP_INT16:
    case JP_UINT16:
    case JP_BFLOAT16: return 2;
    case JP_FLOAT32:
    case JP_INT32:
    case JP_UINT32: return 4;
    case JP_INT64:
    case JP_FLOAT64:
    case JP_UINT64: return 8;
  }
  return 1;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u, exponent = (h >> 10) & 31u, mantissa = h & 1023u;
  float value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    value = mantissa == 0 ? INFINITY : NAN;
  } else {
    value = std::ldexp(static_cast<float>(mantissa | 1024u), static_cast<int>(exponent) - 25);
  }
  return sign ? -value : value;
}

struct Npy {
  std::string descr;
  std::vector<int64_t> shape;
  std::string data;
};

// The value of `key` in numpy's header dict ("{'descr': '<f4', 'fortran_order': False,
// 'shape': (1, 3), }"), up to the next ',' outside parentheses.
bool header_value(const std::string& header, const std::string& key, std::string* value) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return false;
  size_t i = header.find(':', at);
  if (i == std::string::npos) return false;
  ++i;
  int depth = 0;
  size_t end = i;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if ((c == ',' && depth == 0) || c == '}') break;
  }
  *value = header.substr(i, end - i);
  value->erase(0, value->find_first_not_of(" \t"));
  value->erase(value->find_last_not_of(" \t") + 1);
  return true;
}

Npy read_npy(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail("cannot read calibration sample '", path, "': ", std::strerror(errno));
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    fail("calibration sample '", path, "' is not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || bytes.size() < 8 + length_bytes) {
    fail("calibration sample '", path, "': unknown .npy format version ", major);
  }
  size_t header_len = 0;
  for (size_t i = 0; i < length_bytes; ++i) {
    header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  }
  const size_t data_at = 8 + length_bytes + header_len;
  if (data_at > bytes.size()) fail("calibration sample '", path, "': truncated .npy header");
  const std::string header = bytes.substr(8 + length_bytes, header_len);
  Npy npy;
  std::string descr, order, shape;
  if (!header_value(header, "descr", &descr) || !header_value(header, "fortran_order", &order) ||
      !header_value(header, "shape", &shape) || descr.size() < 2 || shape.empty() ||
      shape.front() != '(' || shape.back() != ')') {
    fail("calibration sample '", path, "': malformed .npy header '", header, "'");
  }
  if (order != "False") fail("calibration sample '", path, "' is in Fortran order; write C order");
  npy.descr = descr.substr(1, descr.size() - 2);
  std::istringstream dims(shape.substr(1, shape.size() - 2));
  std::string part;
  while (std::getline(dims, part, ',')) {
    part.erase(0, part.find_first_not_of(" "));
    part.erase(part.find_last_not_of(" ") + 1);
    if (part.empty()) continue;
    if (part.find_first_not_of("0123456789") != std::string::npos || part.size() > 15) {
      fail("calibration sample '", path, "': malformed .npy shape '", shape, "'");
    }
    npy.shape.push_back(std::stoll(part));
  }
  npy.data = bytes.substr(data_at);
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
  const Npy npy = read_npy(path);
  const bool as_float = input.dtype == JP_FLOAT32 && (npy.descr == "<f2" || npy.descr == "|u1");
  const std::vector<int64_t> unbatched(input.dims.begin() + (input.dims.empty() ? 0 : 1),
                                       input.dims.end());
  const bool shape_ok = npy.shape == input.dims ||
                        (!input.dims.empty() && input.dims[0] == 1 && npy.shape == unbatched);
  if ((npy.descr != npy_descr(input.dtype) && !as_float) || !shape_ok) {
    fail("calibration sample '", path, "' is ", shape_text(npy.shape), " '", npy.descr,
         "'; input '", input.name, "' takes ", shape_text(input.dims), " ", dtype_text(input.dtype),
         " ('", npy_descr(input.dtype), "'", input.dtype == JP_FLOAT32 ? ", '<f2' or '|u1'" : "",
         ")", input.dims.size() > 0 && input.dims[0] == 1 ? ", with or without its leading 1" : "");
  }
  size_t elements = 1;
  for (int64_t d : input.dims) elements *= static_cast<size_t>(d);
  const size_t item = npy.descr == "<f2" ? 2 : npy.descr == "|u1" ? 1 : dtype_bytes(input.dtype);
  if (npy.data.size() < elements * item) {
    fail("calibration sample '", path, "' is truncated: ", npy.data.size(), " data bytes for ",
         elements, " elements of '", npy.descr, "'");
  }
  std::vector<uint8_t> out(elements * dtype_bytes(input.dtype));
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
      values[k] = half_to_float(static_cast<uint16_t>(raw[2 * k] | raw[2 * k + 1] << 8));
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
