// What post-training calibration is asked to do (jetplan-convert --calib*): a header of its own so
// that ConvertOptions (convert.h) can hold it while calibrate.h includes convert.h.
#pragma once

#include <string>

namespace jetplan::converter {

// How a tensor's histogram becomes its amax (the value that maps to int8 127):
//   kMinMax      the largest |x| seen
//   kPercentile  the `percentile`-th percentile of |x|
//   kEntropy     the clip minimising the KL divergence between the histogram and its 128-level
//                quantization (the classic TensorRT procedure)
//   kMse         the clip minimising the mean squared error of int8 quantize-dequantize
enum class CalibrationMethod { kEntropy, kPercentile, kMinMax, kMse };

// Where the FP32 model runs (--calib-device): kAuto on GPU 0 when this machine has one that a
// Float32 plan of a known target runs on, else on the CPU backend; kCpu always on the CPU;
// kGpu on the GPU or an error saying why not. The two give the same scales within float32
// rounding (a sum's order): for plans byte-identical across machines, use kCpu or a cache.
enum class CalibrationDevice { kAuto, kCpu, kGpu };

struct CalibrationOptions {
  // The calibration set (calib_data.h says what it may hold); may be empty when cache_path names
  // an existing cache of this model.
  std::string dir;
  // MSE by default: as good as entropy on the trained classifier (tests/accuracy: 99.9% top-1
  // agreement either way) and far better on the trained detector, whose box and class outputs
  // entropy clips hardest (mAP drop 1.19 points with entropy, -0.02 with MSE, 0.07 with
  // percentile, on a CPU where torch trains it slightly differently than on the last ones).
  CalibrationMethod method = CalibrationMethod::kMse;
  double percentile = 99.99;  // kPercentile only, in (0, 100]
  // Images only: "resize=256,crop=224,mean=...,std=...,order=rgb,layout=nchw,scale=255"
  // (calib_data.h, parse_preprocess).
  std::string preprocess;
  // A calibration cache (calib_cache.h): read instead of running the model when it exists and
  // is of this model; written after a run. Empty: none.
  std::string cache_path;
  CalibrationDevice device = CalibrationDevice::kAuto;
  // CPU: contexts run at once; GPU: threads building the histograms. 0:
  // std::thread::hardware_concurrency().
  int threads = 0;
  int max_samples = 0;  // 0: every sample of dir; else the first max_samples by file name
};

// "entropy", "percentile=99.99", "minmax", "mse": the names --calib-method takes and the cache
// records.
std::string method_name(CalibrationMethod method, double percentile);
// Parses such a name into *method and *percentile ("percentile" alone keeps 99.99); throws
// ConvertError naming `text` when it is none of them or the percentile is not in (0, 100].
void parse_method(const std::string& text, CalibrationMethod* method, double* percentile);
// "auto", "cpu", "gpu" (--calib-device); throws ConvertError naming `text` otherwise.
CalibrationDevice parse_calibration_device(const std::string& text);

}  // namespace jetplan::converter
