#include "converter/src/calibrate/calibration_options.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "converter/src/ir/error.h"

namespace jetplan::converter {

std::string method_name(CalibrationMethod method, double percentile) {
  switch (method) {
    case CalibrationMethod::kEntropy: return "entropy";
    case CalibrationMethod::kMinMax: return "minmax";
    case CalibrationMethod::kMse: return "mse";
    case CalibrationMethod::kPercentile: {
      char buffer[64];
      std::snprintf(buffer, sizeof(buffer), "percentile=%.10g", percentile);
      return buffer;
    }
  }
  return "";
}

void parse_method(const std::string& text, CalibrationMethod* method, double* percentile) {
  if (text == "entropy") {
    *method = CalibrationMethod::kEntropy;
  } else if (text == "minmax") {
    *method = CalibrationMethod::kMinMax;
  } else if (text == "mse") {
    *method = CalibrationMethod::kMse;
  } else if (text == "percentile") {
    *method = CalibrationMethod::kPercentile;
    *percentile = 99.99;
  } else if (text.compare(0, 11, "percentile=") == 0) {
    const std::string value = text.substr(11);
    char* end = nullptr;
    const double p = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(p > 0.0 && p <= 100.0)) {
      fail("calibration method '", text, "': the percentile must be a number in (0, 100]");
    }
    *method = CalibrationMethod::kPercentile;
    *percentile = p;
  } else {
    fail("unknown calibration method '", text,
         "' (known: entropy, percentile, percentile=P, minmax, mse)");
  }
}

CalibrationDevice parse_calibration_device(const std::string& text) {
  if (text == "auto") return CalibrationDevice::kAuto;
  if (text == "cpu") return CalibrationDevice::kCpu;
  if (text == "gpu") return CalibrationDevice::kGpu;
  fail("unknown calibration device '", text, "' (known: auto, cpu, gpu)");
}

}  // namespace jetplan::converter
