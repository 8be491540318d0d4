#include "converter/src/precision/int8_error.h"

#include <jetplan/jetplan.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <thread>

#include "converter/src/calibrate/plan_handles.h"
#include "converter/src/ir/error.h"
#include "converter/src/lower/gpu_lower.h"
#include "converter/src/memory/memory_plan.h"
#include "converter/src/serialize/serialize.h"
#include "runtime/tools/npy.h"

namespace jetplan::converter {
namespace {

void check(jp_status status, const std::string& what) {
  check_runtime(status, "INT8 error: " + what);
}

PlanPtr load(const std::vector<uint8_t>& bytes, const char* which) {
  return load_plan(bytes, cat("INT8 error: ", which));
}

// Output `index` of the context's last run as float values.
std::vector<float> output_values(const jp_context* ctx, int32_t index) {
  jp_tensor_desc d;
  check(jp_context_output_desc(ctx, index, &d), "an output's description");
  const void* data = nullptr;
  size_t bytes = 0;
  check(jp_context_get_output(ctx, index, &data, &bytes), cat("output ", d.name));
  const size_t item = std::max<size_t>(1, tools::dtype_size(d.dtype));
  return tensor_floats(d.dtype, data, bytes / item);
}

// Sets sample `i`'s inputs on ctx (the plans bind their inputs in the draft's order, the set's).
void set_sample(jp_context* ctx, const CalibrationSet& set, size_t i) {
  set_inputs(ctx, set.load(i), "INT8 error: sample " + set.sample_path(i));
}

}  // namespace

void parallel_for(size_t count, size_t threads, const std::function<void(size_t)>& fn) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::max<size_t>(1, std::min(threads, count));
  std::atomic<size_t> next{0};
  std::vector<std::string> errors(threads);
  auto work = [&](size_t t) {
    try {
      for (size_t i = next++; i < count; i = next++) fn(i);
    } catch (const std::exception& e) {  // out of memory as well: reported, not a terminate
      errors[t] = e.what();
      next = count;
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(work, t);
  work(0);
  for (std::thread& w : workers) w.join();
  for (const std::string& e : errors)
    if (!e.empty()) throw ConvertError(e);
}

PlanDraft nhwc_draft(PlanDraft lowered, const Int8Options* int8, Int8Summary* summary) {
  gpu_layout(&lowered);
  if (int8 != nullptr) {
    const Int8Summary s = int8_precision(&lowered, *int8);
    if (summary != nullptr) *summary = s;
  }
  place_gpu_moves(&lowered);
  remove_unused_tensors(&lowered);
  alias_views(&lowered);
  assign_memory(&lowered);
  return lowered;
}

std::vector<uint8_t> nhwc_cpu_plan(const PlanDraft& lowered, const Int8Options* int8,
                                   Int8Summary* summary) {
  return serialize_plan(nhwc_draft(lowered, int8, summary), TargetDesc{}, PlanMetadata{});
}

Int8ErrorMeter::Int8ErrorMeter(const PlanDraft& lowered, const CalibrationSet& set, size_t samples)
    : lowered_(lowered), set_(set), samples_(samples > 0 ? std::min(samples, set.size()) : set.size()) {
  fp32_plan_ = nhwc_cpu_plan(lowered, nullptr);
  const PlanPtr plan = load(fp32_plan_, "loading the FP32 CPU plan");
  for (int32_t i = 0; i < jp_plan_num_outputs(plan.get()); ++i) {
    jp_tensor_desc d;
    check(jp_plan_output_desc(plan.get(), i, &d), "the FP32 plan's outputs");
    output_names_.push_back(d.name);
  }
  reference_.resize(samples_);
  // One context per sample: the FP32 plan runs once per sample, in parallel.
  parallel_for(samples_, 0, [&](size_t i) {
    jp_context* c = nullptr;
    check(jp_context_create(plan.get(), nullptr, &c), "a context of the FP32 plan");
    const ContextPtr ctx(c);
    set_sample(c, set_, i);
    check(jp_context_run(c), "running the FP32 plan on " + set_.sample_path(i));
    for (size_t o = 0; o < output_names_.size(); ++o)
      reference_[i].push_back(output_values(c, static_cast<int32_t>(o)));
  });
}

std::vector<double> Int8ErrorMeter::noise_of(const std::vector<uint8_t>& bytes,
                                             size_t threads) const {
  const PlanPtr plan = load(bytes, "loading an INT8 CPU plan");
  const size_t outputs = output_names_.size();
  // Per sample sums, added up in sample order afterwards: the result does not depend on threads.
  std::vector<std::vector<std::pair<double, double>>> sums(
      samples_, std::vector<std::pair<double, double>>(outputs));
  parallel_for(samples_, threads, [&](size_t i) {
    jp_context* c = nullptr;
    check(jp_context_create(plan.get(), nullptr, &c), "a context of an INT8 plan");
    const ContextPtr ctx(c);
    set_sample(c, set_, i);
    check(jp_context_run(c), "running an INT8 plan on " + set_.sample_path(i));
    for (size_t o = 0; o < outputs; ++o) {
      const std::vector<float> got = output_values(c, static_cast<int32_t>(o));
      const std::vector<float>& want = reference_[i][o];
      if (got.size() != want.size())
        fail("INT8 error: output ", output_names_[o], " has ", got.size(), " values, FP32 ",
             want.size());
      for (size_t e = 0; e < want.size(); ++e) {
        const double d = double(got[e]) - want[e];
        sums[i][o].first += double(want[e]) * want[e];
        sums[i][o].second += std::isnan(d) ? INFINITY : d * d;
      }
    }
  });
  std::vector<double> noise(outputs);
  for (size_t o = 0; o < outputs; ++o) {
    double signal = 0.0, err = 0.0;
    for (size_t i = 0; i < samples_; ++i) {
      signal += sums[i][o].first;
      err += sums[i][o].second;
    }
    noise[o] = err == 0.0 ? 0.0 : signal == 0.0 ? INFINITY : err / signal;
  }
  return noise;
}

std::vector<double> Int8ErrorMeter::output_noise(const Int8Options& options) const {
  return noise_of(nhwc_cpu_plan(lowered_, &options), 0);
}

std::vector<double> Int8ErrorMeter::shares(const Int8Options& options,
                                           const std::vector<Int8Step>& steps,
                                           const std::vector<double>& noise) const {
  double total = 0.0;
  for (double n : noise) total += n;
  std::vector<double> drop(steps.size(), 0.0);
  // One plan per step, built and run on its own thread (each sample in turn).
  parallel_for(steps.size(), 0, [&](size_t s) {
    Int8Options without = options;
    without.exclude.insert(steps[s].step);
    double rest = 0.0;
    for (double n : noise_of(nhwc_cpu_plan(lowered_, &without), 1)) rest += n;
    drop[s] = std::max(0.0, total - rest);
  });
  double sum = 0.0;
  for (double d : drop) sum += d;
  for (double& d : drop) d = sum > 0.0 && std::isfinite(sum) ? d / sum : 0.0;
  return drop;
}

double worst_output_error(const std::vector<double>& noise) {
  double worst = 0.0;
  for (double n : noise) worst = std::max(worst, n);
  return std::sqrt(worst);
}

Int8Fallback fit_int8_error(const Int8ErrorMeter& meter, double max_error,
                            const std::vector<Int8Step>& steps, Int8Options* options) {
  Int8Fallback r;
  const std::vector<double> noise = meter.output_noise(*options);
  r.error_before = r.error_after = worst_output_error(noise);
  if (r.error_before <= max_error || steps.empty()) return r;
  const std::vector<double> share = meter.shares(*options, steps, noise);
  std::vector<size_t> order(steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return share[a] > share[b]; });
  auto moving = [&](size_t k) {
    Int8Options o = *options;
    for (size_t i = 0; i < k; ++i) o.exclude.insert(steps[order[i]].step);
    return o;
  };
  // The fewest steps (in order of share) that bring the error under the bound. Moving every
  // step leaves the FP32 plan itself (error 0), so the search ends inside [1, n].
  size_t lo = 1, hi = steps.size();
  double error_hi = 0.0;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const double e = worst_output_error(meter.output_noise(moving(mid)));
    if (e <= max_error) {
      hi = mid;
      error_hi = e;
    } else {
      lo = mid + 1;
    }
  }
  if (hi == steps.size()) error_hi = worst_output_error(meter.output_noise(moving(hi)));
  *options = moving(hi);
  r.error_after = error_hi;
  for (size_t i = 0; i < hi; ++i) {
    r.moved.push_back(steps[order[i]].step);
    r.moved_shares.push_back(share[order[i]]);
  }
  return r;
}

}  // namespace jetplan::converter
