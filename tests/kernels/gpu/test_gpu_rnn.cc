// CUDA Rnn (kernels/cuda/rnn.cu) against the CPU twin (kernels/cpu/rnn.cc): RNN, LSTM and GRU,
// forward, reverse and bidirectional, sequence_lens (0, partial, full), initial states,
// peepholes, clip, input_forget, linear_before_reset, both layouts, batch 1, 3 and 8, odd sizes;
// fresh random inputs, outputs poisoned, guards checked.
// Tolerances: Float32 (the GPU sums in FP32, the twin in double, over the whole recurrence):
// |got - want| <= 1e-5 |want| + 3e-5. Float16 storage (twin on the FP16-rounded inputs; the GPU
// keeps its state in FP32 and rounds each output once): 2e-3 |want| + 1e-3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/cpu/seq_quant_ops.h"
#include "tests/kernels/gpu/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
namespace cu = ::jetplan::rt::cu;
constexpr uint16_t kRnn = 29;

struct Case {
  RnnCell cell;
  RnnDirection dir;
  bool batch_major;
  int64_t S, N, I, H;
  bool bias, lens, init_h, init_c, peep, clip, input_forget, lbr;
  RnnActivationKind first;  // activation f (others default)
};

const Case kCases[] = {
    {RnnCell::kLstm, RnnDirection::kForward, false, 5, 1, 7, 9, true, false, true, true, true, false, false, false, RnnActivationKind::kSigmoid},
    {RnnCell::kLstm, RnnDirection::kBidirectional, true, 6, 8, 5, 17, true, true, true, true, false, true, true, false, RnnActivationKind::kSigmoid},
    {RnnCell::kLstm, RnnDirection::kReverse, false, 4, 8, 64, 128, true, true, false, false, true, false, false, false, RnnActivationKind::kHardSigmoid},
    {RnnCell::kGru, RnnDirection::kReverse, false, 7, 3, 6, 11, true, true, true, false, false, false, false, false, RnnActivationKind::kSigmoid},
    {RnnCell::kGru, RnnDirection::kBidirectional, true, 5, 8, 9, 33, true, false, true, false, false, true, false, true, RnnActivationKind::kSigmoid},
    {RnnCell::kGru, RnnDirection::kForward, false, 3, 1, 40, 70, false, false, false, false, false, false, false, false, RnnActivationKind::kSigmoid},
    {RnnCell::kRnn, RnnDirection::kBidirectional, false, 6, 8, 3, 13, true, true, true, false, false, false, false, false, RnnActivationKind::kTanh},
    {RnnCell::kRnn, RnnDirection::kForward, true, 4, 3, 5, 7, true, false, false, false, false, false, false, false, RnnActivationKind::kLeakyRelu},
};

void check(DType dt) {
  SEEDED_RNG(rng);
  const bool f16 = dt == DType::kFloat16;
  const size_t eb = f16 ? 2 : 4;
  for (size_t ci = 0; ci < std::size(kCases); ++ci) {
    const Case& c = kCases[ci];
    RnnParams p;
    p.cell = c.cell;
    p.direction = c.dir;
    p.batch_major = c.batch_major;
    p.seq_length = c.S;
    p.batch = c.N;
    p.input_size = c.I;
    p.hidden_size = c.H;
    const int64_t D = rnn_num_directions(p), G = rnn_gate_count(c.cell), H = c.H;
    for (int d = 0; d < 2; ++d)
      for (int k = 0; k < rnn_activation_count(c.cell); ++k)
        p.activations[d][k] = rnn_activation_defaults(k == 0 ? c.first : rnn_default_activation(c.cell, k));
    p.has_clip = c.clip;
    p.clip = 0.8f;
    p.input_forget = c.input_forget;
    p.linear_before_reset = c.lbr;
    p.has_bias = c.bias;
    p.has_sequence_lens = c.lens;
    p.has_initial_h = c.init_h;
    p.has_initial_c = c.init_c;
    p.has_peepholes = c.peep;
    p.has_y = true;
    p.has_y_h = true;
    p.has_y_c = c.cell == RnnCell::kLstm;
    auto gen = [&](int64_t n, float a) {
      std::vector<float> v = rng.uniform(n, -a, a);
      return f16 ? gpu_test::round_half(v) : v;
    };
    const std::vector<float> x = gen(c.S * c.N * c.I, 1.f), w = gen(D * G * H * c.I, 0.4f),
                             r = gen(D * G * H * H, 0.4f), b = gen(D * 2 * G * H, 0.5f),
                             h0 = gen(D * c.N * H, 1.f), c0 = gen(D * c.N * H, 1.f),
                             peep = gen(D * 3 * H, 0.5f);
    std::vector<int32_t> lens(c.N);
    for (int64_t n = 0; n < c.N; ++n)
      lens[n] = n == 0 ? static_cast<int32_t>(c.S) : (n == 1 ? 0 : static_cast<int32_t>(rng.integer(1, c.S)));
    const int64_t ny = c.S * D * c.N * H, ns = D * c.N * H;
    std::vector<float> want_y(ny), want_h(ns), want_c(ns);
    std::vector<double> ws(cpu::rnn_workspace_bytes(p) / sizeof(double) + 1);
    cpu::rnn(p, x.data(), w.data(), r.data(), c.bias ? b.data() : nullptr, c.lens ? lens.data() : nullptr,
             c.init_h ? h0.data() : nullptr, c.init_c ? c0.data() : nullptr, c.peep ? peep.data() : nullptr,
             want_y.data(), want_h.data(), p.has_y_c ? want_c.data() : nullptr, ws.data());

    std::vector<std::unique_ptr<DeviceBuffer>> bufs;
    cuda::StepPointers ptrs{};
    int next = 0;
    auto add = [&](const std::vector<float>& v) {
      bufs.push_back(std::make_unique<DeviceBuffer>(v.size() * eb));
      if (f16) bufs.back()->upload(gpu_test::to_half(v).data(), v.size() * eb);
      else bufs.back()->upload(v.data(), v.size() * eb);
      ptrs.in[next++] = bufs.back()->get();
    };
    add(x);
    add(w);
    add(r);
    if (c.bias) add(b);
    if (c.lens) {
      bufs.push_back(std::make_unique<DeviceBuffer>(lens.size() * 4));
      bufs.back()->upload(lens.data(), lens.size() * 4);
      ptrs.in[next++] = bufs.back()->get();
    }
    if (c.init_h) add(h0);
    if (c.init_c) add(c0);
    if (c.peep) add(peep);
    DeviceBuffer dy(ny * eb), dh(ns * eb), dc(ns * eb);
    DeviceBuffer* outs[] = {&dy, &dh, &dc};
    for (int o = 0; o < (p.has_y_c ? 3 : 2); ++o) {
      if (f16) outs[o]->poison16(gpu_test::kHalfPoison);
      else outs[o]->poison32(gpu_test::kFloatPoison);
      ptrs.out[o] = outs[o]->get();
    }
    ASSERT_EQ(gpu_test::select_and_launch(kRnn, dt, ptrs, p), "") << "case " << ci;
    const std::vector<float>* wants[] = {&want_y, &want_h, &want_c};
    const double rel = f16 ? 2e-3 : 1e-5, abs = f16 ? 1e-3 : 3e-5;
    for (int o = 0; o < (p.has_y_c ? 3 : 2); ++o) {
      const std::vector<float>& want = *wants[o];
      const std::vector<uint8_t> all = outs[o]->download_all();
      std::vector<float> got(want.size());
      if (f16) {
        std::vector<uint16_t> hv(want.size());
        std::memcpy(hv.data(), all.data(), hv.size() * 2);
        got = gpu_test::from_half(hv);
      } else {
        std::memcpy(got.data(), all.data(), got.size() * 4);
      }
      for (size_t i = 0; i < want.size(); ++i) {
        if (!(std::fabs(double(got[i]) - want[i]) <= abs + rel * std::fabs(want[i]))) {
          ADD_FAILURE() << "case " << ci << " output " << o << " element " << i << ": got "
                        << got[i] << ", want " << want[i];
          break;
        }
      }
      EXPECT_TRUE(outs[o]->guard_intact()) << "case " << ci << " output " << o;
    }
  }
}

TEST(GpuRnn, Float32MatchesCpuTwin) { GPU_TEST_OR_SKIP(); check(DType::kFloat32); }
TEST(GpuRnn, Float16MatchesCpuTwin) { GPU_TEST_OR_SKIP(); check(DType::kFloat16); }

// Timing only (run with --gtest_also_run_disabled_tests): a bidirectional LSTM, FP16.
TEST(GpuRnnBench, DISABLED_Lstm) {
  GPU_TEST_OR_SKIP();
  const cu::Driver& d = *gpu_test::device()->d;
  for (int64_t H : {128, 256}) {
    RnnParams p;
    p.cell = RnnCell::kLstm;
    p.direction = RnnDirection::kBidirectional;
    p.seq_length = 32;
    p.batch = 8;
    p.input_size = 256;
    p.hidden_size = H;
    for (int dd = 0; dd < 2; ++dd)
      for (int k = 0; k < 3; ++k)
        p.activations[dd][k] = rnn_activation_defaults(rnn_default_activation(p.cell, k));
    p.has_bias = true;
    p.has_y = true;
    const int64_t S = 32, N = 8, I = 256;
    DeviceBuffer dx(S * N * I * 2), dw(2 * 4 * H * I * 2), dr(2 * 4 * H * H * 2),
        db(2 * 8 * H * 2), dy(S * 2 * N * H * 2);
    std::vector<uint16_t> small(2 * 4 * H * std::max(H, I), 0x2400);  // 1/64
    dx.upload(small.data(), dx.bytes());
    dw.upload(small.data(), dw.bytes());
    dr.upload(small.data(), dr.bytes());
    db.upload(small.data(), db.bytes());
    cuda::StepPointers ptrs{};
    ptrs.in[0] = dx.get();
    ptrs.in[1] = dw.get();
    ptrs.in[2] = dr.get();
    ptrs.in[3] = db.get();
    ptrs.out[0] = dy.get();
    cuda::LaunchChoice l;
    ASSERT_EQ(gpu_test::select_and_launch(kRnn, DType::kFloat16, ptrs, p, &l), "");
    cu::CUfunction fn = nullptr;
    ASSERT_EQ(gpu_test::device()->modules.function(l.variant->name, &fn), JP_OK);
    void* args[] = {&ptrs, &p};
    cu::CUevent start = nullptr, stop = nullptr;
    ASSERT_EQ(d.EventCreate(&start, cu::kEventDefault), cu::kSuccess);
    ASSERT_EQ(d.EventCreate(&stop, cu::kEventDefault), cu::kSuccess);
    const auto go = [&] {
      return d.LaunchKernel(fn, l.grid[0], 1, 1, l.block[0], 1, 1, l.shared_bytes, nullptr, args,
                            nullptr);
    };
    for (int i = 0; i < 3; ++i) ASSERT_EQ(go(), cu::kSuccess);
    const int reps = 20;
    ASSERT_EQ(d.EventRecord(start, nullptr), cu::kSuccess);
    for (int i = 0; i < reps; ++i) ASSERT_EQ(go(), cu::kSuccess);
    ASSERT_EQ(d.EventRecord(stop, nullptr), cu::kSuccess);
    ASSERT_EQ(d.EventSynchronize(stop), cu::kSuccess);
    float ms = 0.f;
    ASSERT_EQ(d.EventElapsedTime(&ms, start, stop), cu::kSuccess);
    std::printf("%s: bidirectional LSTM S=32 N=8 I=256 H=%ld: %.1f us\n",
                gpu_test::device()->info.name, static_cast<long>(H), 1e3 * ms / reps);
    (void)d.EventDestroy(start);
    (void)d.EventDestroy(stop);
  }
}

}  // namespace
}  // namespace jetplan::kernels
