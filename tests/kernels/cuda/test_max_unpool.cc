// CUDA MaxUnpool (kernels/cuda/max_unpool.cu) against its CPU twin (kernels/cpu/max_unpool.cc)
// on fresh random indices with many duplicates and strays (negative, past y's end), every
// element size, y small (one block) and large (many blocks, grid-striding past the cooperative
// grid), and indices addressing a smaller shape inside y (an output_shape larger than the
// default): only bytes move and the last of duplicates wins in both, so they match bit for bit. y
// poisoned, guards checked; each case runs twice on one workspace the runtime's way (zeroed
// before each launch), so a winner word left from the first run would show.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kMaxUnpool = static_cast<uint16_t>(OpFamilyId::kMaxUnpool);

TEST(GpuMaxUnpool, MatchesCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  std::mt19937 rng(29);
  struct Case {
    int64_t nx, ny;
  };
  // The last case's indices address [2, 3, 40, 50] inside y [2, 3, 41, 57] (an output_shape
  // larger than the default).
  for (const Case c : {Case{37, 100}, Case{5000, 2000}, Case{1 << 20, 4 << 20}, Case{3 << 20, 1 << 20},
                       Case{9000, 2 * 3 * 41 * 57}}) {
    for (uint32_t e : {2u, 4u, 8u}) {
      SCOPED_TRACE(std::to_string(c.nx) + " -> " + std::to_string(c.ny) + ", " + std::to_string(e) + " bytes");
      std::vector<int64_t> indices(static_cast<size_t>(c.nx));
      const bool padded = c.ny == 2 * 3 * 41 * 57;
      const int64_t addressed = padded ? 2 * 3 * 40 * 50 : c.ny;
      std::uniform_int_distribution<int64_t> pick(-3, addressed + 3);
      for (int64_t& i : indices) i = pick(rng);
      std::vector<uint8_t> x(static_cast<size_t>(c.nx) * e);
      for (uint8_t& b : x) b = static_cast<uint8_t>(rng());
      MaxUnpoolParams p;
      p.x_count = c.nx;
      p.y_count = c.ny;
      p.elem_bytes = e;
      if (padded) {
        p.rank = 4;
        const int64_t index_dims[] = {2, 3, 40, 50}, y_dims[] = {2, 3, 41, 57};
        std::copy(index_dims, index_dims + 4, p.index_dims);
        std::copy(y_dims, y_dims + 4, p.y_dims);
      }
      std::vector<uint8_t> want(static_cast<size_t>(c.ny) * e);
      cpu::max_unpool(p, x.data(), indices.data(), want.data());
      DeviceBuffer dx(x.size()), di(indices.size() * 8), dy(want.size());
      dx.upload(x.data(), x.size());
      di.upload(indices.data(), indices.size() * 8);
      cuda::LaunchChoice choice;
      ASSERT_EQ(gpu_test::select(kMaxUnpool, DType::kFloat32, p, &choice), "");
      cuda::StepPointers ptrs = gpu_test::step_pointers({&dx, &di}, dy);
      const std::unique_ptr<DeviceBuffer> ws = gpu_test::workspace_for(choice, &ptrs);
      ASSERT_NE(ws, nullptr);
      for (int run = 0; run < 2; ++run) {
        dy.poison32(gpu_test::kFloatPoison);
        ws->zero();  // what the runtime's memset node does before every launch
        ASSERT_EQ(gpu_test::launch(choice.variant->name, choice, ptrs, p), "");
        EXPECT_TRUE(dy.guard_intact());
        EXPECT_EQ(gpu_test::download_bytes(dy, want.size()), want) << "run " << run;
      }
    }
  }
}

TEST(GpuMaxUnpoolSelect, ElementSizesWorkspaceAndLimits) {
  MaxUnpoolParams p;
  p.x_count = 1000;
  p.y_count = 4000;
  cuda::LaunchChoice c;
  std::string why;
  const cuda::TargetInfo t = gpu_test::target_with(16);
  for (uint32_t e : {2u, 4u, 8u}) {
    p.elem_bytes = e;
    ASSERT_TRUE(cuda::select_kernel(gpu_test::step_of(kMaxUnpool, &p), t, &c, &why)) << why;
    EXPECT_EQ(std::string(c.variant->name), "jp_max_unpool_b" + std::to_string(e));
    EXPECT_TRUE(c.variant->cooperative && c.variant->zero_workspace);
    EXPECT_EQ(c.workspace_bytes, uint64_t(4001) * 4);
    EXPECT_LE(c.grid[0], 16u * 4);  // every block resident at once
  }
  p.elem_bytes = 1;
  EXPECT_FALSE(cuda::select_kernel(gpu_test::step_of(kMaxUnpool, &p), t, &c, &why));
  EXPECT_NE(why.find("2, 4 or 8 bytes"), std::string::npos) << why;
  p.elem_bytes = 4;
  p.y_count = int64_t{1} << 31;
  EXPECT_FALSE(cuda::select_kernel(gpu_test::step_of(kMaxUnpool, &p), t, &c, &why));
  EXPECT_NE(why.find("2^31"), std::string::npos) << why;
}

}  // namespace
}  // namespace jetplan::kernels
