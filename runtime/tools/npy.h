// Minimal NumPy .npy reader/writer (format versions 1-3, little-endian, C order) for the tools.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jetplan::tools {

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
