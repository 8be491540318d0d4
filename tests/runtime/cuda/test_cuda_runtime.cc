// The CUDA backend through the C API, on small hand-built GPU plans: binding at load (SM check,
// kernel lookup, launch and dtype checks), contexts run with and without the CUDA graph, enqueue
// and synchronize, two contexts at once, device I/O, GPU time, per-step profile, and the load
// errors a corrupt or foreign plan gets; the frame preprocessor and the detector post-processing
// on a CUDA context. Without a GPU every test skips, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"
#include "runtime/src/cuda/cuda_driver.h"
#include "tests/runtime/load_checks.h"
#include "tests/runtime/plan_builder.h"

namespace jetplan::testing {
namespace {

// The SM of GPU 0, or 0 (with `why`) when there is none.
int device_sm(std::string* why) {
  const rt::cu::Driver* d = nullptr;
  if (rt::cu::driver(&d) != JP_OK) {
    *why = jp_last_error();
    return 0;
  }
  rt::cu::DeviceInfo info;
  if (rt::cu::device_info(*d, 0, &info) != JP_OK) {
    *why = jp_last_error();
    return 0;
  }
  return info.sm_arch;
}

#define SKIP_WITHOUT_GPU(sm)                                          \
  std::string why_;                                                   \
  const int sm = device_sm(&why_);                                    \
  if (sm == 0) GTEST_SKIP() << "CUDA runtime test skipped: " << why_

fb::LaunchConfig launch_1d(uint32_t blocks, uint32_t threads) {
  return fb::LaunchConfig(blocks, 1, 1, threads, 1, 1, 0, 1);
}

// x (float32 [2,3,4,5], or `shape`) -> Cast to FP16 -> Relu -> Cast back -> y.
PlanSpec relu_plan(int sm, const std::vector<int64_t>& shape = {2, 3, 4, 5}) {
  PlanSpec spec;
  spec.backend = fb::Backend::CUDA;
  spec.sm_arch = static_cast<uint32_t>(sm);
  uint64_t half_bytes = 2;
  for (int64_t d : shape) half_bytes *= static_cast<uint64_t>(d);
  const uint64_t second = (half_bytes + 255) / 256 * 256;
  spec.tensors = {{"x", shape, fb::Storage::Binding, 0, 0, fb::DType::Float32},
                  {"xh", shape, fb::Storage::Arena, 0, -1, fb::DType::Float16},
                  {"yh", shape, fb::Storage::Arena, second, -1, fb::DType::Float16},
                  {"y", shape, fb::Storage::Binding, 0, 0, fb::DType::Float32}};
  spec.inputs = {{"x", 0}};
  spec.outputs = {{"y", 3}};
  spec.arena_bytes = 2 * second;
  StepSpec to_half = step_spec("to_half", fb::OpFamily::Cast, {0}, {1});
  to_half.params = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::CastParams, fb::CreateCastParams(b).Union());
  };
  to_half.kernel = "jp_cast_f32_f16";
  to_half.launch = launch_1d(2, 128);
  StepSpec relu = relu_step(1, 2);
  relu.kernel = "jp_activation_f16";
  relu.launch = launch_1d(1, 64);  // fewer threads than elements: the kernel strides
  StepSpec to_float = to_half;
  to_float.name = "to_float";
  to_float.inputs = {2};
  to_float.outputs = {3};
  to_float.kernel = "jp_cast_f16_f32";
  to_float.launch = launch_1d(3, 32);
  spec.steps = {to_half, relu, to_float};
  return spec;
}

std::vector<float> input() {
  std::vector<float> x(120);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i)) * 3.f;
  return x;
}

void expect_relu(const std::vector<float>& x, const float* y) {
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = x[i] > 0 ? x[i] : 0.f;
    EXPECT_NEAR(y[i], want, 2e-3f * std::fabs(want) + 1e-6f) << "element " << i;
  }
}

jp_plan* load(const PlanSpec& spec) { return load_plan_bytes(build_plan(spec)); }

void expect_load_error(const PlanSpec& spec, jp_status status, const std::string& needle) {
  expect_refused(build_plan(spec), status, needle);
}

TEST(CudaRuntime, RunsWithAndWithoutTheGraph) {
  SKIP_WITHOUT_GPU(sm);
  jp_plan* plan = load(relu_plan(sm));
  ASSERT_NE(plan, nullptr);
  EXPECT_NE(std::string(jp_plan_device_name(plan)), "");
  const std::vector<float> x = input();
  for (uint32_t flags : {0u, static_cast<uint32_t>(JP_CONTEXT_NO_CUDA_GRAPH)}) {
    jp_context_options options{};
    options.flags = flags;
    jp_context* ctx = nullptr;
    ASSERT_EQ(jp_context_create(plan, &options, &ctx), JP_OK) << jp_last_error();
    float ms = 0.f;
    EXPECT_EQ(jp_context_gpu_time_ms(ctx, &ms), JP_ERROR_NOT_FOUND);
    ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
    // An observer sees each tensor every step writes, copied from the GPU after the step (the
    // steps launched one by one): the last is the output, the ReLU of x. Cleared, the runs below
    // replay the graph again.
    struct Seen {
      std::vector<int32_t> steps;
      std::vector<std::vector<uint8_t>> data;
    } seen;
    auto observer = [](void* user, int32_t step, const char* name, jp_dtype dtype,
                       const int64_t* dims, int32_t rank, const void* data) {
      auto* s = static_cast<Seen*>(user);
      size_t n = name != nullptr && name[0] != '\0' ? 1 : 0;
      for (int32_t k = 0; k < rank; ++k) n *= static_cast<size_t>(dims[k]);
      const auto* b = static_cast<const uint8_t*>(data);
      s->steps.push_back(step);
      s->data.emplace_back(b, b + n * (dtype == JP_FLOAT16 ? 2 : 4));
    };
    ASSERT_EQ(jp_context_set_step_observer(ctx, observer, &seen), JP_OK) << jp_last_error();
    ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
    ASSERT_EQ(seen.steps, (std::vector<int32_t>{0, 1, 2}));
    ASSERT_EQ(seen.data.back().size(), x.size() * 4);
    expect_relu(x, reinterpret_cast<const float*>(seen.data.back().data()));
    ASSERT_EQ(jp_context_set_step_observer(ctx, nullptr, nullptr), JP_OK);
    for (int run = 0; run < 3; ++run) {
      ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
      const void* y = nullptr;
      size_t bytes = 0;
      ASSERT_EQ(jp_context_get_output(ctx, 0, &y, &bytes), JP_OK);
      ASSERT_EQ(bytes, x.size() * 4);
      expect_relu(x, static_cast<const float*>(y));
    }
    EXPECT_EQ(jp_context_gpu_time_ms(ctx, &ms), JP_OK);
    EXPECT_GT(ms, 0.f);
    std::vector<float> steps(3, -1.f);
    ASSERT_EQ(jp_context_profile_steps(ctx, steps.data(), 3), JP_OK) << jp_last_error();
    for (float t : steps) EXPECT_TRUE(t >= 0.f && std::isfinite(t));
    jp_context_destroy(ctx);
  }
  jp_step_desc desc;
  ASSERT_EQ(jp_plan_step_desc(plan, 1, &desc), JP_OK);
  EXPECT_STREQ(desc.op, "Activation");
  EXPECT_STREQ(desc.kernel, "jp_activation_f16");
  jp_plan_destroy(plan);
}

TEST(CudaRuntime, TwoContextsRunAtOnceOnTheirOwnStreams) {
  SKIP_WITHOUT_GPU(sm);
  jp_plan* plan = load(relu_plan(sm));
  ASSERT_NE(plan, nullptr);
  std::vector<float> a = input(), b = input();
  for (float& v : b) v = -v;
  jp_context *ca = nullptr, *cb = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ca), JP_OK);
  ASSERT_EQ(jp_context_create(plan, nullptr, &cb), JP_OK);
  ASSERT_EQ(jp_context_set_input(ca, 0, a.data(), a.size() * 4), JP_OK);
  ASSERT_EQ(jp_context_set_input(cb, 0, b.data(), b.size() * 4), JP_OK);
  ASSERT_EQ(jp_context_enqueue(ca), JP_OK);
  ASSERT_EQ(jp_context_enqueue(cb), JP_OK);
  ASSERT_EQ(jp_context_synchronize(cb), JP_OK);
  ASSERT_EQ(jp_context_synchronize(ca), JP_OK);
  const void *ya = nullptr, *yb = nullptr;
  ASSERT_EQ(jp_context_get_output(ca, 0, &ya, nullptr), JP_OK);
  ASSERT_EQ(jp_context_get_output(cb, 0, &yb, nullptr), JP_OK);
  expect_relu(a, static_cast<const float*>(ya));
  expect_relu(b, static_cast<const float*>(yb));
  jp_context_destroy(ca);
  jp_context_destroy(cb);
  jp_plan_destroy(plan);
}

// An arena larger than any GPU: context creation fails with JP_ERROR_OUT_OF_MEMORY naming the
// arena, returns no context, leaves GPU memory as it was (20 tries), and the plan still makes
// working contexts afterwards.
TEST(CudaRuntime, OutOfDeviceMemoryIsAStatusAndLeaksNothing) {
  SKIP_WITHOUT_GPU(sm);
  PlanSpec spec = relu_plan(sm);
  spec.arena_bytes = uint64_t{1} << 44;  // 16 TiB
  jp_plan* huge = load(spec);
  ASSERT_NE(huge, nullptr);
  const rt::cu::Driver* d = nullptr;
  ASSERT_EQ(rt::cu::driver(&d), JP_OK);
  auto free_bytes = [&] {
    size_t free = 0, total = 0;
    EXPECT_EQ(d->MemGetInfo(&free, &total), 0);  // load made the plan's context current
    return free;
  };
  auto expect_oom = [&] {
    jp_context* ctx = reinterpret_cast<jp_context*>(0x1);
    EXPECT_EQ(jp_context_create(huge, nullptr, &ctx), JP_ERROR_OUT_OF_MEMORY) << jp_last_error();
    EXPECT_EQ(ctx, nullptr);
    EXPECT_NE(std::string(jp_last_error()).find("allocating the 17592186044416-byte arena in GPU "
                                                "memory"),
              std::string::npos)
        << jp_last_error();
  };
  expect_oom();
  const size_t before = free_bytes();
  for (int i = 0; i < 20; ++i) expect_oom();
  const size_t after = free_bytes();
  EXPECT_LE(before - std::min(before, after), size_t{1} << 20)
      << "GPU memory free before " << before << ", after 20 failed contexts " << after;
  jp_plan_destroy(huge);

  jp_plan* plan = load(relu_plan(sm));
  ASSERT_NE(plan, nullptr);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  const std::vector<float> x = input();
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
  ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  const void* y = nullptr;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &y, nullptr), JP_OK);
  expect_relu(x, static_cast<const float*>(y));
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(CudaRuntime, DeviceIoKeepsBindingsOnTheGpu) {
  SKIP_WITHOUT_GPU(sm);
  jp_plan* plan = load(relu_plan(sm));
  ASSERT_NE(plan, nullptr);
  jp_context_options options{};
  options.flags = JP_CONTEXT_DEVICE_IO;
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, &options, &ctx), JP_OK) << jp_last_error();
  void *din = nullptr, *dout = nullptr;
  EXPECT_EQ(jp_context_device_input(ctx, 0, &din), JP_OK);
  EXPECT_EQ(jp_context_device_output(ctx, 0, &dout), JP_OK);
  EXPECT_NE(din, nullptr);
  EXPECT_NE(dout, nullptr);
  EXPECT_NE(din, dout);
  EXPECT_EQ(jp_context_device_input(ctx, 1, &din), JP_ERROR_INVALID_ARGUMENT);
  const std::vector<float> x = input();
  EXPECT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("JP_CONTEXT_DEVICE_IO"), std::string::npos);
  EXPECT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  const void* y = nullptr;
  EXPECT_EQ(jp_context_get_output(ctx, 0, &y, nullptr), JP_ERROR_INVALID_ARGUMENT);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(CudaRuntime, RefusesForeignOrCorruptSteps) {
  SKIP_WITHOUT_GPU(sm);
  PlanSpec spec = relu_plan(sm);
  spec.sm_arch = static_cast<uint32_t>(sm == 87 ? 90 : 87);
  expect_load_error(spec, JP_ERROR_UNSUPPORTED, "the plan was built for sm_");
  spec = relu_plan(sm);
  spec.steps[1].kernel = "jp_activation_f16_from_the_future";
  expect_load_error(spec, JP_ERROR_UNSUPPORTED, "which this libjetplan does not have");
  spec = relu_plan(sm);
  spec.steps[1].kernel = "jp_binary_f16";
  expect_load_error(spec, JP_ERROR_INVALID_PLAN, "of another op family");
  spec = relu_plan(sm);
  spec.steps[1].kernel = "";
  expect_load_error(spec, JP_ERROR_INVALID_PLAN, "names no CUDA kernel");
  spec = relu_plan(sm);
  spec.steps[1].kernel = "jp_activation_f32";  // would read and write 4-byte elements
  expect_load_error(spec, JP_ERROR_INVALID_PLAN, "reads Float32 and writes Float32");
  spec = relu_plan(sm);
  spec.steps[0].kernel = "jp_cast_f16_f32";  // the wrong direction: writes past 'xh'
  expect_load_error(spec, JP_ERROR_INVALID_PLAN, "reads Float16 and writes Float32");
  spec = relu_plan(sm);
  spec.steps[1].launch = launch_1d(1, 2048);
  expect_load_error(spec, JP_ERROR_INVALID_PLAN, "outside the CUDA limits");
  spec = relu_plan(sm);
  spec.steps[1].launch = fb::LaunchConfig(1, 1, 1, 32, 1, 1, 1u << 30, 1);
  expect_load_error(spec, JP_ERROR_UNSUPPORTED, "bytes of shared memory");
}

// The persistent RNN kernel's blocks wait for each other, so all of them must be resident at
// once: load refuses a grid larger than the GPU holds, naming the step and the figures.
TEST(CudaRuntime, RefusesACooperativeGridLargerThanTheGpu) {
  SKIP_WITHOUT_GPU(sm);
  const int64_t S = 4, I = 8, H = 8;
  PlanSpec spec;
  spec.backend = fb::Backend::CUDA;
  spec.sm_arch = static_cast<uint32_t>(sm);
  const fb::DType f16 = fb::DType::Float16;
  spec.tensors = {{"x", {S, 1, I}, fb::Storage::Binding, 0, 0, f16},
                  {"w", {1, 4 * H, I}, fb::Storage::Arena, 0, -1, f16},
                  {"r", {1, 4 * H, H}, fb::Storage::Arena, 1024, -1, f16},
                  {"y", {S, 1, 1, H}, fb::Storage::Binding, 0, 0, f16}};
  spec.inputs = {{"x", 0}};
  spec.outputs = {{"y", 3}};
  spec.arena_bytes = 8192;
  StepSpec lstm = step_spec("lstm", fb::OpFamily::Rnn, {0, 1, 2}, {3});
  lstm.params = [H](flatbuffers::FlatBufferBuilder& b) {
    const std::vector<fb::RnnActivation> acts = {
        fb::RnnActivation(fb::RnnActivationKind::Sigmoid, 0.f, 0.f),
        fb::RnnActivation(fb::RnnActivationKind::Tanh, 0.f, 0.f),
        fb::RnnActivation(fb::RnnActivationKind::Tanh, 0.f, 0.f)};
    const auto v = b.CreateVectorOfStructs(acts);
    fb::RnnParamsBuilder p(b);
    p.add_cell(fb::RnnCell::Lstm);
    p.add_direction(fb::RnnDirection::Forward);
    p.add_hidden_size(H);
    p.add_activations(v);
    p.add_has_y(true);
    return std::make_pair(fb::StepParams::RnnParams, p.Finish().Union());
  };
  lstm.kernel = "jp_rnn_persist_f16";
  lstm.workspace_offset = 4096;
  lstm.workspace_bytes = 4096;
  // One block per SM is the most any plan asks for; a million is more than any GPU holds.
  lstm.launch = fb::LaunchConfig(1u << 20, 1, 1, 256, 1, 1, 0, 1);
  spec.steps = {lstm};
  expect_load_error(spec, JP_ERROR_UNSUPPORTED, "which must all run at once");
  // The same step on a grid the GPU holds loads.
  spec.steps[0].launch = fb::LaunchConfig(2, 1, 1, 256, 1, 1, 0, 1);
  jp_plan* plan = load(spec);
  ASSERT_NE(plan, nullptr);
  jp_plan_destroy(plan);
}

// jp_preprocessor on a CUDA plan: the frame uploaded on the preprocessor's stream while the
// previous run is in flight, the kernel writing the device input, and enqueue not overwriting it
// from the (never set) host input. Against jp_preprocess_image (the CPU twin) through Relu in
// FP16: 2e-3 relative.
TEST(CudaRuntime, PreprocessorWritesTheInputOnTheGpu) {
  SKIP_WITHOUT_GPU(sm);
  jp_plan* plan = load(relu_plan(sm, {1, 3, 24, 32}));
  ASSERT_NE(plan, nullptr);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  jp_preprocess_desc desc{};
  desc.format = JP_PIXEL_YUYV;
  desc.width = 50;
  desc.height = 31;
  desc.fit = JP_FIT_LETTERBOX;
  desc.pad_value = 114.f;
  for (int c = 0; c < 3; ++c) desc.mean[c] = 0.5f, desc.std[c] = 0.25f;
  jp_preprocessor* pre = nullptr;
  ASSERT_EQ(jp_preprocessor_create(ctx, 0, &desc, &pre), JP_OK) << jp_last_error();
  const size_t frame_bytes = jp_preprocessor_frame_bytes(pre);
  ASSERT_EQ(frame_bytes, size_t(50 * 2 * 31));
  std::vector<std::vector<float>> want(4, std::vector<float>(3 * 24 * 32));
  for (int f = 0; f < 4; ++f) {
    auto* frame = static_cast<uint8_t*>(jp_preprocessor_frame(pre, f % 2));
    for (size_t i = 0; i < frame_bytes; ++i) frame[i] = uint8_t((i * 131 + f * 977) >> 2);
    ASSERT_EQ(jp_preprocess_image(&desc, frame, JP_FLOAT32, 1, 24, 32, want[size_t(f)].data(),
                                  want[size_t(f)].size() * 4), JP_OK);
    ASSERT_EQ(jp_preprocessor_run(pre, f % 2), JP_OK) << jp_last_error();  // overlaps run f - 1
    if (f > 0) {
      ASSERT_EQ(jp_context_synchronize(ctx), JP_OK) << jp_last_error();
      const void* y = nullptr;
      size_t bytes = 0;
      ASSERT_EQ(jp_context_get_output(ctx, 0, &y, &bytes), JP_OK);
      expect_relu(want[size_t(f - 1)], static_cast<const float*>(y));
    }
    ASSERT_EQ(jp_context_enqueue(ctx), JP_OK) << jp_last_error();
  }
  ASSERT_EQ(jp_context_synchronize(ctx), JP_OK) << jp_last_error();
  const void* y = nullptr;
  size_t bytes = 0;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &y, &bytes), JP_OK);
  expect_relu(want[3], static_cast<const float*>(y));
  jp_preprocessor_destroy(pre);
  // Without its preprocessor the context copies the input from the host again.
  std::vector<float> x(3 * 24 * 32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 7) - 3) * 0.5f;
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK) << jp_last_error();
  ASSERT_EQ(jp_context_enqueue(ctx), JP_OK) << jp_last_error();
  ASSERT_EQ(jp_context_synchronize(ctx), JP_OK) << jp_last_error();
  ASSERT_EQ(jp_context_get_output(ctx, 0, &y, &bytes), JP_OK);
  expect_relu(x, static_cast<const float*>(y));
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

// jp_detector on a CUDA plan: the detect_postprocess kernels on the device output, queued right
// after the run on the context's stream, against jp_detect_boxes (the CPU twin) on the host copy
// of the same output: equal bit for bit, in the same order. Three runs reuse one detector.
TEST(CudaRuntime, DetectorRunsOnTheDeviceOutput) {
  SKIP_WITHOUT_GPU(sm);
  jp_plan* plan = load(relu_plan(sm, {1, 9, 6, 10}));  // 4 classes on a 10 x 6 grid
  ASSERT_NE(plan, nullptr);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  jp_detect_desc desc{};
  desc.grid_width = 10, desc.grid_height = 6, desc.classes = 4;
  desc.stride = 8.f, desc.image_width = 80.f, desc.image_height = 45.f;
  desc.score_threshold = 0.1f, desc.iou_threshold = 0.3f;
  desc.max_candidates = 100, desc.max_detections = 30;
  jp_detector* det = nullptr;
  ASSERT_EQ(jp_detector_create(ctx, 0, &desc, &det), JP_OK) << jp_last_error();
  std::vector<unsigned char> ws(jp_detect_workspace_bytes(&desc) + 16);
  void* aligned = ws.data() + (16 - reinterpret_cast<uintptr_t>(ws.data()) % 16) % 16;
  for (int run = 0; run < 3; ++run) {
    std::vector<float> x(9 * 60);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int((i * 53 + size_t(run) * 7) % 17) - 5) / 4;
    ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
    ASSERT_EQ(jp_context_enqueue(ctx), JP_OK) << jp_last_error();
    const jp_detection* got = nullptr;
    int32_t n = -1;
    ASSERT_EQ(jp_detector_run(det, &got, &n), JP_OK) << jp_last_error();  // after the run
    const void* y = nullptr;
    size_t bytes = 0;
    ASSERT_EQ(jp_context_synchronize(ctx), JP_OK) << jp_last_error();
    ASSERT_EQ(jp_context_get_output(ctx, 0, &y, &bytes), JP_OK);
    std::vector<jp_detection> want(30);
    int32_t want_n = -1;
    ASSERT_EQ(jp_detect_boxes(&desc, static_cast<const float*>(y), bytes, aligned, ws.size() - 16,
                              want.data(), 30, &want_n), JP_OK) << jp_last_error();
    ASSERT_EQ(n, want_n) << "run " << run;
    EXPECT_GT(n, 1) << "a run that tests little";
    for (int32_t i = 0; i < n; ++i)
      EXPECT_EQ(std::memcmp(&got[i], &want[size_t(i)], sizeof(jp_detection)), 0)
          << "run " << run << " detection " << i << ": candidate " << got[i].candidate
          << " score " << got[i].score << ", want " << want[size_t(i)].candidate << " score "
          << want[size_t(i)].score;
  }
  jp_detector_destroy(det);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

// jp_class_map on a CUDA plan: the pixel_argmax kernel on the device output, only the classes
// copied back, against jp_pixel_classes (the CPU twin) on the host copy of the same output.
TEST(CudaRuntime, ClassMapRunsOnTheDeviceOutput) {
  SKIP_WITHOUT_GPU(sm);
  jp_plan* plan = load(relu_plan(sm, {1, 6, 9, 11}));
  ASSERT_NE(plan, nullptr);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  jp_class_map* map = nullptr;
  ASSERT_EQ(jp_class_map_create(ctx, 0, 0, &map), JP_OK) << jp_last_error();
  std::vector<float> x(6 * 99);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int((i * 41) % 13) - 4) / 2;
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
  ASSERT_EQ(jp_context_enqueue(ctx), JP_OK) << jp_last_error();
  const int32_t* got = nullptr;
  int32_t h = 0, w = 0;
  ASSERT_EQ(jp_class_map_run(map, &got, &h, &w), JP_OK) << jp_last_error();
  ASSERT_EQ(jp_context_synchronize(ctx), JP_OK) << jp_last_error();
  const void* y = nullptr;
  size_t bytes = 0;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &y, &bytes), JP_OK);
  std::vector<int32_t> want(99, -1);
  ASSERT_EQ(jp_pixel_classes(static_cast<const float*>(y), bytes, 6, 9, 11, 0, want.data(),
                             want.size() * 4), JP_OK) << jp_last_error();
  EXPECT_EQ(h, 9);
  EXPECT_EQ(w, 11);
  EXPECT_EQ(std::vector<int32_t>(got, got + 99), want);
  jp_class_map_destroy(map);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

}  // namespace
}  // namespace jetplan::testing
