#include "plan_on_image.h"

#include <cstdio>
#include <cstring>

namespace examples {
namespace {

bool parse_triple(const char* text, float out[3]) {
  return std::sscanf(text, "%f,%f,%f", &out[0], &out[1], &out[2]) == 3;
}

bool check(jp_status s, const std::string& what, std::string* error) {
  if (s == JP_OK) return true;
  *error = what + ": " + jp_status_string(s) + ": " + jp_last_error();
  return false;
}

}  // namespace

const char kCommonUsage[] =
    "[--channels-last] [--labels a,b,...] [--fit stretch|letterbox|crop] [--mean R,G,B] "
    "[--std R,G,B] [--bgr]";

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
    out.push_back(text.substr(start, comma - start));
  out.push_back(text.substr(start));
  return out;
}

OptionResult common_option(const std::string& a, const char* v, CommonOptions* o) {
  bool ok = true;
  if (a == "--plan") o->plan = v;
  else if (a == "--image") o->image = v;
  else if (a == "--out") o->out = v;
  else if (a == "--labels") o->labels = split_commas(v);
  else if (a == "--channels-last") o->channels_last = true;
  else if (a == "--bgr") o->input.bgr = true;
  else if (a == "--mean") ok = parse_triple(v, o->input.mean);
  else if (a == "--std") ok = parse_triple(v, o->input.std);
  else if (a == "--fit") {
    const std::string f = v;
    ok = f == "stretch" || f == "letterbox" || f == "crop";
    o->input.fit = f == "letterbox" ? JP_FIT_LETTERBOX
                   : f == "crop"    ? JP_FIT_CENTER_CROP
                                    : JP_FIT_STRETCH;
  } else {
    return OptionResult::kUnknown;
  }
  return ok ? OptionResult::kTaken : OptionResult::kBadValue;
}

}  // namespace

bool parse_command_line(int argc, char** argv, const char* program, const char* usage,
                        CommonOptions* common, OwnOption own_option, void* own) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool flag_only = a == "--bgr" || a == "--channels-last";
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!flag_only && v == nullptr) {
      std::fprintf(stderr, "%s: %s needs a value\n", program, a.c_str());
      return false;
    }
    OptionResult r = common_option(a, v, common);
    if (r == OptionResult::kUnknown) r = own_option(a, v, own);
    if (r == OptionResult::kUnknown) {
      std::fprintf(stderr, "%s: unknown option '%s'\n", program, a.c_str());
      return false;
    }
    if (r == OptionResult::kBadValue) {
      std::fprintf(stderr, "%s: bad value '%s' for %s\n", program, v, a.c_str());
      return false;
    }
    if (!flag_only) ++i;
  }
  if (common->plan.empty() || common->image.empty()) {
    std::fprintf(stderr, "usage: %s %s\n", program, usage);
    return false;
  }
  return true;
}

PlanOnImage::~PlanOnImage() {
  jp_preprocessor_destroy(pre_);
  jp_context_destroy(ctx_);
  jp_plan_destroy(plan_);
}

bool PlanOnImage::run(const std::string& plan_path, const Picture& picture, const InputOptions& o,
                      std::string* error) {
  if (!check(jp_plan_load_file(plan_path.c_str(), &plan_), "loading plan '" + plan_path + "'",
             error) ||
      !check(jp_context_create(plan_, nullptr, &ctx_), "creating a context", error))
    return false;
  jp_preprocess_desc desc{};
  desc.format = JP_PIXEL_RGB8;
  desc.width = picture.width;
  desc.height = picture.height;
  desc.fit = o.fit;
  desc.pad_value = 114.f;
  desc.bgr = o.bgr ? 1 : 0;
  std::memcpy(desc.mean, o.mean, sizeof desc.mean);
  std::memcpy(desc.std, o.std, sizeof desc.std);
  jp_tensor_desc input;
  if (!check(jp_preprocessor_create(ctx_, 0, &desc, &pre_), "preparing input 0", error) ||
      !check(jp_preprocessor_geometry(pre_, scale_, offset_), "reading the geometry", error) ||
      !check(jp_plan_input_desc(plan_, 0, &input), "reading input 0", error))
    return false;
  const bool nchw = input.dims[1] == 3;  // the preprocessor accepted [1, 3, H, W] or [1, H, W, 3]
  input_h_ = int(nchw ? input.dims[2] : input.dims[1]);
  input_w_ = int(nchw ? input.dims[3] : input.dims[2]);
  std::memcpy(jp_preprocessor_frame(pre_, 0), picture.rgb.data(), picture.rgb.size());
  return check(jp_preprocessor_run(pre_, 0), "preprocessing the image", error) &&
         check(jp_context_enqueue(ctx_), "running the plan", error) &&
         check(jp_context_synchronize(ctx_), "running the plan", error);
}

bool PlanOnImage::float_output(int index, jp_tensor_desc* desc, const float** data, size_t* bytes,
                               std::string* error) const {
  const void* raw = nullptr;
  if (!check(jp_context_output_desc(ctx_, index, desc), "reading output " + std::to_string(index),
             error) ||
      !check(jp_context_get_output(ctx_, index, &raw, bytes),
             "reading output " + std::to_string(index), error))
    return false;
  if (desc->dtype != JP_FLOAT32) {
    *error = std::string("output '") + desc->name + "' is not Float32";
    return false;
  }
  *data = static_cast<const float*>(raw);
  return true;
}

std::string dims_text(const jp_tensor_desc& d) {
  std::string s = "[";
  for (int i = 0; i < d.rank; ++i) s += (i ? ", " : "") + std::to_string(d.dims[i]);
  return s + "]";
}

}  // namespace examples
