// SHA-256 (FIPS 180-4), for the plan's record of which ONNX file it came from.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace jetplan::converter {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  std::array<uint8_t, 32> finish();  // the object must not be updated afterwards

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hex digest of `size` bytes.
std::string sha256_hex(const void* data, size_t size);

}  // namespace jetplan::converter
