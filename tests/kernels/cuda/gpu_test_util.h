// What the GPU kernel tests share: a device (the embedded modules loaded through the runtime's
// own driver layer, so the tests exercise exactly what libjetplan launches), device buffers
// poisoned before each launch, FP16 conversion, and a launch of one named variant with the
// StepPointers/params signature of kernels/cuda/launch.h.
//
// Also the steps every test file would otherwise write again: a float tensor uploaded, poisoned
// and read back in FP16 or FP32 storage, the comparison against the CPU twin, the selector's
// choice, the workspace as the runtime hands it over, and timings with driver events.
//
// Without a GPU every test SKIPS, visibly, with the reason (GPU_TEST_OR_SKIP); it never passes
// by doing nothing. Compare with kernel_test_util.h's all_close (NaN never passes).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <ios>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/conv.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/select.h"
#include "kernels/op_family.h"
#include "runtime/src/cuda/cuda_driver.h"
#include "runtime/src/cuda/cuda_modules.h"

namespace jetplan::kernels::gpu_test {

namespace cu = ::jetplan::rt::cu;

// FP16 bits whose value is a NaN no kernel computes: outputs are filled with it before a launch.
constexpr uint16_t kHalfPoison = 0x7e5a;
constexpr uint32_t kFloatPoison = 0x7fc0deadu;

// The process-wide device: primary context of GPU 0 with every embedded module loaded. Null
// (and `why` set) when there is no usable GPU or no kernels.
struct Device {
  const cu::Driver* d = nullptr;
  cu::DeviceInfo info;
  cu::CUcontext ctx = nullptr;
  cu::Modules modules;
  std::string why;
};

inline Device* device() {
  static Device* dev = [] {
    auto* out = new Device;
    if (jetplan::rt::cu::driver(&out->d) != JP_OK) {
      out->why = jp_last_error();
      out->d = nullptr;
      return out;
    }
    if (cu::device_info(*out->d, 0, &out->info) != JP_OK ||
        cu::check(*out->d, out->d->DevicePrimaryCtxRetain(&out->ctx, out->info.device),
                  "cuDevicePrimaryCtxRetain") != JP_OK ||
        cu::check(*out->d, out->d->CtxSetCurrent(out->ctx), "cuCtxSetCurrent") != JP_OK ||
        out->modules.load(*out->d) != JP_OK) {
      out->why = jp_last_error();
      out->d = nullptr;
    }
    return out;
  }();
  if (dev->d != nullptr) (void)dev->d->CtxSetCurrent(dev->ctx);
  return dev;
}

// Skips the test, saying why, when there is no GPU.
#define GPU_TEST_OR_SKIP()                                                              \
  do {                                                                                  \
    if (::jetplan::kernels::gpu_test::device()->d == nullptr)                           \
      GTEST_SKIP() << "GPU kernel test skipped: " << ::jetplan::kernels::gpu_test::device()->why; \
  } while (0)

// The target description of the GPU the tests run on (for the selectors).
inline cuda::TargetInfo device_target() {
  const cu::DeviceInfo& i = device()->info;
  cuda::TargetInfo t;
  t.name = i.name;
  t.sm_arch = static_cast<uint32_t>(i.sm_arch);
  t.sm_count = static_cast<uint32_t>(i.sm_count);
  t.max_shared_per_block = static_cast<uint32_t>(i.max_shared_per_block_optin);
  t.shared_per_sm = t.max_shared_per_block;
  t.l2_bytes = static_cast<uint32_t>(i.l2_bytes);
  return t;
}

// Whether kernel variant `name` runs on this GPU (rows with sm_only, such as the Hopper conv
// tiles, run on GPUs of that arch only). A variant left out for that is named once, so the skip
// is visible.
inline bool variant_runs_here(const char* name) {
  const uint8_t only = cuda::find_kernel_variant(name)->sm_only;
  const uint32_t sm = device_target().sm_arch;
  if (only == 0 || only == sm) return true;
  static std::set<std::string> told;
  if (told.insert(name).second)
    std::printf("[ SKIPPED  ] %s runs on sm_%u GPUs only; this one is sm_%u\n", name,
                unsigned(only), unsigned(sm));
  return false;
}

// Device memory of `bytes` plus a poisoned guard after the end, freed on destruction.
class DeviceBuffer {
 public:
  static constexpr size_t kGuard = 256;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    const cu::Driver& d = *device()->d;
    EXPECT_EQ(d.MemAlloc(&ptr_, bytes_ + kGuard), cu::kSuccess);
    std::vector<uint8_t> fill(bytes_ + kGuard, 0xA5);
    EXPECT_EQ(d.MemcpyHtoD(ptr_, fill.data(), fill.size()), cu::kSuccess);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != 0) (void)device()->d->MemFree(ptr_);
  }
  void* get() const { return reinterpret_cast<void*>(ptr_); }
  size_t bytes() const { return bytes_; }
  void upload(const void* host, size_t n) {
    ASSERT_LE(n, bytes_);
    ASSERT_EQ(device()->d->MemcpyHtoD(ptr_, host, n), cu::kSuccess);
  }
  // Zeroes the data (the guard stays).
  void zero() {
    const std::vector<uint8_t> zeros(bytes_, 0);
    upload(zeros.data(), zeros.size());
  }
  // Zeroes bytes [offset, offset + count) of the data.
  void zero_range(uint64_t offset, uint64_t count) {
    ASSERT_LE(offset + count, bytes_);
    const std::vector<uint8_t> zeros(count, 0);
    ASSERT_EQ(device()->d->MemcpyHtoD(ptr_ + offset, zeros.data(), count),
              cu::kSuccess);
  }
  // Fills the data with `poison` (16- or 32-bit pattern) and the guard with 0xA5.
  void poison16(uint16_t poison) {
    std::vector<uint16_t> fill(bytes_ / 2, poison);
    std::vector<uint8_t> all(bytes_ + kGuard, 0xA5);
    std::memcpy(all.data(), fill.data(), fill.size() * 2);
    ASSERT_EQ(device()->d->MemcpyHtoD(ptr_, all.data(), all.size()), cu::kSuccess);
  }
  void poison32(uint32_t poison) {
    std::vector<uint32_t> fill(bytes_ / 4, poison);
    std::vector<uint8_t> all(bytes_ + kGuard, 0xA5);
    std::memcpy(all.data(), fill.data(), fill.size() * 4);
    ASSERT_EQ(device()->d->MemcpyHtoD(ptr_, all.data(), all.size()), cu::kSuccess);
  }
  // Benchmark data: halves uniform in [-scale, scale] (random operands: the tensor cores run
  // slower on them than on constant ones, as on real weights).
  void random16(uint32_t seed, float scale) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-scale, scale);
    std::vector<uint16_t> fill(bytes_ / 2);
    for (uint16_t& h : fill) h = half_from_float(u(rng));
    upload(fill.data(), fill.size() * 2);
  }
  std::vector<uint8_t> download_all() const {  // data + guard
    std::vector<uint8_t> out(bytes_ + kGuard);
    EXPECT_EQ(device()->d->MemcpyDtoH(out.data(), ptr_, out.size()), cu::kSuccess);
    return out;
  }
  // The first n elements of type T.
  template <typename T>
  std::vector<T> download(size_t n) const {
    std::vector<T> out(n);
    std::memcpy(out.data(), download_all().data(), n * sizeof(T));
    return out;
  }
  // True when the guard after the data is intact.
  bool guard_intact() const {
    const std::vector<uint8_t> all = download_all();
    for (size_t i = bytes_; i < all.size(); ++i)
      if (all[i] != 0xA5) return false;
    return true;
  }

 private:
  size_t bytes_;
  cu::CUdeviceptr ptr_ = 0;
};

// The StepPointers of a step that reads `in`, in order, and writes `out` (no workspace yet).
inline cuda::StepPointers step_pointers(std::initializer_list<const DeviceBuffer*> in,
                                        const DeviceBuffer& out) {
  cuda::StepPointers ptrs{};
  size_t k = 0;
  for (const DeviceBuffer* b : in) ptrs.in[k++] = b->get();
  ptrs.out[0] = out.get();
  return ptrs;
}

inline std::vector<uint16_t> to_half(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = half_from_float(v[i]);
  return out;
}
inline std::vector<float> from_half(const std::vector<uint16_t>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = half_to_float(v[i]);
  return out;
}
// Rounds through FP16 (what a kernel reading FP16 storage sees).
inline std::vector<float> round_half(const std::vector<float>& v) { return from_half(to_half(v)); }
// x as the step's storage holds it: rounded to half when f16.
inline std::vector<float> as_stored(std::vector<float> x, bool f16) {
  return f16 ? round_half(x) : x;
}

// ------------------------------------------------------ float tensors in FP16 or FP32 storage

inline size_t float_storage_bytes(DType dt) { return dt == DType::kFloat16 ? 2 : 4; }

// A device copy of `v` in `dt` storage (Float16: rounded to nearest even; Float32: as is).
// At least one element is allocated, so an empty tensor still gets a distinct pointer.
inline std::unique_ptr<DeviceBuffer> to_device(const std::vector<float>& v, DType dt) {
  const size_t e = float_storage_bytes(dt);
  auto b = std::make_unique<DeviceBuffer>((v.empty() ? 1 : v.size()) * e);
  if (dt == DType::kFloat16) b->upload(to_half(v).data(), v.size() * 2);
  else b->upload(v.data(), v.size() * 4);
  return b;
}

// Fills `b` with the NaN of `dt` storage that no kernel computes (kHalfPoison or kFloatPoison).
inline void poison(DeviceBuffer& b, DType dt) {
  if (dt == DType::kFloat16) b.poison16(kHalfPoison);
  else b.poison32(kFloatPoison);
}

// The first n elements of `b`, in `dt` storage, as floats.
inline std::vector<float> download_floats(const DeviceBuffer& b, size_t n, DType dt) {
  return dt == DType::kFloat16 ? from_half(b.download<uint16_t>(n)) : b.download<float>(n);
}

// Every element within |got - want| <= abs + rel * |want| (the difference taken in double); a
// NaN or an infinity on either side never passes. Names the first element off and counts them.
template <typename Want>
testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<Want>& want,
                                   double rel, double abs) {
  if (got.size() != want.size())
    return testing::AssertionFailure() << "got " << got.size() << " elements, want " << want.size();
  size_t first = want.size(), off = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double w = static_cast<double>(want[i]);
    if (std::fabs(static_cast<double>(got[i]) - w) <= abs + rel * std::fabs(w)) continue;
    if (off++ == 0) first = i;
  }
  if (off == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "element " << first << ": got " << got[first] << ", want "
                                     << static_cast<double>(want[first]) << " (" << off << " of "
                                     << want.size() << " elements off)";
}

// all_close on FP16 bits, which the message also shows.
inline testing::AssertionResult all_close_half(const std::vector<uint16_t>& got,
                                               const std::vector<float>& want, double rel,
                                               double abs) {
  testing::AssertionResult r = all_close(from_half(got), want, rel, abs);
  if (!r) {
    for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
      const double g = half_to_float(got[i]);
      if (std::fabs(g - want[i]) <= abs + rel * std::fabs(double(want[i]))) continue;
      r << "; bits of element " << i << ": 0x" << std::hex << got[i] << std::dec;
      break;
    }
  }
  return r;
}

// Launches kernel `name` with `choice`'s grid/block/shared memory, synchronizes and returns the
// status as text ("" on success).
template <typename Params>
std::string launch(const char* name, const cuda::LaunchChoice& choice,
                   const cuda::StepPointers& ptrs, const Params& params) {
  Device* dev = device();
  const cu::Driver& d = *dev->d;
  cu::CUfunction fn = nullptr;
  if (dev->modules.function(name, &fn) != JP_OK) return jp_last_error();
  if (choice.shared_bytes > 48 * 1024 &&
      d.FuncSetAttribute(fn, cu::kFuncAttrMaxDynamicShared, static_cast<int>(choice.shared_bytes)) !=
          cu::kSuccess)
    return "cuFuncSetAttribute failed";
  cuda::StepPointers p = ptrs;
  Params q = params;
  void* args[] = {&p, &q};
  char text[160];
  const bool cooperative = choice.variant != nullptr && choice.variant->cooperative;
  cu::CUresult r = cu::launch(d, fn, cooperative, choice.grid, choice.block, choice.shared_bytes,
                              nullptr, args);
  if (r != cu::kSuccess) return std::string("launch: ") + cu::error_text(d, r, text, sizeof text);
  r = d.StreamSynchronize(nullptr);
  if (r != cu::kSuccess) return std::string("sync: ") + cu::error_text(d, r, text, sizeof text);
  return "";
}

// The selector's choice for a step of `family` on the device (or `target`, a variation of it):
// "" on success, else why not.
template <typename Params>
std::string select(uint16_t family, DType dtype, const Params& params, cuda::LaunchChoice* choice,
                   const cuda::TargetInfo* target = nullptr) {
  cuda::StepDesc step;
  step.family = family;
  step.params = &params;
  step.dtype = dtype;
  std::string why;
  if (!cuda::select_kernel(step, target != nullptr ? *target : device_target(), choice, &why))
    return "select: " + why;
  return "";
}

// The workspace `choice` asks for, as the runtime hands it over: garbage (poisoned) but for what
// the variant asks the runtime to clear (workspace_clear_range: all of it, or the split-K
// counters at its end); or zeroed in any case with `zeroed` (timings and replays: the split-K
// kernels leave their counters at 0, so zeroing once is enough). Points ptrs->workspace at it.
// Null when the choice needs none.
inline std::unique_ptr<DeviceBuffer> workspace_for(const cuda::LaunchChoice& choice,
                                                   cuda::StepPointers* ptrs, bool zeroed = false) {
  if (choice.workspace_bytes == 0) return nullptr;
  auto ws = std::make_unique<DeviceBuffer>(choice.workspace_bytes);
  uint64_t offset = 0, count = 0;
  cuda::workspace_clear_range(*choice.variant, choice.grid, choice.workspace_bytes, &offset, &count);
  if (zeroed || count == choice.workspace_bytes) {
    ws->zero();
  } else {
    ws->poison32(kFloatPoison);
    if (count > 0) ws->zero_range(offset, count);
  }
  ptrs->workspace = ws->get();
  ptrs->workspace_bytes = choice.workspace_bytes;
  return ws;
}

// Selects with the real selector for the device (or `target`) and launches.
template <typename Params>
std::string select_and_launch(uint16_t family, DType dtype, const cuda::StepPointers& ptrs,
                              const Params& params, cuda::LaunchChoice* chosen = nullptr,
                              const cuda::TargetInfo* target = nullptr) {
  cuda::LaunchChoice choice;
  const std::string why = select(family, dtype, params, &choice, target);
  if (!why.empty()) return why;
  if (chosen != nullptr) *chosen = choice;
  cuda::StepPointers p = ptrs;
  const std::unique_ptr<DeviceBuffer> workspace = workspace_for(choice, &p);
  return launch(choice.variant->name, choice, p, params);
}

// A target of `sm_count` SMs (the other limits default), for the selector tests.
inline cuda::TargetInfo target_with(uint32_t sm_count) {
  cuda::TargetInfo t;
  t.sm_count = sm_count;
  return t;
}

// A step of `family` with `params` and storage `dtype`, for the selector tests.
inline cuda::StepDesc step_of(uint16_t family, const void* params, DType dtype = DType::kFloat32) {
  cuda::StepDesc step;
  step.family = family;
  step.params = params;
  step.dtype = dtype;
  return step;
}

// An INT8 conv step as the converter writes it: Int8 x and w, the Float32 channel epilogue, y of
// type `y`.
inline cuda::StepDesc int8_conv_step(const ConvParams* p, DType y) {
  cuda::StepDesc step = step_of(static_cast<uint16_t>(OpFamilyId::kConv), p, DType::kInt8);
  step.num_inputs = 3;
  step.input_dtypes[0] = step.input_dtypes[1] = DType::kInt8;
  step.input_dtypes[2] = DType::kFloat32;
  step.num_outputs = 1;
  step.output_dtypes[0] = y;
  return step;
}

// The launch the Gemm variant `name` is written for, forced without the selector (the formulas of
// kernels/cuda/gemm_select.cc, restated): split-K variants get `splits` K slices and their
// workspace; names with _f32out take the same launch as their FP16-out twins.
inline cuda::LaunchChoice gemm_launch_for(const std::string& name, const GemmParams& p,
                                          uint32_t splits) {
  cuda::LaunchChoice l;
  const auto cdiv = [](int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); };
  l.variant = cuda::find_kernel_variant(name.c_str());
  l.grid[2] = static_cast<uint32_t>(std::max<int64_t>(1, std::min<int64_t>(p.batch, 65535)));
  if (name.find("gemv_bt") != std::string::npos) {
    l.grid[0] = std::max(1u, cdiv(p.N, 2));
    l.block[0] = 256;
  } else if (name.find("gemv_bn") != std::string::npos) {
    l.grid[0] = std::max(1u, cdiv(p.N, 64));
    l.block[0] = 256;
  } else if (name.find("splitk") != std::string::npos) {
    l.grid[0] = std::max(1u, cdiv(p.N, 64));
    l.grid[1] = std::max(1u, cdiv(p.M, 32));
    l.grid[2] = splits;
    l.block[0] = 128;
    const uint64_t tiles = uint64_t{l.grid[0]} * l.grid[1];
    l.workspace_bytes = (tiles * 4 + 255) / 256 * 256 + tiles * splits * 32 * 64 * 4;
  } else {
    l.grid[0] = std::max(1u, cdiv(p.N, 64));
    l.grid[1] = std::max(1u, cdiv(p.M, name.find("mma32") != std::string::npos ? 32 : 64));
    l.block[0] = 128;
  }
  return l;
}

// What a one-input, one-output float step left: the launch status ("" on success), y's
// elements as floats, whether the guard after y is intact, and the variant chosen.
struct FloatStepResult {
  std::string status;
  std::vector<float> y;
  bool guard_intact = false;
  cuda::LaunchChoice chosen;
};

// Runs a step of `family` that reads x and writes ny elements of y, both in `dtype` storage,
// with the selector's choice: x uploaded (Float16: rounded), y poisoned before the launch.
template <typename Params>
FloatStepResult run_float_step(uint16_t family, DType dtype, const Params& params,
                               const std::vector<float>& x, size_t ny) {
  FloatStepResult r;
  const std::unique_ptr<DeviceBuffer> dx = to_device(x, dtype);
  DeviceBuffer dy(ny * float_storage_bytes(dtype));
  poison(dy, dtype);
  cuda::StepPointers ptrs{};
  ptrs.in[0] = dx->get();
  ptrs.out[0] = dy.get();
  r.status = select_and_launch(family, dtype, ptrs, params, &r.chosen);
  if (!r.status.empty()) return r;
  r.y = download_floats(dy, ny, dtype);
  r.guard_intact = dy.guard_intact();
  return r;
}

// ------------------------------------------------------------------------------------ timings

// A launch ready to repeat without synchronizing: the function, the launch configuration and
// copies of the pointers and parameters.
struct RepeatLaunch {
  cu::CUfunction fn = nullptr;
  cuda::LaunchChoice choice;
  cuda::StepPointers ptrs{};
  std::vector<uint8_t> params;
  cu::CUresult operator()(cu::CUstream stream = nullptr) {
    const cu::Driver& d = *device()->d;
    const cuda::LaunchChoice& c = choice;
    // As the runtime launches a step: what the variant asks cleared of the workspace first.
    uint64_t offset = 0, count = 0;
    cuda::workspace_clear_range(*c.variant, c.grid, ptrs.workspace_bytes, &offset, &count);
    if (count > 0) {
      const cu::CUresult r = d.MemsetD8Async(
          reinterpret_cast<cu::CUdeviceptr>(ptrs.workspace) + offset, 0, count, stream);
      if (r != cu::kSuccess) return r;
    }
    void* args[] = {&ptrs, params.data()};
    return cu::launch(d, fn, c.variant->cooperative, c.grid, c.block, c.shared_bytes, stream,
                      args);
  }
};

// The launch of `choice` with `ptrs` and `params`: "" on success, else why not.
template <typename Params>
std::string repeat_launch(const cuda::LaunchChoice& choice, const cuda::StepPointers& ptrs,
                          const Params& params, RepeatLaunch* out) {
  if (device()->modules.function(choice.variant->name, &out->fn) != JP_OK) return jp_last_error();
  if (choice.shared_bytes > 48 * 1024 &&
      device()->d->FuncSetAttribute(out->fn, cu::kFuncAttrMaxDynamicShared,
                                    static_cast<int>(choice.shared_bytes)) != cu::kSuccess)
    return "cuFuncSetAttribute failed";
  out->choice = choice;
  out->ptrs = ptrs;
  out->params.resize(sizeof(Params));
  std::memcpy(out->params.data(), &params, sizeof(Params));
  return "";
}

// Mean microseconds per call of `go` (which launches on the legacy stream and returns the
// launch's CUresult) over `reps` calls after `warmup` calls, timed with driver events. Negative,
// and the test failed naming the call, when a launch or an event call fails.
template <typename Go>
double mean_us(int warmup, int reps, Go go) {
  const cu::Driver& d = *device()->d;
  cu::CUevent start = nullptr, stop = nullptr;
  float ms = 0.f;
  const char* failed = nullptr;
  if (d.EventCreate(&start, cu::kEventDefault) != cu::kSuccess ||
      d.EventCreate(&stop, cu::kEventDefault) != cu::kSuccess)
    failed = "cuEventCreate";
  for (int i = 0; failed == nullptr && i < warmup; ++i)
    if (go() != cu::kSuccess) failed = "a warm-up launch";
  if (failed == nullptr && d.EventRecord(start, nullptr) != cu::kSuccess) failed = "cuEventRecord";
  for (int i = 0; failed == nullptr && i < reps; ++i)
    if (go() != cu::kSuccess) failed = "a timed launch";
  if (failed == nullptr && (d.EventRecord(stop, nullptr) != cu::kSuccess ||
                            d.EventSynchronize(stop) != cu::kSuccess ||
                            d.EventElapsedTime(&ms, start, stop) != cu::kSuccess))
    failed = "cuEventRecord/Synchronize/ElapsedTime";
  if (start != nullptr) (void)d.EventDestroy(start);
  if (stop != nullptr) (void)d.EventDestroy(stop);
  if (failed != nullptr) {
    ADD_FAILURE() << "timing: " << failed << " failed";
    return -1;
  }
  return 1000.0 * ms / reps;
}

// The first n bytes of b.
inline std::vector<uint8_t> download_bytes(const DeviceBuffer& b, size_t n) {
  return b.download<uint8_t>(n);
}

// The first byte that differs, or -1.
inline int64_t first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) return static_cast<int64_t>(i);
  return -1;
}

// The setup of the bit-exact data movement tests: the bytes x on the device, an output of
// `y_bytes` poisoned with kHalfPoison, and the pointers of the step x -> y.
struct ByteStep {
  ByteStep(const std::vector<uint8_t>& x, size_t y_bytes) : dx(x.size()), dy(y_bytes) {
    dx.upload(x.data(), x.size());
    dy.poison16(kHalfPoison);
    ptrs = step_pointers({&dx}, dy);
  }
  // The first byte of the output that differs from want, or -1.
  int64_t first_difference(const std::vector<uint8_t>& want) const {
    return gpu_test::first_difference(download_bytes(dy, want.size()), want);
  }
  DeviceBuffer dx, dy;
  cuda::StepPointers ptrs;
};

// A device copy of v in dtype (FP16 rounds; the host copy is rounded too so the twin sees it).
inline std::unique_ptr<DeviceBuffer> upload_rounded(std::vector<float>* v, DType dtype) {
  if (dtype == DType::kFloat16) *v = round_half(*v);
  return to_device(*v, dtype);
}

// got (in dtype) against the twin's want: FP16 within 2e-3 relative and absolute, FP32 1e-5.
inline testing::AssertionResult close_to_twin(const DeviceBuffer& got, const std::vector<float>& want,
                                              DType dtype) {
  const double rel = dtype == DType::kFloat16 ? 2e-3 : 1e-5;
  const double abs = dtype == DType::kFloat16 ? 2e-3 : 1e-5;
  return all_close(download_floats(got, want.size(), dtype), want, rel, abs);
}

// Uploads `inputs`, poisons an output of `out_bytes`, selects and launches; returns the output
// (and fails the test if the launch fails or the guard is hit).
template <typename Params>
std::vector<uint8_t> run_bytes_step(uint16_t family, DType dt, const Params& p, const std::vector<std::vector<uint8_t>>& inputs,
              size_t out_bytes) {
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  cuda::StepPointers ptrs{};
  for (size_t i = 0; i < inputs.size(); ++i) {
    bufs.push_back(std::make_unique<DeviceBuffer>(inputs[i].size()));
    bufs.back()->upload(inputs[i].data(), inputs[i].size());
    ptrs.in[i] = bufs.back()->get();
  }
  DeviceBuffer dy(out_bytes);
  std::vector<uint8_t> fill(out_bytes, 0xEE);
  dy.upload(fill.data(), out_bytes);
  ptrs.out[0] = dy.get();
  EXPECT_EQ(select_and_launch(family, dt, ptrs, p), "");
  EXPECT_TRUE(dy.guard_intact());
  return dy.download<uint8_t>(out_bytes);
}

}  // namespace jetplan::kernels::gpu_test
