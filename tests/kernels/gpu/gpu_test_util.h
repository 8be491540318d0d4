// What the GPU kernel tests share: a device (the embedded modules loaded through the runtime's
// own driver layer, so the tests exercise exactly what libjetplan launches), device buffers
// poisoned before each launch, FP16 conversion, and a launch of one named variant with the
// StepPointers/params signature of kernels/cuda/launch.h.
//
// Without a GPU every test SKIPS, visibly, with the reason (GPU_TEST_OR_SKIP); it never passes
// by doing nothing. Compare with kernel_test_util.h's all_close (NaN never passes).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/select.h"
#include "runtime/src/cuda_driver.h"
#include "runtime/src/cuda_modules.h"

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
  std::vector<uint8_t> download_all() const {  // data + guard
    std::vector<uint8_t> out(bytes_ + kGuard);
    EXPECT_EQ(device()->d->MemcpyDtoH(out.data(), ptr_, out.size()), cu::kSuccess);
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

// Selects with the real selector for the device (or `target`, a variation of it) and launches.
template <typename Params>
std::string select_and_launch(uint16_t family, DType dtype, const cuda::StepPointers& ptrs,
                              const Params& params, cuda::LaunchChoice* chosen = nullptr,
                              const cuda::TargetInfo* target = nullptr) {
  cuda::StepDesc step;
  step.family = family;
  step.params = &params;
  step.dtype = dtype;
  cuda::LaunchChoice choice;
  std::string why;
  if (!cuda::select_kernel(step, target != nullptr ? *target : device_target(), &choice, &why))
    return "select: " + why;
  if (chosen != nullptr) *chosen = choice;
  cuda::StepPointers p = ptrs;
  std::unique_ptr<DeviceBuffer> workspace;
  if (choice.workspace_bytes > 0) {
    workspace = std::make_unique<DeviceBuffer>(choice.workspace_bytes);
    // Garbage, as the arena holds, unless the variant asks the runtime to clear it.
    if (choice.variant->zero_workspace) {
      std::vector<uint8_t> zeros(choice.workspace_bytes, 0);
      workspace->upload(zeros.data(), zeros.size());
    } else {
      workspace->poison32(kFloatPoison);
    }
    p.workspace = workspace->get();
    p.workspace_bytes = choice.workspace_bytes;
  }
  return launch(choice.variant->name, choice, p, params);
}

}  // namespace jetplan::kernels::gpu_test
