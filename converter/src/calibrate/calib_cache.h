// The calibration cache: a text file a later conversion reads instead of running the model.
//
//   jetplan-calibration 1 <model hash> <method> <samples>
//   <amax as a C hex float (%a)> <tensor name>
//   ...
//
// One line per tensor, sorted by name. The hash (model_hash) covers the model bytes, the pinned
// input shapes and fusion (fusion decides which tensors the plan has), so a cache is never
// applied to another model. Names are escaped: '\\' as "\\\\", line feed as "\\n", carriage
// return as "\\r"; everything after the first space is the name. A tensor that had no finite
// non-zero value in any sample (no scale) is written with "none" for its amax.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "converter/src/calibrate/calibration_options.h"
#include "converter/src/ir/graph.h"

namespace jetplan::converter {

constexpr int kCalibrationCacheVersion = 1;

struct CalibrationCache {
  std::string model_hash;
  std::string method;  // method_name()
  size_t samples = 0;
  std::map<std::string, float> amax;  // every amax positive and finite
  std::vector<std::string> no_range;  // sorted
};

// Lower-case hex SHA-256 of the model bytes, the pinned input shapes (by name), `fuse` and the
// frozen inputs (--freeze NAME=VALUE, by name: a frozen value picks the model's branches).
std::string model_hash(const std::string& model_bytes,
                       const std::map<std::string, Shape>& input_shapes, bool fuse,
                       const std::map<std::string, std::string>& freeze = {});

// The file's text (exactly what write_calibration_cache writes).
std::string format_calibration_cache(const CalibrationCache& cache);

// Writes through a temporary file renamed into place: a failure leaves no partial cache. Throws
// ConvertError naming `path`.
void write_calibration_cache(const std::string& path, const CalibrationCache& cache);

// Reads and checks the cache at `path`. Throws ConvertError naming the file: unreadable; another
// format version; another model (both hashes); a malformed line (its number); an amax that is
// zero, negative, NaN or infinite (the tensor); a tensor named twice.
CalibrationCache read_calibration_cache(const std::string& path, const std::string& expected_hash);
// The same for the text itself (`path` only names it in messages).
CalibrationCache parse_calibration_cache(const std::string& text, const std::string& path,
                                         const std::string& expected_hash);

}  // namespace jetplan::converter
