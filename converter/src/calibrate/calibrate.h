// Post-training calibration: runs the FP32 model over a calibration set and gives each float32
// tensor an amax (the |x| int8 127 stands for), by tensor name. The names are the ONNX value names
// (those of the CPU plan; a GPU plan's NHWC twin "<name>:nhwc" counts as "<name>"): the INT8 pass
// of a GPU conversion looks its tensors up by them.
//
// The model runs through the runtime's public C API (jetplan/jetplan.h), each step observed
// through jp_context_set_step_observer: as a Float32 plan on GPU 0 where there is one that takes
// it (gpu_calibration.h; CalibrationOptions::device), else as the CPU plan, one context per
// thread. Statistics merge exactly (histogram.h), so the result does not depend on the number of
// threads.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "converter/src/calibrate/calibration_options.h"
#include "converter/src/convert.h"

namespace jetplan::converter {

struct CalibrationResult {
  std::map<std::string, float> amax;  // every amax positive and finite
  // float32 tensors with no finite non-zero value in any sample: no scale (never a zero one);
  // the INT8 pass keeps them in floating point. Sorted.
  std::vector<std::string> no_range;
  size_t samples = 0;  // how many samples the statistics came from
  CalibrationMethod method = CalibrationMethod::kEntropy;
  double percentile = 99.99;
  bool from_cache = false;  // read from calibration.cache_path; the model did not run
  std::string device;  // where the model ran: "GPU 0 '<name>'" or "the CPU (N threads)"
};

// Calibrates `model_bytes` (a serialized ONNX ModelProto). From `convert`: input_shapes,
// model_dir, freeze and fuse (the FP32 plan is converted with them), target (preferred for the
// GPU's plan where it is of GPU 0's architecture); precision and calibration are not read. When calibration.cache_path names an existing cache it is read and checked
// (calib_cache.h) and the model does not run (calibration.dir may then be empty); otherwise the
// set in calibration.dir is run and, with a cache_path, the cache written. convert.progress, when
// set, is told "calibrate" and then the samples done of all as they finish (every 100 ms).
// Throws ConvertError naming the file or folder: no data and no cache, bad samples, a cache of
// another model or method, kGpu where no GPU takes the plan (saying why), and the conversion's
// own errors.
CalibrationResult calibrate(const std::string& model_bytes, const ConvertOptions& convert,
                            const CalibrationOptions& calibration);

}  // namespace jetplan::converter
