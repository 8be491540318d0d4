// Minimal NumPy .npy reader/writer (format versions 1-3, little-endian, C order) and the names
// of plan dtypes and shapes in messages, for the tools: jetplan-run's input files and the
// converter's calibration samples (library jetplan_npy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"

namespace jetplan::tools {

std::string shape_string(const int64_t* dims, int32_t rank);
const char* dtype_name(jp_dtype dtype);
// The .npy dtype a binding reads and writes. numpy has no bfloat16: a BFloat16 binding takes
// and gives its raw bit patterns as uint16 ("<u2"; x.view(np.uint32) >> 16 of a float32 x
// truncates to them, (b.astype(np.uint32) << 16).view(np.float32) decodes them).
const char* npy_descr(jp_dtype dtype);
// Bytes per element.
size_t dtype_size(jp_dtype dtype);

struct NpyArray {
  std::string dtype;  // numpy descr, e.g. "<f4"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

// Returns false and sets *error on a malformed or unsupported file.
bool read_npy(const std::string& path, NpyArray* out, std::string* error);
bool write_npy(const std::string& path, const std::string& dtype,
               const std::vector<int64_t>& shape, const void* data, size_t bytes,
               std::string* error);

}  // namespace jetplan::tools
