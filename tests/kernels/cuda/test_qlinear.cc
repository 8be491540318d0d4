// CUDA QLinearMatMul and QLinearConv (kernels/cuda/qlinear_matmul.cu, qlinear_conv.cu) against
// their CPU twins (cpu::qlinear_matmul, cpu::qlinear_conv) bit for bit: every combination of
// Int8 and UInt8 operands and output, per-tensor and per-row/column/channel scales and zero
// points, broadcast batches; convs in 1, 2 and 3 spatial dims with groups (depthwise included),
// strides, dilations, asymmetric pads and an int32 bias. Random integers over the whole range
// (so outputs saturate at both ends), outputs poisoned, guards checked.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

// n random elements of t's range (Int8 or UInt8), as bytes.
std::vector<uint8_t> random_q(test_util::SeededRng& rng, DType t, int64_t n) {
  std::vector<uint8_t> v(static_cast<size_t>(n));
  for (uint8_t& e : v)
    e = t == DType::kInt8 ? static_cast<uint8_t>(static_cast<int8_t>(rng.integer(-128, 127)))
                          : static_cast<uint8_t>(rng.integer(0, 255));
  return v;
}

std::unique_ptr<DeviceBuffer> upload_bytes(const void* data, size_t n) {
  auto b = std::make_unique<DeviceBuffer>(n == 0 ? 1 : n);
  if (n > 0) b->upload(data, n);
  return b;
}

TEST(GpuQLinearMatMul, MatchesCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { int64_t batch, M, N, K; bool a_broadcast, b_broadcast, a_row, b_col; };
  const Case cases[] = {{1, 7, 5, 13, false, false, false, false},
                        {3, 16, 33, 64, false, true, true, true},
                        {2, 1, 9, 300, true, false, false, true},
                        {4, 31, 17, 8, false, false, true, false}};
  const DType types[] = {DType::kInt8, DType::kUInt8};
  for (const Case& c : cases)
    for (DType at : types)
      for (DType bt : types)
        for (DType yt : types) {
          QLinearMatMulParams p;
          p.batch = c.batch;
          p.M = c.M;
          p.N = c.N;
          p.K = c.K;
          p.a_batch_stride = c.a_broadcast ? 0 : c.M * c.K;
          p.b_batch_stride = c.b_broadcast ? 0 : c.K * c.N;
          p.a_type = at;
          p.b_type = bt;
          p.y_type = yt;
          p.a_per_row = c.a_row;
          p.b_per_column = c.b_col;
          const auto a = random_q(rng, at, (c.a_broadcast ? 1 : c.batch) * c.M * c.K);
          const auto b = random_q(rng, bt, (c.b_broadcast ? 1 : c.batch) * c.K * c.N);
          const int64_t na = c.a_row ? c.M : 1, nb = c.b_col ? c.N : 1;
          const std::vector<float> as = rng.uniform(na, 0.002f, 0.05f),
                                   bs = rng.uniform(nb, 0.002f, 0.05f);
          const auto azp = random_q(rng, at, na), bzp = random_q(rng, bt, nb),
                     yzp = random_q(rng, yt, 1);
          const float ys = rng.uniform(0.05f, 2.f);
          const size_t ny = static_cast<size_t>(c.batch * c.M * c.N);
          std::vector<uint8_t> want(ny, 0x5a);
          cpu::qlinear_matmul(p, a.data(), as.data(), azp.data(), b.data(), bs.data(), bzp.data(),
                              &ys, yzp.data(), want.data());
          const auto da = upload_bytes(a.data(), a.size()), db = upload_bytes(b.data(), b.size());
          const auto das = gpu_test::to_device(as, DType::kFloat32),
                     dbs = gpu_test::to_device(bs, DType::kFloat32),
                     dys = gpu_test::to_device({ys}, DType::kFloat32);
          const auto dazp = upload_bytes(azp.data(), azp.size()),
                     dbzp = upload_bytes(bzp.data(), bzp.size()),
                     dyzp = upload_bytes(yzp.data(), yzp.size());
          DeviceBuffer dy(ny);
          dy.poison16(0xA5A5);
          cuda::StepPointers ptrs{};
          const DeviceBuffer* in[] = {da.get(), das.get(), dazp.get(), db.get(),
                                      dbs.get(), dbzp.get(), dys.get(),  dyzp.get()};
          for (int i = 0; i < 8; ++i) ptrs.in[i] = in[i]->get();
          ptrs.out[0] = dy.get();
          cuda::LaunchChoice chosen;
          ASSERT_EQ(gpu_test::select_and_launch(
                        static_cast<uint16_t>(OpFamilyId::kQLinearMatMul), at, ptrs, p, &chosen),
                    "");
          EXPECT_STREQ(chosen.variant->name, "jp_qlinear_matmul");
          const std::string label = std::to_string(c.batch) + "x" + std::to_string(c.M) + "x" +
                                    std::to_string(c.N) + "x" + std::to_string(c.K) + " types " +
                                    std::to_string(int(at)) + std::to_string(int(bt)) +
                                    std::to_string(int(yt));
          EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, ny), want), -1)
              << label;
          EXPECT_TRUE(dy.guard_intact()) << label;
        }
}

TEST(GpuQLinearConv, MatchesCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case {
    int rank;
    int64_t batch, cin, cout, groups;
    int64_t in[3], kernel[3], stride[3], dilation[3], pad_begin[3], pad_end[3];
    bool bias, per_channel;
  };
  const Case cases[] = {
      {2, 2, 8, 16, 1, {9, 11}, {3, 3}, {1, 2}, {1, 1}, {1, 0}, {1, 2}, true, true},
      {2, 1, 12, 12, 12, {7, 7}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, false, true},
      {1, 3, 6, 4, 2, {20}, {5}, {2}, {1}, {2}, {1}, true, false},
      {3, 1, 4, 6, 1, {4, 5, 6}, {2, 3, 3}, {1, 1, 2}, {1, 1, 1}, {0, 1, 1}, {1, 1, 0}, true,
       true},
  };
  const DType types[] = {DType::kInt8, DType::kUInt8};
  for (const Case& c : cases)
    for (DType xt : types)
      for (DType wt : types)
        for (DType yt : types) {
          QLinearConvParams q;
          ConvParams& p = q.conv;
          p.spatial_rank = c.rank;
          p.batch = c.batch;
          p.in_channels = c.cin;
          p.out_channels = c.cout;
          p.groups = c.groups;
          int64_t in_volume = 1, out_volume = 1, k_volume = 1;
          for (int d = 0; d < c.rank; ++d) {
            p.in_size[d] = c.in[d];
            p.kernel[d] = c.kernel[d];
            p.stride[d] = c.stride[d];
            p.dilation[d] = c.dilation[d];
            p.pad_begin[d] = c.pad_begin[d];
            p.out_size[d] = (c.in[d] + c.pad_begin[d] + c.pad_end[d] -
                             c.dilation[d] * (c.kernel[d] - 1) - 1) / c.stride[d] + 1;
            in_volume *= c.in[d];
            out_volume *= p.out_size[d];
            k_volume *= c.kernel[d];
          }
          p.has_bias = c.bias;
          q.x_type = xt;
          q.w_type = wt;
          q.y_type = yt;
          q.w_per_channel = c.per_channel;
          const auto x = random_q(rng, xt, c.batch * c.cin * in_volume);
          const auto w = random_q(rng, wt, c.cout * (c.cin / c.groups) * k_volume);
          const int64_t nw = c.per_channel ? c.cout : 1;
          const std::vector<float> ws = rng.uniform(nw, 0.002f, 0.05f);
          const float xs = rng.uniform(0.002f, 0.05f), ys = rng.uniform(0.05f, 2.f);
          const auto xzp = random_q(rng, xt, 1), wzp = random_q(rng, wt, nw),
                     yzp = random_q(rng, yt, 1);
          std::vector<int32_t> bias(static_cast<size_t>(c.cout));
          for (int32_t& e : bias) e = static_cast<int32_t>(rng.integer(-20000, 20000));
          const size_t ny = static_cast<size_t>(c.batch * c.cout * out_volume);
          std::vector<uint8_t> want(ny, 0x5a);
          cpu::qlinear_conv(q, x.data(), &xs, xzp.data(), w.data(), ws.data(), wzp.data(), &ys,
                            yzp.data(), c.bias ? bias.data() : nullptr, want.data());
          const auto dx = upload_bytes(x.data(), x.size()), dw = upload_bytes(w.data(), w.size());
          const auto dxs = gpu_test::to_device({xs}, DType::kFloat32),
                     dws = gpu_test::to_device(ws, DType::kFloat32),
                     dys = gpu_test::to_device({ys}, DType::kFloat32);
          const auto dxzp = upload_bytes(xzp.data(), 1), dwzp = upload_bytes(wzp.data(), wzp.size()),
                     dyzp = upload_bytes(yzp.data(), 1);
          const auto dbias = upload_bytes(bias.data(), bias.size() * 4);
          DeviceBuffer dy(ny);
          dy.poison16(0xA5A5);
          cuda::StepPointers ptrs{};
          const DeviceBuffer* in[] = {dx.get(),  dxs.get(), dxzp.get(), dw.get(),   dws.get(),
                                      dwzp.get(), dys.get(), dyzp.get(), dbias.get()};
          for (int i = 0; i < 9; ++i) ptrs.in[i] = in[i]->get();
          ptrs.out[0] = dy.get();
          cuda::LaunchChoice chosen;
          ASSERT_EQ(gpu_test::select_and_launch(
                        static_cast<uint16_t>(OpFamilyId::kQLinearConv), xt, ptrs, q, &chosen),
                    "");
          EXPECT_STREQ(chosen.variant->name, "jp_qlinear_conv");
          const std::string label = "rank " + std::to_string(c.rank) + " groups " +
                                    std::to_string(c.groups) + " types " +
                                    std::to_string(int(xt)) + std::to_string(int(wt)) +
                                    std::to_string(int(yt));
          EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, ny), want), -1)
              << label;
          EXPECT_TRUE(dy.guard_intact()) << label;
        }
}

}  // namespace
}  // namespace jetplan::kernels
