// segment: a segmentation plan on one image. The image is resized into the plan's input
// (jp_preprocessor), the plan runs once, a jp_class_map takes each pixel's class from the
// logits (on the GPU for CUDA plans), and the class map (in the PASCAL VOC colours) is blended
// over the image into a PNG of the image's size; the class histogram is printed.
//
//   segment --plan segmenter.jplan --image photo.png [--out overlay.png] [--alpha 0.5]
//           [--channels-last] [--labels background,road,...]
//           [--fit stretch|letterbox|crop] [--mean R,G,B] [--std R,G,B] [--bgr]
//
// The logits are output 0, Float32, [1, C, H, W] (or [1, H, W, C] with --channels-last), at
// the input's resolution or any other: the overlay samples the class map at each image pixel.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/picture.h"
#include "../common/plan_on_image.h"

namespace {

struct Options {
  examples::CommonOptions common;
  float alpha = 0.5f;
};

examples::OptionResult own_option(const std::string& flag, const char* value, void* own) {
  if (flag != "--alpha") return examples::OptionResult::kUnknown;
  float& alpha = static_cast<Options*>(own)->alpha;
  alpha = std::strtof(value, nullptr);
  return alpha >= 0.f && alpha <= 1.f ? examples::OptionResult::kTaken
                                      : examples::OptionResult::kBadValue;
}

bool parse(int argc, char** argv, Options* o) {
  o->common.out = "overlay.png";
  const std::string usage = std::string("--plan segmenter.jplan --image photo.png ") +
                            "[--out overlay.png] [--alpha 0.5] " + examples::kCommonUsage;
  return examples::parse_command_line(argc, argv, "segment", usage.c_str(), &o->common,
                                      own_option, o);
}

// Blends the class of each picture pixel over it: the input pixel it came from (the inverse of
// the preprocessor's geometry), then the class map's pixel (nearest) at the map's resolution.
void overlay(examples::Picture* pic, const std::vector<int32_t>& classes, int map_h, int map_w,
             const examples::PlanOnImage& plan, float alpha) {
  const float sx = float(plan.input_width()) / float(map_w);
  const float sy = float(plan.input_height()) / float(map_h);
  const float x_scale = plan.picture_x(1.f) - plan.picture_x(0.f);
  const float y_scale = plan.picture_y(1.f) - plan.picture_y(0.f);
  for (int y = 0; y < pic->height; ++y) {
    const float iy = (float(y) + 0.5f - plan.picture_y(0.f)) / y_scale;  // input pixels
    const int my = int(std::floor(iy / sy));
    if (my < 0 || my >= map_h) continue;  // letterbox bars: no class
    for (int x = 0; x < pic->width; ++x) {
      const float ix = (float(x) + 0.5f - plan.picture_x(0.f)) / x_scale;
      const int mx = int(std::floor(ix / sx));
      if (mx < 0 || mx >= map_w) continue;
      const examples::Rgb c = examples::class_colour(classes[size_t(my) * map_w + mx]);
      examples::Rgb* p = pic->at(x, y);
      p->r = uint8_t(std::lround(p->r * (1.f - alpha) + c.r * alpha));
      p->g = uint8_t(std::lround(p->g * (1.f - alpha) + c.g * alpha));
      p->b = uint8_t(std::lround(p->b * (1.f - alpha) + c.b * alpha));
    }
  }
}

int run(const Options& opt) {
  const examples::CommonOptions& o = opt.common;
  std::string error;
  examples::Picture pic;
  examples::PlanOnImage plan;
  jp_tensor_desc out;
  const float* logits = nullptr;  // the shape is what matters here: the class map reads the output
  size_t bytes = 0;
  if (!examples::load_picture(o.image, &pic, &error) || !plan.run(o.plan, pic, o.input, &error) ||
      !plan.float_output(0, &out, &logits, &bytes, &error)) {
    std::fprintf(stderr, "segment: %s\n", error.c_str());
    return 1;
  }
  if (out.rank != 4 || out.dims[0] != 1) {
    std::fprintf(stderr, "segment: output '%s' of shape %s is not [1, C, H, W] logits%s\n",
                 out.name, examples::dims_text(out).c_str(),
                 o.channels_last ? " ([1, H, W, C] with --channels-last)" : "");
    return 1;
  }
  const int classes = int(o.channels_last ? out.dims[3] : out.dims[1]);
  const int h = int(o.channels_last ? out.dims[1] : out.dims[2]);
  const int w = int(o.channels_last ? out.dims[2] : out.dims[3]);
  // A class map bound to the plan's output: on CUDA plans the argmax runs on the GPU and only
  // the classes come back. Made once; a loop over frames would run it after each run.
  jp_class_map* classes_of = nullptr;
  const int32_t* result = nullptr;
  jp_status s = jp_class_map_create(plan.context(), 0, o.channels_last ? 1 : 0, &classes_of);
  if (s == JP_OK) s = jp_class_map_run(classes_of, &result, nullptr, nullptr);
  const std::vector<int32_t> map(result, result + (s == JP_OK ? size_t(h) * size_t(w) : 0));
  jp_class_map_destroy(classes_of);
  if (s != JP_OK) {
    std::fprintf(stderr, "segment: per-pixel classes: %s: %s\n", jp_status_string(s), jp_last_error());
    return 1;
  }
  std::printf("segment: %s (%d x %d) -> plan %s (%s), logits %s: %d classes at %d x %d\n",
              o.image.c_str(), pic.width, pic.height, o.plan.c_str(), plan.device(),
              examples::dims_text(out).c_str(), classes, w, h);
  std::vector<long long> histogram(size_t(classes), 0);
  for (int32_t c : map) ++histogram[size_t(c)];
  std::printf("class histogram (%d x %d pixels):\n", w, h);
  for (int c = 0; c < classes; ++c) {
    if (histogram[size_t(c)] == 0) continue;
    const std::string name = size_t(c) < o.labels.size() ? o.labels[size_t(c)] : "";
    std::printf("  class %d%s%s: %lld pixels (%.1f%%)\n", c, name.empty() ? "" : " ",
                name.c_str(), histogram[size_t(c)], 100.0 * double(histogram[size_t(c)]) / double(map.size()));
  }
  overlay(&pic, map, h, w, plan, opt.alpha);
  return examples::write_result("segment", o.out, pic);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) return 2;
  return run(o);
}
