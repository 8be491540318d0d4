// What the detect and segment examples share on the jetplan side: a plan loaded, a context, the
// picture written into input 0 by jp_preprocessor (resize and normalize; on CUDA plans on the
// GPU), one run, and output 0 read back as Float32. Also the command-line options of the input.
#pragma once

#include <string>
#include <vector>

#include "jetplan/jetplan.h"
#include "picture.h"

namespace examples {

struct InputOptions {
  jp_fit fit = JP_FIT_STRETCH;
  float mean[3] = {0.f, 0.f, 0.f};  // pixel / 255, what tests/accuracy's models take
  float std[3] = {1.f, 1.f, 1.f};
  bool bgr = false;
};

// The command line both examples take, besides their own options.
struct CommonOptions {
  std::string plan, image, out;
  InputOptions input;
  bool channels_last = false;       // the output is [1, H, W, C] instead of [1, C, H, W]
  std::vector<std::string> labels;  // class names, from "--labels a,b,c"
};
extern const char kCommonUsage[];

// What an example's own option handler says of `flag` and its value.
enum class OptionResult { kTaken, kBadValue, kUnknown };
using OwnOption = OptionResult (*)(const std::string& flag, const char* value, void* own);

// Parses --plan, --image, --out, --labels, --channels-last, --fit, --mean, --std, --bgr into
// *common and hands every other "--flag value" to own_option. False, with the message (and
// `usage` when --plan or --image is missing) printed, on a bad command line.
bool parse_command_line(int argc, char** argv, const char* program, const char* usage,
                        CommonOptions* common, OwnOption own_option, void* own);

// The plan, its context and preprocessor; destroys them in order.
class PlanOnImage {
 public:
  PlanOnImage() = default;
  PlanOnImage(const PlanOnImage&) = delete;
  PlanOnImage& operator=(const PlanOnImage&) = delete;
  ~PlanOnImage();

  // Loads `plan_path`, writes `picture` into input 0 and runs the plan once. False with *error
  // set (the call that failed and the runtime's message) on any failure.
  bool run(const std::string& plan_path, const Picture& picture, const InputOptions& o,
           std::string* error);
  // Output `index` as Float32: its desc and data (owned by the context). False with *error set
  // when it is not Float32 or cannot be read.
  bool float_output(int index, jp_tensor_desc* desc, const float** data, size_t* bytes,
                    std::string* error) const;
  // Input pixel coordinates to picture coordinates (jp_preprocessor_geometry).
  float picture_x(float input_x) const { return input_x * scale_[0] + offset_[0]; }
  float picture_y(float input_y) const { return input_y * scale_[1] + offset_[1]; }
  // The input's height and width.
  int input_height() const { return input_h_; }
  int input_width() const { return input_w_; }
  const char* device() const { return plan_ != nullptr ? jp_plan_device_name(plan_) : ""; }
  // The context (for post-processing bound to it); valid while this object lives.
  jp_context* context() const { return ctx_; }

 private:
  jp_plan* plan_ = nullptr;
  jp_context* ctx_ = nullptr;
  jp_preprocessor* pre_ = nullptr;
  float scale_[2] = {1.f, 1.f}, offset_[2] = {0.f, 0.f};
  int input_h_ = 0, input_w_ = 0;
};

// "[1, 3, 224, 224]"
std::string dims_text(const jp_tensor_desc& d);

}  // namespace examples
