// The per-step error of an INT8 plan (jetplan-convert --int8-report FILE): how far each INT8
// conv's output, and each graph output, lands from the FP32 model's on calibration samples.
//
// Two CPU plans of the same draft are run: the FP32 one (the GPU pipeline up to its NHWC layout)
// and the INT8 one (the same with the INT8 pass), so both hold the same tensors under the same
// names and layouts, and the CPU twins compute the INT8 steps with the GPU's arithmetic. Each
// step's SNR is 10 log10(sum ref^2 / sum (int8 - ref)^2) over the samples, the INT8 side's Int8
// tensors dequantized with their scale. A step's SNR includes the error of every INT8 step
// before it; the table shows where the output's error comes from as it grows.
#pragma once

#include <string>
#include <vector>

#include "converter/src/calibrate/calib_data.h"
#include "converter/src/precision/int8_precision.h"

namespace jetplan::converter {

struct Int8ReportRow {
  std::string step;    // the INT8 step, or "(output)" for a graph output
  std::string tensor;  // what it writes
  float scale = 0.f;   // its Int8 output's scale; 0 where it writes a float tensor
  double snr_db = 0.0;
};

struct Int8Report {
  size_t samples = 0;
  std::vector<Int8ReportRow> rows;  // the INT8 steps in plan order, then the graph outputs
};

// Runs `fp32_plan` and `int8_plan` (CPU plans, see above) on the first `max_samples` samples of
// `set` (all when 0), one pair of contexts per thread. `steps`: the INT8 steps the pass made.
// Throws ConvertError when a plan does not load or run.
Int8Report measure_int8_error(const std::vector<uint8_t>& fp32_plan,
                              const std::vector<uint8_t>& int8_plan, const CalibrationSet& set,
                              const std::vector<Int8Step>& steps, size_t max_samples);

// The report as a terminal table (one line a row) and as JSON.
std::string format_int8_report(const Int8Report& report);
std::string int8_report_json(const Int8Report& report);

}  // namespace jetplan::converter
