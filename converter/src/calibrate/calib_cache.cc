#include "converter/src/calibrate/calib_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "converter/src/ir/error.h"
#include "converter/src/serialize/sha256.h"

namespace jetplan::converter {
namespace {

constexpr const char* kMagic = "jetplan-calibration";

std::string escape(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

// False on a dangling or unknown escape.
bool unescape(const std::string& text, std::string* name) {
  name->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      *name += text[i];
      continue;
    }
    if (++i == text.size()) return false;
    switch (text[i]) {
      case '\\': *name += '\\'; break;
      case 'n': *name += '\n'; break;
      case 'r': *name += '\r'; break;
      default: return false;
    }
  }
  return true;
}

std::string hex_float(float value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%a", static_cast<double>(value));
  return buffer;
}

[[noreturn]] void bad_line(const std::string& path, size_t line, const std::string& why) {
  fail("calibration cache '", path, "' line ", line, ": ", why);
}

void parse_header(const std::string& line, const std::string& path,
                  const std::string& expected_hash, CalibrationCache* cache) {
  std::istringstream in(line);
  std::string magic, hash, method, extra;
  int version = 0;
  long long samples = -1;
  if (!(in >> magic) || magic != kMagic) {
    bad_line(path, 1, cat("not a calibration cache (expected a header starting '", kMagic, "')"));
  }
  if (!(in >> version)) bad_line(path, 1, "the header has no format version");
  if (version != kCalibrationCacheVersion) {
    fail("calibration cache '", path, "' is format version ", version, "; this converter reads ",
         kCalibrationCacheVersion, " (delete it to calibrate again)");
  }
  if (!(in >> hash >> method >> samples) || samples < 0 || (in >> extra)) {
    bad_line(path, 1, "expected 'jetplan-calibration VERSION HASH METHOD SAMPLES'");
  }
  if (hash != expected_hash) {
    fail("calibration cache '", path, "' is for another model: it was made for model hash ", hash,
         ", this model (with its input shapes) hashes to ", expected_hash,
         " (delete it or give another --calib-cache)");
  }
  CalibrationMethod parsed_method;
  double percentile = 0;
  try {
    parse_method(method, &parsed_method, &percentile);
  } catch (const ConvertError& e) {
    bad_line(path, 1, e.what());
  }
  cache->model_hash = hash;
  cache->method = method;
  cache->samples = static_cast<size_t>(samples);
}

void parse_tensor_line(const std::string& line, size_t number, const std::string& path,
                       CalibrationCache* cache) {
  const size_t space = line.find(' ');
  if (space == std::string::npos || space == 0 || space + 1 == line.size()) {
    bad_line(path, number, "expected '<amax> <tensor name>'");
  }
  std::string name;
  if (!unescape(line.substr(space + 1), &name)) {
    bad_line(path, number, "a tensor name with a malformed '\\' escape");
  }
  const std::string value = line.substr(0, space);
  if (cache->amax.count(name) != 0 ||
      std::find(cache->no_range.begin(), cache->no_range.end(), name) != cache->no_range.end()) {
    bad_line(path, number, cat("tensor '", name, "' is listed twice"));
  }
  if (value == "none") {
    cache->no_range.push_back(name);
    return;
  }
  errno = 0;
  char* end = nullptr;
  const double amax = std::strtod(value.c_str(), &end);
  if (end != value.c_str() + value.size() || value.empty()) {
    bad_line(path, number, cat("'", value, "' is not a number (tensor '", name, "')"));
  }
  if (!(amax > 0.0) || !std::isfinite(amax) || !std::isfinite(static_cast<float>(amax)) ||
      !(static_cast<float>(amax) > 0.f)) {
    bad_line(path, number,
             cat("tensor '", name, "' has amax ", value, ": an amax must be positive and finite"));
  }
  cache->amax[name] = static_cast<float>(amax);
}

}  // namespace

std::string model_hash(const std::string& model_bytes,
                       const std::map<std::string, Shape>& input_shapes, bool fuse,
                       const std::map<std::string, std::string>& freeze) {
  Sha256 sha;
  sha.update(model_bytes.data(), model_bytes.size());
  // NUL separators: a model's bytes cannot be confused with the shapes that follow them.
  std::string rest;
  for (const auto& [name, dims] : input_shapes) {
    rest += std::string(1, '\0') + "shape " + name + ":";
    for (size_t i = 0; i < dims.size(); ++i) rest += (i ? "x" : "") + std::to_string(dims[i]);
  }
  rest += std::string(1, '\0') + (fuse ? "fuse" : "no-fuse");
  for (const auto& [name, value] : freeze)
    rest += std::string(1, '\0') + "freeze " + name + "=" + value;
  sha.update(rest.data(), rest.size());
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : sha.finish()) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

std::string format_calibration_cache(const CalibrationCache& cache) {
  std::map<std::string, std::string> lines;  // by name: one sorted listing of both kinds
  for (const auto& [name, amax] : cache.amax) lines[name] = hex_float(amax);
  for (const std::string& name : cache.no_range) lines[name] = "none";
  std::string text = cat(kMagic, " ", kCalibrationCacheVersion, " ", cache.model_hash, " ",
                         cache.method, " ", cache.samples, "\n");
  for (const auto& [name, value] : lines) text += value + " " + escape(name) + "\n";
  return text;
}

void write_calibration_cache(const std::string& path, const CalibrationCache& cache) {
  const std::string text = format_calibration_cache(cache);
  // The pid keeps two conversions writing the same cache from sharing a temporary file.
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    fail("cannot write calibration cache '", path, "': ", std::strerror(errno));
  }
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    std::remove(tmp.c_str());
    fail("cannot write calibration cache '", path, "': ", std::strerror(write_errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    std::remove(tmp.c_str());
    fail("cannot write calibration cache '", path, "': ", std::strerror(rename_errno));
  }
}

CalibrationCache parse_calibration_cache(const std::string& text, const std::string& path,
                                         const std::string& expected_hash) {
  CalibrationCache cache;
  std::istringstream in(text);
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1) {
      parse_header(line, path, expected_hash, &cache);
    } else {
      parse_tensor_line(line, number, path, &cache);
    }
  }
  if (number == 0) fail("calibration cache '", path, "' is empty");
  std::sort(cache.no_range.begin(), cache.no_range.end());
  return cache;
}

CalibrationCache read_calibration_cache(const std::string& path, const std::string& expected_hash) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail("cannot read calibration cache '", path, "': ", std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) fail("cannot read calibration cache '", path, "'");
  return parse_calibration_cache(text.str(), path, expected_hash);
}

}  // namespace jetplan::converter
