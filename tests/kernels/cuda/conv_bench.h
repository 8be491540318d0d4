// The ResNet-50 conv layers and the launch timer of the conv benchmarks (test_conv_bench.cc: FP16,
// test_conv_int8_bench.cc: INT8 against FP16), run with --gtest_also_run_disabled_tests.
#pragma once

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"

namespace jetplan::kernels {

// ResNet-50 batch-1 conv layers (224x224 input): shape and how many times it occurs.
struct BenchLayer {
  int64_t cin, cout, hw, k, stride, count;
};
inline constexpr BenchLayer kResNet50[] = {
    {3, 64, 224, 7, 2, 1},     {64, 64, 56, 1, 1, 1},     {64, 64, 56, 3, 1, 3},
    {64, 256, 56, 1, 1, 4},    {256, 64, 56, 1, 1, 2},    {256, 128, 56, 1, 1, 1},
    {128, 128, 56, 3, 2, 1},   {128, 512, 28, 1, 1, 4},   {256, 512, 56, 1, 2, 1},
    {512, 128, 28, 1, 1, 3},   {128, 128, 28, 3, 1, 3},   {512, 256, 28, 1, 1, 1},
    {256, 256, 28, 3, 2, 1},   {256, 1024, 14, 1, 1, 6},  {512, 1024, 28, 1, 2, 1},
    {1024, 256, 14, 1, 1, 5},  {256, 256, 14, 3, 1, 5},   {1024, 512, 14, 1, 1, 1},
    {512, 512, 14, 3, 2, 1},   {512, 2048, 7, 1, 1, 3},   {1024, 2048, 14, 1, 2, 1},
    {2048, 512, 7, 1, 1, 2},   {512, 512, 7, 3, 1, 2},
};

// Mean GPU time of one launch of `ch`, in a CUDA graph of kReps back-to-back launches (as the
// runtime replays a plan), after a warm-up replay so the clocks are up; <= 0 on failure.
// `stream_us` gets the same for plain launches on the legacy stream (host launch cost included).
// The split-K kernels reset their arrival counters, so the workspace is zeroed only once.
inline double time_launch(const cuda::LaunchChoice& ch, cuda::StepPointers ptrs, ConvParams q,
                   double* stream_us) {
  namespace cu = gpu_test::cu;
  const cu::Driver& d = *gpu_test::device()->d;
  if (!gpu_test::launch(ch.variant->name, ch, ptrs, q).empty()) return -1;  // sets shared limit
  cu::CUfunction fn = nullptr;
  if (gpu_test::device()->modules.function(ch.variant->name, &fn) != JP_OK) return -1;
  void* args[] = {&ptrs, &q};
  constexpr int kReps = 100, kReplays = 3;
  auto launch_n = [&](cu::CUstream s) {
    for (int r = 0; r < kReps; ++r)
      (void)d.LaunchKernel(fn, ch.grid[0], ch.grid[1], ch.grid[2], ch.block[0], ch.block[1],
                           ch.block[2], ch.shared_bytes, s, args, nullptr);
  };
  cu::CUevent e0 = nullptr, e1 = nullptr;
  cu::CUstream s = nullptr;
  cu::CUgraph g = nullptr;
  cu::CUgraphExec ge = nullptr;
  bool ok = d.EventCreate(&e0, cu::kEventDefault) == cu::kSuccess &&
            d.EventCreate(&e1, cu::kEventDefault) == cu::kSuccess &&
            d.StreamCreate(&s, cu::kStreamNonBlocking) == cu::kSuccess;
  float ms = 0;
  if (ok) {
    launch_n(nullptr);
    (void)d.EventRecord(e0, nullptr);
    launch_n(nullptr);
    (void)d.EventRecord(e1, nullptr);
    ok = d.EventSynchronize(e1) == cu::kSuccess && d.EventElapsedTime(&ms, e0, e1) == cu::kSuccess;
    *stream_us = 1000.0 * ms / kReps;
  }
  ok = ok && d.StreamBeginCapture(s, cu::kCaptureModeThreadLocal) == cu::kSuccess;
  if (ok) launch_n(s);
  ok = ok && d.StreamEndCapture(s, &g) == cu::kSuccess &&
       d.GraphInstantiate(&ge, g, 0) == cu::kSuccess && d.GraphLaunch(ge, s) == cu::kSuccess &&
       d.EventRecord(e0, s) == cu::kSuccess;
  for (int r = 0; ok && r < kReplays; ++r) ok = d.GraphLaunch(ge, s) == cu::kSuccess;
  ok = ok && d.EventRecord(e1, s) == cu::kSuccess && d.EventSynchronize(e1) == cu::kSuccess &&
       d.EventElapsedTime(&ms, e0, e1) == cu::kSuccess;
  if (ge) (void)d.GraphExecDestroy(ge);
  if (g) (void)d.GraphDestroy(g);
  if (s) (void)d.StreamDestroy(s);
  if (e0) (void)d.EventDestroy(e0);
  if (e1) (void)d.EventDestroy(e1);
  return ok ? 1000.0 * ms / (kReps * kReplays) : -1;
}

}  // namespace jetplan::kernels
