// The per-step error of an INT8 plan (jetplan-convert --int8-report FILE): how far each INT8
// conv's output, and each graph output, lands from the FP32 model's on calibration samples.
//
// Two CPU plans of the same draft are run: the FP32 one (the GPU pipeline up to its NHWC layout)
// and the INT8 one (the same with the INT8 pass), so both hold the same tensors under the same
// names and layouts, and the CPU twins compute the INT8 steps with the GPU's arithmetic. Each
// step's SNR is 10 log10(sum ref^2 / sum (int8 - ref)^2) over the samples, the INT8 side's Int8
// tensors dequantized with their scale. A step's SNR includes the error of every INT8 step
// before it; the table shows where the output's error comes from as it grows. Each step's share
// of the output error is measured by leaving it out (precision/int8_error.h).
#pragma once

#include <string>
#include <vector>

#include "converter/src/calibrate/calib_data.h"
#include "converter/src/precision/int8_error.h"
#include "converter/src/precision/int8_precision.h"

namespace jetplan::converter {

struct Int8ReportRow {
  std::string step;    // the INT8 step, or "(output)" for a graph output
  std::string op;      // the step's op ("Conv+Add+Relu"); empty for an output
  std::string tensor;  // what it writes
  float scale = 0.f;   // its Int8 output's scale; 0 where it writes a float tensor
  double snr_db = 0.0;
  double share = -1.0;  // its share of the output error in [0, 1]; -1 for an output
};

struct Int8Report {
  size_t samples = 0;
  std::vector<Int8ReportRow> rows;  // the INT8 steps in plan order, then the graph outputs
  std::vector<std::string> moved;  // steps --int8-max-error moved back to FP16 (not in rows)
  double max_error = 0.0;          // its bound (0: not given)
};

// Runs the meter's FP32 plan and `int8_plan` (CPU plans of the draft the meter has, made with
// `options`, whose pass reported `steps`) on the meter's samples, one pair of contexts per
// thread, and measures each step's share of the output error. Throws ConvertError when a plan
// does not load or run.
Int8Report measure_int8_error(const Int8ErrorMeter& meter, const std::vector<uint8_t>& int8_plan,
                              const Int8Options& options, const std::vector<Int8Step>& steps);

// The report as a terminal table (one line a row) and as JSON.
std::string format_int8_report(const Int8Report& report);
std::string int8_report_json(const Int8Report& report);

}  // namespace jetplan::converter
