// The MaxUnpool twin (kernels/cpu/max_unpool.cc) against the ONNX operator documentation's
// examples (hand-computed, with and without output_shape) and against a reference of the definition read the other way round:
// for each position of y, the largest k whose index names it (the last write), else zero. The
// ONNX node tests run it too (tests/conformance).
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernels.h"

namespace jetplan::kernels {
namespace {

MaxUnpoolParams params(int64_t x_count, int64_t y_count, uint32_t elem_bytes) {
  MaxUnpoolParams p;
  p.x_count = x_count;
  p.y_count = y_count;
  p.elem_bytes = elem_bytes;
  return p;
}

// ONNX's MaxUnpool example: X [1,1,2,2] = 1..4 from a 2x2/2 MaxPool of a 4x4 input, I its
// indices; Y [1,1,4,4] holds each value at its index and zeros elsewhere.
TEST(CpuMaxUnpool, OnnxExample) {
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<int64_t> indices = {5, 7, 13, 15};
  std::vector<float> y(16, -1.f);
  cpu::max_unpool(params(4, 16, 4), x.data(), indices.data(), y.data());
  const std::vector<float> want = {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4};
  EXPECT_EQ(y, want);
}

// ONNX's example with output_shape: the same indices address the default 4x4 output, whose
// elements keep their coordinates in the 5x5 one (each dim padded at its end).
TEST(CpuMaxUnpool, IndicesAddressTheDefaultShapeInsideALargerOutput) {
  const std::vector<float> x = {5, 6, 7, 8};
  const std::vector<int64_t> indices = {5, 7, 13, 15, 16, -1};  // two strays at the end
  MaxUnpoolParams p = params(6, 25, 4);
  p.rank = 4;
  const int64_t index_dims[] = {1, 1, 4, 4}, y_dims[] = {1, 1, 5, 5};
  std::copy(index_dims, index_dims + 4, p.index_dims);
  std::copy(y_dims, y_dims + 4, p.y_dims);
  std::vector<float> xs = x;
  xs.push_back(9.f);
  xs.push_back(10.f);
  std::vector<float> y(25, -1.f);
  cpu::max_unpool(p, xs.data(), indices.data(), y.data());
  const std::vector<float> want = {0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0,
                                   0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(y, want);
}

// Random indices with many duplicates and some outside y (negative or past its end), every
// element size: each y element is x[k] for the largest k naming it, else zero bytes.
TEST(CpuMaxUnpool, TheLastOfDuplicatesWinsAndStrayIndicesWriteNothing) {
  std::mt19937 rng(11);
  for (uint32_t e : {2u, 4u, 8u}) {
    const int64_t nx = 997, ny = 300;
    std::vector<int64_t> indices(static_cast<size_t>(nx));
    std::uniform_int_distribution<int64_t> pick(-20, ny + 20);
    for (int64_t& i : indices) i = pick(rng);
    std::vector<uint8_t> x(static_cast<size_t>(nx) * e);
    for (uint8_t& b : x) b = static_cast<uint8_t>(rng() | 1u);  // no element is all zero bytes
    std::vector<uint8_t> y(static_cast<size_t>(ny) * e, 0xab);
    cpu::max_unpool(params(nx, ny, e), x.data(), indices.data(), y.data());
    size_t written = 0;
    for (int64_t j = 0; j < ny; ++j) {
      int64_t last = -1;
      for (int64_t k = 0; k < nx; ++k)
        if (indices[size_t(k)] == j) last = k;
      std::vector<uint8_t> want(e, 0);
      if (last >= 0) {
        std::memcpy(want.data(), x.data() + size_t(last) * e, e);
        ++written;
      }
      EXPECT_EQ(std::memcmp(y.data() + size_t(j) * e, want.data(), e), 0) << "y[" << j << "], " << e;
    }
    EXPECT_GT(written, 250u);  // the case has duplicates and writes most of y
  }
}

}  // namespace
}  // namespace jetplan::kernels
