// How far an INT8 plan's outputs land from FP32, and which INT8 steps that error comes from
// (jetplan-convert --int8-report and --int8-max-error).
//
// Everything runs on CPU plans of one lowered draft: the FP32 plan (the GPU pipeline up to its
// NHWC layout) and INT8 plans (the same with the INT8 pass, under some exclusions), so the tensors
// have the same names and layouts and the CPU twins compute the INT8 steps with the GPU's integer
// arithmetic. Errors are measured on the first samples of the calibration set.
//
// A graph output's error is its relative noise power: sum (int8 - fp32)^2 / sum fp32^2 over the
// samples (its SNR is -10 log10 of it; the relative RMS error its square root). A step's share of
// the output error is measured, not modelled: the outputs' summed noise power of the INT8 plan,
// less that of the same plan with this one step moved back to FP16, over the sum of that
// difference for every step (leave one out; a step whose removal does not lower the noise has
// share 0). Noise from independent roundings adds, so the shares say where the error comes from;
// where steps' errors cancel or compound the shares are approximate, and --int8-max-error
// measures the plan it chooses rather than trusting them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "converter/src/calibrate/calib_data.h"
#include "converter/src/precision/int8_precision.h"

namespace jetplan::converter {

// A CPU plan of the GPU pipeline from `lowered` up to its Float16 pass: NHWC layout, then the
// INT8 pass with `int8` (none when null), whose summary goes to `summary` when given. Also what
// jetplan-convert --target cpu --precision int8 writes (with the target's metadata).
PlanDraft nhwc_draft(PlanDraft lowered, const Int8Options* int8, Int8Summary* summary = nullptr);
std::vector<uint8_t> nhwc_cpu_plan(const PlanDraft& lowered, const Int8Options* int8,
                                   Int8Summary* summary = nullptr);

class Int8ErrorMeter {
 public:
  // Runs the FP32 plan of `lowered` on the first `samples` samples of `set` (all when 0; `set`
  // must outlive the meter) and keeps its graph outputs. Throws ConvertError when it cannot.
  Int8ErrorMeter(const PlanDraft& lowered, const CalibrationSet& set, size_t samples);

  size_t samples() const { return samples_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  const std::vector<uint8_t>& fp32_plan() const { return fp32_plan_; }
  const CalibrationSet& set() const { return set_; }

  // The relative noise power of each graph output of the INT8 plan made with `options`.
  std::vector<double> output_noise(const Int8Options& options) const;

  // Each step's share of the output error (above) for the INT8 plan made with `options`, whose
  // steps are `steps` (what the pass reported for it). `noise`: that plan's output_noise.
  std::vector<double> shares(const Int8Options& options, const std::vector<Int8Step>& steps,
                             const std::vector<double>& noise) const;

 private:
  std::vector<double> noise_of(const std::vector<uint8_t>& plan, size_t threads) const;

  const PlanDraft& lowered_;
  const CalibrationSet& set_;
  size_t samples_ = 0;
  std::vector<uint8_t> fp32_plan_;
  std::vector<std::string> output_names_;
  std::vector<std::vector<std::vector<float>>> reference_;  // [sample][output] values
};

// Runs fn(0), ..., fn(count - 1) on up to `threads` threads (0: one per core); the first
// exception is rethrown as a ConvertError once all have stopped.
void parallel_for(size_t count, size_t threads, const std::function<void(size_t)>& fn);

// The largest relative RMS error of the outputs (the square root of the largest noise power).
double worst_output_error(const std::vector<double>& noise);

// --int8-max-error: what moving steps back to FP16 did.
struct Int8Fallback {
  double error_before = 0.0, error_after = 0.0;  // worst_output_error of the plans
  std::vector<std::string> moved;                // the steps moved back, largest share first
  std::vector<double> moved_shares;              // their shares in the first plan
};

// Moves the INT8 steps with the largest shares of the output error back to FP16 (adding them to
// options->exclude) until every output's relative RMS error is at most `max_error`: the fewest
// steps in order of share that reach the bound, found by bisection over that order, each
// candidate plan measured. `steps`: the steps of the plan made with *options.
Int8Fallback fit_int8_error(const Int8ErrorMeter& meter, double max_error,
                            const std::vector<Int8Step>& steps, Int8Options* options);

}  // namespace jetplan::converter
