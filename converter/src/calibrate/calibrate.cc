#include "converter/src/calibrate/calibrate.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "converter/src/calibrate/calib_cache.h"
#include "converter/src/calibrate/calib_data.h"
#include "converter/src/calibrate/gpu_calibration.h"
#include "converter/src/calibrate/histogram.h"
#include "converter/src/calibrate/plan_handles.h"
#include "converter/src/ir/error.h"
#include "jetplan/jetplan.h"

namespace jetplan::converter {
namespace {

// One thread's statistics, keyed by the plan's own name strings (stable while it lives, and the
// same pointer on every call for a tensor, so no string is built per observation).
using Statistics = std::unordered_map<const char*, TensorHistogram>;

void observe(void* user, int32_t, const char* name, jp_dtype dtype, const int64_t* dims,
             int32_t rank, const void* data) {
  if (dtype != JP_FLOAT32) return;  // only float32 tensors are candidates for int8
  size_t elements = 1;
  for (int32_t d = 0; d < rank; ++d) elements *= static_cast<size_t>(dims[d]);
  (*static_cast<Statistics*>(user))[name].add(static_cast<const float*>(data), elements);
}

// What the workers share: the next sample to take, the count done, and the first failure by
// sample index (so the error reported does not depend on the thread count either).
struct Shared {
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::atomic<size_t> first_error{std::numeric_limits<size_t>::max()};
  std::atomic<int> running{0};
  std::mutex mutex;
  std::string error;
};

void run_samples(const CalibrationSet& set, const std::vector<jp_tensor_desc>& inputs,
                 jp_context* ctx, Statistics* stats, Shared* shared) {
  while (true) {
    const size_t i = shared->next++;
    // Indices go out in order: every sample before a failed one has already been taken.
    if (i >= set.size() || i > shared->first_error) break;
    try {
      const std::vector<std::vector<uint8_t>> buffers = set.load(i);
      set_inputs(ctx, buffers, cat("calibration sample '", set.sample_path(i), "'"));
      for (size_t k = 0; k < inputs.size(); ++k) {
        if (inputs[k].dtype == JP_FLOAT32) {
          (*stats)[inputs[k].name].add(reinterpret_cast<const float*>(buffers[k].data()),
                                       buffers[k].size() / sizeof(float));
        }
      }
      check_runtime(jp_context_run(ctx), cat("calibration sample '", set.sample_path(i), "'"));
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (i < shared->first_error) {
        shared->first_error = i;
        shared->error = e.what();
      }
    }
    ++shared->done;
  }
  --shared->running;
}

// Tells `progress` how many samples are done, every 100 ms until the workers are done (the
// caller joins them), then the total.
void watch_progress(const Shared& shared, size_t total, const ProgressFn& progress) {
  if (!progress) return;
  progress("calibrate", 0, total);
  while (shared.running > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    progress("calibrate", std::min(shared.done.load(), total), total);
  }
  // A worker counts its sample before it stops running: the count is final now.
  progress("calibrate", std::min(shared.done.load(), total), total);
}

// Runs every sample of `set` through `plan` on `threads` contexts; the merged statistics by name.
std::map<std::string, TensorHistogram> run_calibration(const jp_plan* plan,
                                                       const CalibrationSet& set,
                                                       const std::vector<jp_tensor_desc>& inputs,
                                                       size_t threads,
                                                       const ProgressFn& progress) {
  std::vector<ContextPtr> contexts;
  for (size_t t = 0; t < threads; ++t) {
    jp_context* ctx = nullptr;
    check_runtime(jp_context_create(plan, nullptr, &ctx), "calibration: creating a context");
    contexts.emplace_back(ctx);
  }
  std::vector<Statistics> stats(threads);
  for (size_t t = 0; t < threads; ++t) {
    check_runtime(jp_context_set_step_observer(contexts[t].get(), observe, &stats[t]),
                  "calibration: observing the plan's steps");
  }
  Shared shared;
  shared.running = static_cast<int>(threads);
  std::vector<std::thread> workers;
  for (size_t t = 0; t < threads; ++t) {
    workers.emplace_back(run_samples, std::cref(set), std::cref(inputs), contexts[t].get(),
                         &stats[t], &shared);
  }
  watch_progress(shared, set.size(), progress);
  for (std::thread& w : workers) w.join();
  if (shared.first_error != std::numeric_limits<size_t>::max()) throw ConvertError(shared.error);
  std::map<std::string, TensorHistogram> merged;
  for (const Statistics& s : stats) {
    for (const auto& [name, histogram] : s) merged[name].merge(histogram);
  }
  return merged;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

std::vector<jp_tensor_desc> plan_inputs(const jp_plan* plan) {
  std::vector<jp_tensor_desc> inputs(static_cast<size_t>(jp_plan_num_inputs(plan)));
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_runtime(jp_plan_input_desc(plan, static_cast<int32_t>(i), &inputs[i]),
                  "calibration plan");
  }
  return inputs;
}

CalibrationResult from_cache(const CalibrationCache& cache, const CalibrationOptions& options) {
  const std::string asked = method_name(options.method, options.percentile);
  if (cache.method != asked) {
    fail("calibration cache '", options.cache_path, "' was made with method ", cache.method,
         ", not ", asked, " (delete it to calibrate again, or ask for ", cache.method, ")");
  }
  CalibrationResult result;
  result.amax = cache.amax;
  result.no_range = cache.no_range;
  result.samples = cache.samples;
  result.method = options.method;
  result.percentile = options.percentile;
  result.from_cache = true;
  return result;
}

}  // namespace

CalibrationResult calibrate(const std::string& model_bytes, const ConvertOptions& convert,
                            const CalibrationOptions& calibration) {
  const std::string hash = model_hash(model_bytes, convert.input_shapes, convert.fuse, convert.freeze);
  if (!calibration.cache_path.empty() && file_exists(calibration.cache_path)) {
    return from_cache(read_calibration_cache(calibration.cache_path, hash), calibration);
  }
  if (calibration.dir.empty()) {
    fail("calibration needs a folder of samples (--calib DIR)",
         calibration.cache_path.empty()
             ? std::string()
             : cat(": the cache '", calibration.cache_path, "' does not exist yet"));
  }
  if (convert.progress) convert.progress("calibrate", 0, 0);
  // The FP32 reference: the same model and shapes as a Float32 plan for GPU 0 (CalibrationDevice)
  // or a CPU plan (and no calibration of its own).
  ConvertOptions fp32 = convert;
  fp32.progress = nullptr;  // its stages are the calibration's, not the conversion's
  fp32.calibration = CalibrationOptions{};
  fp32.int8_exclude.clear();
  fp32.int8_report = false;
  fp32.int8_max_error = 0.0;
  fp32.select_kernels = true;
  // GPU 0 where it takes a Float32 plan of the model; kAuto falls back to the CPU, saying why.
  CalibrationGpu gpu;
  PlanPtr plan;
  ContextPtr gpu_context;
  if (calibration.device != CalibrationDevice::kCpu) {
    gpu = find_calibration_gpu(convert.target);
    if (!gpu.target.empty()) {
      fp32.target = gpu.target;
      fp32.precision = Precision::kFp32;
      try {
        plan = load_plan(convert_onnx(model_bytes, "calibration.onnx", fp32).plan,
                         cat("loading the Float32 plan for GPU 0 '", gpu.name, "' (target ",
                             gpu.target, ")"));
        gpu_context = gpu_calibration_context(plan.get());
      } catch (const ConvertError& e) {
        plan.reset();
        gpu.target.clear();
        gpu.why = e.what();
      }
    }
    if (!plan && calibration.device == CalibrationDevice::kGpu)
      fail("--calib-device gpu: ", gpu.why);
  }
  const bool on_gpu = plan != nullptr;
  if (!on_gpu) {
    fp32.target = "cpu";
    fp32.precision = Precision::kFp16;  // the CPU plan is float32 whatever this says
    plan = load_plan(convert_onnx(model_bytes, "calibration.onnx", fp32).plan,
                     "calibration: loading the FP32 CPU plan");
  }
  const std::vector<jp_tensor_desc> inputs = plan_inputs(plan.get());
  std::vector<CalibrationInput> set_inputs;
  for (const jp_tensor_desc& d : inputs) {
    set_inputs.push_back({d.name, d.dtype, std::vector<int64_t>(d.dims, d.dims + d.rank)});
  }
  const CalibrationSet set(
      calibration.dir, set_inputs, parse_preprocess(calibration.preprocess),
      calibration.max_samples > 0 ? static_cast<size_t>(calibration.max_samples) : 0);
  size_t threads = calibration.threads > 0 ? static_cast<size_t>(calibration.threads)
                                           : std::max(1u, std::thread::hardware_concurrency());
  std::map<std::string, TensorHistogram> stats;
  if (on_gpu) {
    stats = run_gpu_calibration(gpu_context.get(), set, threads, convert.progress);
  } else {
    threads = std::min(threads, set.size());
    stats = run_calibration(plan.get(), set, inputs, threads, convert.progress);
  }

  CalibrationResult result;
  result.samples = set.size();
  result.method = calibration.method;
  result.percentile = calibration.percentile;
  result.device = on_gpu ? cat("GPU 0 '", gpu.name, "'")
                         : cat("the CPU (", threads, " threads",
                               gpu.why.empty() ? std::string() : cat("; not the GPU: ", gpu.why), ")");
  for (const auto& [name, histogram] : stats) {
    const auto amax = compute_amax(histogram, calibration.method, calibration.percentile);
    if (amax) {
      result.amax[name] = *amax;
    } else {
      result.no_range.push_back(name);
    }
  }
  if (!calibration.cache_path.empty()) {
    CalibrationCache cache;
    cache.model_hash = hash;
    cache.method = method_name(calibration.method, calibration.percentile);
    cache.samples = result.samples;
    cache.amax = result.amax;
    cache.no_range = result.no_range;
    write_calibration_cache(calibration.cache_path, cache);
  }
  return result;
}

}  // namespace jetplan::converter
