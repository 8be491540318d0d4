// CUDA Rnn (kernels/cuda/rnn.cu) against the CPU twin (kernels/cpu/rnn.cc): RNN, LSTM and GRU,
// forward, reverse and bidirectional, sequence_lens (0, partial, full), initial states,
// peepholes, clip, input_forget, linear_before_reset, both layouts, batch 1, 3 and 8, odd sizes;
// fresh random inputs, outputs poisoned, guards checked. Every case runs each kernel the
// selector can pick: the persistent grid (weights cached in shared memory; uncached; on a
// target of 5 SMs, so blocks own many units and slices cross directions) and the kernel with
// one block per sequence (a target whose SM count is unknown).
// Tolerances: Float32 (the GPU sums in FP32, the twin in double, over the whole recurrence):
// |got - want| <= 1e-5 |want| + 3e-5. Float16 storage (twin on the FP16-rounded inputs; the GPU
// keeps its state in FP32 and rounds each output once): 2e-3 |want| + 1e-3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/kernels.h"
#include "kernels/cuda/rnn_layout.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/rnn_test_params.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
namespace cu = ::jetplan::rt::cu;
constexpr uint16_t kRnn = static_cast<uint16_t>(OpFamilyId::kRnn);

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
    {RnnCell::kLstm, RnnDirection::kBidirectional, false, 9, 8, 40, 101, true, true, true, true, false, false, false, false, RnnActivationKind::kSigmoid},
    {RnnCell::kLstm, RnnDirection::kForward, false, 12, 8, 128, 256, true, false, false, false, false, false, false, false, RnnActivationKind::kSigmoid},
    {RnnCell::kGru, RnnDirection::kBidirectional, false, 6, 2, 24, 45, true, true, true, false, false, false, false, false, RnnActivationKind::kSigmoid},
};

// The kernel configurations each case runs, by the target the selector sees.
enum class Config { kPersistent, kPersistentFewSms, kPersistentUncached, kPerSequence };
const Config kConfigs[] = {Config::kPersistent, Config::kPersistentFewSms,
                           Config::kPersistentUncached, Config::kPerSequence};
const char* config_name(Config c) {
  switch (c) {
    case Config::kPersistent: return "persistent";
    case Config::kPersistentFewSms: return "persistent on 5 SMs";
    case Config::kPersistentUncached: return "persistent, weights uncached";
    case Config::kPerSequence: return "one block per sequence";
  }
  return "";
}

cuda::TargetInfo config_target(Config config, const RnnParams& p, size_t eb) {
  cuda::TargetInfo t = gpu_test::device_target();
  if (config == Config::kPersistentFewSms) t.sm_count = 5;
  if (config == Config::kPerSequence) t.sm_count = 0;
  if (config == Config::kPersistentUncached) {
    const uint64_t units = rnn_num_directions(p) * p.hidden_size;
    const uint32_t grid = static_cast<uint32_t>(std::min<uint64_t>(t.sm_count, units));
    const uint64_t per = static_cast<uint64_t>(cuda::rnn_persist_layout(p, grid, eb).units);
    t.max_shared_per_block = static_cast<uint32_t>(
        cuda::rnn_persist_layout(p, static_cast<uint32_t>((units + per - 1) / per), eb).state_bytes);
  }
  return t;
}

void check(DType dt) {
  SEEDED_RNG(rng);
  const bool f16 = dt == DType::kFloat16;
  const size_t eb = f16 ? 2 : 4;
  for (size_t ci = 0; ci < std::size(kCases); ++ci) {
    const Case& c = kCases[ci];
    RnnParams p = rnn_test_params(c.cell, c.dir, c.S, c.N, c.I, c.H);
    p.batch_major = c.batch_major;
    for (auto& per_dir : p.activations) per_dir[0] = rnn_activation_defaults(c.first);
    const int64_t D = rnn_num_directions(p), G = rnn_gate_count(c.cell), H = c.H;
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
    for (Config config : kConfigs) {
      SCOPED_TRACE(config_name(config));
      DeviceBuffer dy(ny * eb), dh(ns * eb), dc(ns * eb);
      DeviceBuffer* outs[] = {&dy, &dh, &dc};
      for (int o = 0; o < (p.has_y_c ? 3 : 2); ++o) {
        if (f16) {
          outs[o]->poison16(gpu_test::kHalfPoison);
        } else {
          outs[o]->poison32(gpu_test::kFloatPoison);
        }
        ptrs.out[o] = outs[o]->get();
      }
      const cuda::TargetInfo target = config_target(config, p, eb);
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select_and_launch(kRnn, dt, ptrs, p, &chosen, &target), "")
          << "case " << ci;
      const std::string name = chosen.variant->name;
      const bool persistent = name.find("persist") != std::string::npos;
      EXPECT_EQ(persistent, config != Config::kPerSequence) << "case " << ci << ": " << name;
      if (config == Config::kPersistentFewSms) {
        EXPECT_LE(chosen.grid[0], 5u) << "case " << ci;
      }
      if (persistent) {
        const cuda::RnnPersistLayout l = cuda::rnn_persist_layout(p, chosen.grid[0], eb);
        // The weight rows are cached whenever they fit (on 5 SMs, a block's rows may not).
        const bool fits = l.cached_bytes <= target.max_shared_per_block;
        EXPECT_EQ(chosen.shared_bytes, fits ? l.cached_bytes : l.state_bytes) << "case " << ci;
        if (config == Config::kPersistentUncached) {
          EXPECT_FALSE(fits) << "case " << ci;
        }
      }
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
}

TEST(GpuRnn, Float32MatchesCpuTwin) { GPU_TEST_OR_SKIP(); check(DType::kFloat32); }
TEST(GpuRnn, Float16MatchesCpuTwin) { GPU_TEST_OR_SKIP(); check(DType::kFloat16); }

// Timing only (run with --gtest_also_run_disabled_tests): FP16 LSTMs, each kernel the selector
// can pick (the persistent one's launches include clearing its workspace, as the runtime does).
TEST(GpuRnnBench, DISABLED_Lstm) {
  GPU_TEST_OR_SKIP();
  struct Shape { RnnDirection dir; int64_t S, N, I, H; };
  const Shape shapes[] = {{RnnDirection::kBidirectional, 32, 8, 256, 128},
                          {RnnDirection::kBidirectional, 32, 8, 256, 256},
                          {RnnDirection::kForward, 64, 1, 128, 256},
                          {RnnDirection::kForward, 64, 8, 256, 256}};
  for (const Shape& sh : shapes) {
    RnnParams p;
    p.cell = RnnCell::kLstm;
    p.direction = sh.dir;
    p.seq_length = sh.S;
    p.batch = sh.N;
    p.input_size = sh.I;
    p.hidden_size = sh.H;
    for (int dd = 0; dd < 2; ++dd)
      for (int k = 0; k < 3; ++k)
        p.activations[dd][k] = rnn_activation_defaults(rnn_default_activation(p.cell, k));
    p.has_bias = true;
    p.has_y = true;
    const int64_t D = rnn_num_directions(p), S = sh.S, N = sh.N, I = sh.I, H = sh.H;
    DeviceBuffer dx(S * N * I * 2), dw(D * 4 * H * I * 2), dr(D * 4 * H * H * 2),
        db(D * 8 * H * 2), dy(S * D * N * H * 2);
    std::vector<uint16_t> small(D * 4 * H * std::max(H, I), 0x2400);  // 1/64
    dx.upload(small.data(), dx.bytes());
    dw.upload(small.data(), dw.bytes());
    dr.upload(small.data(), dr.bytes());
    db.upload(small.data(), db.bytes());
    for (Config config : {Config::kPersistent, Config::kPerSequence}) {
      cuda::StepPointers ptrs = gpu_test::step_pointers({&dx, &dw, &dr, &db}, dy);
      const cuda::TargetInfo target = config_target(config, p, 2);
      cuda::LaunchChoice l;
      ASSERT_EQ(gpu_test::select(kRnn, DType::kFloat16, p, &l, &target), "");
      const std::unique_ptr<DeviceBuffer> workspace = gpu_test::workspace_for(l, &ptrs);
      gpu_test::RepeatLaunch go;
      ASSERT_EQ(gpu_test::repeat_launch(l, ptrs, p, &go), "");
      const double us = gpu_test::mean_us(3, 20, [&] { return go(); });
      std::printf("%s: %s LSTM S=%ld N=%ld I=%ld H=%ld, %s (%s, grid %u, %u B shared): %.1f us\n",
                  gpu_test::device()->info.name, D == 2 ? "bidirectional" : "forward",
                  static_cast<long>(S), static_cast<long>(N), static_cast<long>(I),
                  static_cast<long>(H), config_name(config), l.variant->name, l.grid[0],
                  l.shared_bytes, us);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
