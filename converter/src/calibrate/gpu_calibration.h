// Calibration on the GPU (CalibrationDevice kAuto and kGpu, calibrate.h): the FP32 model as a
// Float32 CUDA plan (what jetplan-convert --precision fp32 writes) for GPU 0, run sample after
// sample on one context with a step observer. Each float32 tensor the observer hands back goes to
// a pool of threads that build the histograms (histogram.h); histograms merge exactly, so the
// statistics do not depend on how many threads built them, and they are those the CPU plan's run
// gives up to float32 rounding (the GPU sums in another order).
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "converter/src/calibrate/calib_data.h"
#include "converter/src/calibrate/plan_handles.h"
#include "converter/src/calibrate/histogram.h"
#include "converter/src/convert.h"
#include "jetplan/jetplan.h"

namespace jetplan::converter {

// GPU 0 and the --target a Float32 calibration plan for it is converted for.
struct CalibrationGpu {
  std::string name;    // GPU 0's name ("NVIDIA H100 80GB HBM3")
  std::string target;  // empty where no GPU takes a plan: `why` says why
  std::string why;
};

// `preferred` (the conversion's --target) when it is a CUDA target of GPU 0's SM architecture,
// else the first known target (known_targets()) of that architecture. No target, with `why`,
// where the runtime finds no GPU (jp_cuda_device) or no known target is of its architecture.
CalibrationGpu find_calibration_gpu(const std::string& preferred);

// A context of `plan` (a Float32 CUDA plan bound to GPU 0) ready to be observed: its arena and
// the observer's pinned staging allocated. Throws ConvertError (out of GPU or pinned memory).
ContextPtr gpu_calibration_context(const jp_plan* plan);

// Runs every sample of `set` on `ctx` (gpu_calibration_context's); `threads` threads build the
// histograms. Statistics by FP32 graph tensor name: a tensor's NHWC
// twin ("<name>:nhwc", draft_graph_name) is the tensor, counted once a sample; graph inputs come
// from the samples. `progress` as calibrate's. Throws ConvertError naming the sample that failed.
std::map<std::string, TensorHistogram> run_gpu_calibration(jp_context* ctx,
                                                           const CalibrationSet& set,
                                                           size_t threads,
                                                           const ProgressFn& progress);

}  // namespace jetplan::converter
