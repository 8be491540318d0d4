#include "converter/src/calibrate/gpu_calibration.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "converter/src/calibrate/plan_handles.h"
#include "converter/src/ir/error.h"
#include "converter/src/precision/int8_saturate.h"
#include "converter/src/select/targets.h"

namespace jetplan::converter {
namespace {

// Threads that add observed tensors to histograms, each to histograms of its own (merged at the
// end). What waits for them is bounded: add() blocks while more than kMaxPending floats are
// queued, so a GPU that outruns the histograms does not fill the host's memory.
class HistogramPool {
 public:
  static constexpr size_t kMaxPending = size_t{64} << 20;  // floats (256 MiB)

  explicit HistogramPool(size_t threads) : stats_(threads) {
    for (size_t t = 0; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  ~HistogramPool() { stop(); }
  HistogramPool(const HistogramPool&) = delete;
  HistogramPool& operator=(const HistogramPool&) = delete;

  void add(std::string name, const float* data, size_t count) {
    Job job{std::move(name), std::vector<float>(data, data + count)};
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [&] { return pending_ + count <= kMaxPending || queue_.empty(); });
    pending_ += count;
    queue_.push_back(std::move(job));
    ready_.notify_one();
  }

  // Waits for every queued tensor; the histograms of all threads merged, by name.
  std::map<std::string, TensorHistogram> finish() {
    stop();
    std::map<std::string, TensorHistogram> merged;
    for (const auto& s : stats_)
      for (const auto& [name, histogram] : s) merged[name].merge(histogram);
    return merged;
  }

 private:
  struct Job {
    std::string name;
    std::vector<float> data;
  };

  void work(size_t t) {
    auto& stats = stats_[t];
    while (true) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and nothing left
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      stats[job.name].add(job.data.data(), job.data.size());
      {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_ -= job.data.size();
      }
      space_.notify_all();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (std::thread& w : workers_)
      if (w.joinable()) w.join();
  }

  std::vector<std::unordered_map<std::string, TensorHistogram>> stats_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<Job> queue_;
  size_t pending_ = 0;
  bool stopping_ = false;
};

// What the observer of one sample's run sees: the graph tensors already counted in this sample
// (a tensor and its NHWC twin hold the same values), and the first failure to queue one (the
// observer is called from C and must not throw).
struct Observation {
  HistogramPool* pool = nullptr;
  std::set<std::string> seen;
  std::string error;
};

void observe(void* user, int32_t, const char* name, jp_dtype dtype, const int64_t* dims,
             int32_t rank, const void* data) {
  if (dtype != JP_FLOAT32) return;  // only float32 tensors are candidates for int8
  auto* o = static_cast<Observation*>(user);
  if (!o->error.empty()) return;
  try {
    std::string graph = draft_graph_name(name);
    if (!o->seen.insert(graph).second) return;
    size_t elements = 1;
    for (int32_t d = 0; d < rank; ++d) elements *= static_cast<size_t>(dims[d]);
    o->pool->add(std::move(graph), static_cast<const float*>(data), elements);
  } catch (const std::exception& e) {
    o->error = cat("observing tensor '", name, "': ", e.what());
  }
}

void observe_nothing(void*, int32_t, const char*, jp_dtype, const int64_t*, int32_t, const void*) {}

}  // namespace

CalibrationGpu find_calibration_gpu(const std::string& preferred) {
  CalibrationGpu gpu;
  jp_device_desc device{};
  if (jp_cuda_device(&device) != JP_OK) {
    gpu.why = cat("no GPU: ", jp_last_error());
    return gpu;
  }
  gpu.name = device.name;
  const auto takes = [&](const Target& t) {
    return t.plan.backend == fb::Backend::CUDA &&
           static_cast<int32_t>(t.plan.sm_arch) == device.sm_arch;
  };
  if (preferred != "cpu") {
    try {
      if (takes(find_target(preferred))) {
        gpu.target = preferred;
        return gpu;
      }
    } catch (const ConvertError&) {
      // not a target of this GPU's: look for one below
    }
  }
  std::string first;
  for (const std::string& name : known_targets()) {
    if (name == "cpu") continue;
    const Target t = find_target(name);
    if (!takes(t)) continue;
    if (first.empty()) first = name;
    if (static_cast<int32_t>(t.device.sm_count) == device.sm_count) {
      gpu.target = name;
      return gpu;
    }
  }
  gpu.target = first;
  if (first.empty()) {
    std::string known;
    for (const std::string& t : known_targets()) known += (known.empty() ? "" : ", ") + t;
    gpu.why = cat("GPU 0 '", device.name, "' is sm_", device.sm_arch,
                  " and no known target is (known: ", known, ")");
  }
  return gpu;
}

ContextPtr gpu_calibration_context(const jp_plan* plan) {
  jp_context* raw = nullptr;
  check_runtime(jp_context_create(plan, nullptr, &raw), "creating a context on GPU 0");
  ContextPtr ctx(raw);
  // Setting an observer allocates its staging; run_gpu_calibration's own then allocates nothing.
  check_runtime(jp_context_set_step_observer(ctx.get(), observe_nothing, nullptr),
                "observing the plan's steps on GPU 0");
  return ctx;
}

std::map<std::string, TensorHistogram> run_gpu_calibration(jp_context* ctx,
                                                           const CalibrationSet& set,
                                                           size_t threads,
                                                           const ProgressFn& progress) {
  HistogramPool pool(std::max<size_t>(threads, 1));
  Observation observation;
  observation.pool = &pool;
  check_runtime(jp_context_set_step_observer(ctx, observe, &observation),
                "calibration on the GPU: observing the plan's steps");
  const std::vector<CalibrationInput>& inputs = set.inputs();
  if (progress) progress("calibrate", 0, set.size());
  auto told = std::chrono::steady_clock::now();
  for (size_t i = 0; i < set.size(); ++i) {
    const std::string sample = cat("calibration sample '", set.sample_path(i), "'");
    const std::vector<std::vector<uint8_t>> buffers = set.load(i);
    set_inputs(ctx, buffers, sample);
    observation.seen.clear();
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (inputs[k].dtype != JP_FLOAT32) continue;
      observation.seen.insert(inputs[k].name);
      pool.add(inputs[k].name, reinterpret_cast<const float*>(buffers[k].data()),
               buffers[k].size() / sizeof(float));
    }
    check_runtime(jp_context_run(ctx), cat(sample, " on GPU 0"));
    if (!observation.error.empty()) fail(sample, ": ", observation.error);
    // Told every 100 ms, as the CPU calibration's progress is, and at the end.
    const auto now = std::chrono::steady_clock::now();
    if (progress && (now - told >= std::chrono::milliseconds(100) || i + 1 == set.size())) {
      progress("calibrate", i + 1, set.size());
      told = now;
    }
  }
  return pool.finish();
}

}  // namespace jetplan::converter
