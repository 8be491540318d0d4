// Shared by the calibration tests: temporary folders and the .npy and .png files of a
// calibration set, written by the tests themselves.
#pragma once

#include <gtest/gtest.h>
#include <stb_image_write.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "converter/src/ir/error.h"

namespace jetplan::converter::testing {

// The ConvertError message f() throws; fails the test when it throws none.
template <typename F>
std::string thrown_error(F&& f) {
  try {
    f();
  } catch (const ConvertError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// A fresh, empty folder per test and process (ctest runs the tests of a file as parallel
// processes, and two build trees' suites may run at once on one machine).
inline std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "jetplan_calib_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                          std::to_string(getpid()) + "_" + name;
  const std::string rm = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(rm.c_str()), 0);
  EXPECT_EQ(mkdir(dir.c_str(), 0755), 0) << dir;
  return dir;
}

// A .npy file (format 1.0, C order) of `descr` ("<f4", "<f2", "|u1", ...) holding `data`.
inline void write_npy(const std::string& path, const std::string& descr,
                      const std::vector<int64_t>& shape, const void* data, size_t bytes) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.erase(dims.size() - 2);  // (1, 2) but (3,) for rank 1
  if (shape.size() == 1) dims.erase(dims.size() - 1);
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.put(static_cast<char>(len & 0xff));
  f.put(static_cast<char>(len >> 8));
  f << header;
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

inline void write_npy(const std::string& path, const std::vector<int64_t>& shape,
                      const std::vector<float>& values) {
  write_npy(path, "<f4", shape, values.data(), values.size() * sizeof(float));
}

// An 8-bit image of `channels` channels (HWC pixels), as PNG.
inline void write_png(const std::string& path, int width, int height, int channels,
                      const std::vector<uint8_t>& pixels) {
  ASSERT_NE(stbi_write_png(path.c_str(), width, height, channels, pixels.data(), width * channels),
            0)
      << path;
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace jetplan::converter::testing
