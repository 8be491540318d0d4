// detect: a YOLO-style detector plan on one image. The image is resized into the plan's input
// (jp_preprocessor), the plan runs once, its grid head (objectness, centre offsets, log sizes,
// class logits per cell: tests/accuracy's detector) is decoded and non-maximum suppressed by a
// jp_detector (on the GPU for CUDA plans), and the boxes are printed in image pixels and drawn
// with their labels into a PNG of the image's size.
//
//   detect --plan detector.jplan --image photo.png [--out detections.png]
//          [--score 0.25] [--iou 0.45] [--max-detections 100] [--max-candidates 1000]
//          [--stride S] [--channels-last] [--labels disc,square,...]
//          [--fit stretch|letterbox|crop] [--mean R,G,B] [--std R,G,B] [--bgr]
//
// The head is output 0, Float32, [1, 5 + C, GH, GW] (or [1, GH, GW, 5 + C] with
// --channels-last); the stride defaults to the input width / GW.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/picture.h"
#include "../common/plan_on_image.h"

namespace {

struct Options {
  examples::CommonOptions common;
  float score = 0.25f, iou = 0.45f, stride = 0.f;
  int max_detections = 100, max_candidates = 1000;
};

// The thresholds are checked by jp_detector_create, which says which is wrong.
examples::OptionResult own_option(const std::string& a, const char* v, void* own) {
  Options* o = static_cast<Options*>(own);
  bool ok = true;
  if (a == "--score") o->score = std::strtof(v, nullptr);
  else if (a == "--iou") o->iou = std::strtof(v, nullptr);
  else if (a == "--stride") ok = (o->stride = std::strtof(v, nullptr)) > 0.f;
  else if (a == "--max-detections") ok = (o->max_detections = std::atoi(v)) > 0;
  else if (a == "--max-candidates") ok = (o->max_candidates = std::atoi(v)) > 0;
  else return examples::OptionResult::kUnknown;
  return ok ? examples::OptionResult::kTaken : examples::OptionResult::kBadValue;
}

bool parse(int argc, char** argv, Options* o) {
  o->common.out = "detections.png";
  const std::string usage = std::string("--plan detector.jplan --image photo.png ") +
                            "[--out detections.png] [--score 0.25] [--iou 0.45] "
                            "[--max-detections 100] [--max-candidates 1000] [--stride S] " +
                            examples::kCommonUsage;
  return examples::parse_command_line(argc, argv, "detect", usage.c_str(), &o->common,
                                      own_option, o);
}

// The head's grid and classes from output 0's shape.
bool describe_head(const jp_tensor_desc& d, const Options& o, int input_w, jp_detect_desc* desc,
                   std::string* error) {
  const int64_t channels = o.common.channels_last ? d.dims[3] : d.dims[1];
  if (d.rank != 4 || d.dims[0] != 1 || channels < 6) {
    *error = "output '" + std::string(d.name) + "' of shape " + examples::dims_text(d) +
             " is not a grid head [1, 5 + classes, GH, GW]" +
             (o.common.channels_last ? " (channels last: [1, GH, GW, 5 + classes])" : "");
    return false;
  }
  desc->classes = int32_t(channels - 5);
  desc->grid_height = int32_t(o.common.channels_last ? d.dims[1] : d.dims[2]);
  desc->grid_width = int32_t(o.common.channels_last ? d.dims[2] : d.dims[3]);
  desc->channels_last = o.common.channels_last ? 1 : 0;
  desc->stride = o.stride > 0.f ? o.stride : float(input_w) / float(desc->grid_width);
  desc->score_threshold = o.score;
  desc->iou_threshold = o.iou;
  desc->max_candidates = o.max_candidates;
  desc->max_detections = o.max_detections;
  return true;
}

std::string label_of(const Options& o, int k) {
  return size_t(k) < o.common.labels.size() ? o.common.labels[size_t(k)] : "class " + std::to_string(k);
}

void draw(examples::Picture* pic, const jp_detection& d, const examples::PlanOnImage& run,
          const std::string& label) {
  const int x0 = int(run.picture_x(d.x0) + 0.5f), y0 = int(run.picture_y(d.y0) + 0.5f);
  const int x1 = int(run.picture_x(d.x1) + 0.5f), y1 = int(run.picture_y(d.y1) + 0.5f);
  const examples::Rgb colour = examples::class_colour(d.class_index + 1);
  const int thick = pic->width >= 320 ? 2 : 1, scale = pic->width >= 320 ? 2 : 1;
  examples::draw_box(pic, x0, y0, x1, y1, colour, thick);
  char score[16];
  std::snprintf(score, sizeof score, " %.2f", double(d.score));
  const std::string text = label + score;
  const int th = examples::kGlyphHeight * scale + 2;
  const int ty = y0 - th >= 0 ? y0 - th : y0;  // above the box, or inside it at the top
  examples::fill_box(pic, x0, ty, x0 + examples::text_width(text, scale) + 2, ty + th, colour);
  examples::draw_text(pic, x0 + 1, ty + 1, text, examples::Rgb{255, 255, 255}, scale);
}

int run(const Options& o) {
  std::string error;
  examples::Picture pic;
  examples::PlanOnImage plan;
  const examples::CommonOptions& c = o.common;
  if (!examples::load_picture(c.image, &pic, &error) || !plan.run(c.plan, pic, c.input, &error)) {
    std::fprintf(stderr, "detect: %s\n", error.c_str());
    return 1;
  }
  jp_tensor_desc head;
  const float* data = nullptr;  // the shape is what matters here: the detector reads the output
  size_t bytes = 0;
  jp_detect_desc desc{};
  desc.image_width = float(plan.input_width());
  desc.image_height = float(plan.input_height());
  if (!plan.float_output(0, &head, &data, &bytes, &error) ||
      !describe_head(head, o, plan.input_width(), &desc, &error)) {
    std::fprintf(stderr, "detect: %s\n", error.c_str());
    return 1;
  }
  std::printf("detect: %s (%d x %d) -> plan %s (%s), head %s: %d x %d cells, %d classes, "
              "stride %g\n", c.image.c_str(), pic.width, pic.height, c.plan.c_str(),
              plan.device(), examples::dims_text(head).c_str(), desc.grid_width,
              desc.grid_height, desc.classes, double(desc.stride));
  // A detector bound to the plan's output: on CUDA plans the decode and NMS run on the GPU and
  // only the detections come back. Made once; a loop over frames would run it after each run.
  jp_detector* detector = nullptr;
  const jp_detection* results = nullptr;
  int32_t count = 0;
  jp_status s = jp_detector_create(plan.context(), 0, &desc, &detector);
  if (s == JP_OK) s = jp_detector_run(detector, &results, &count);
  const std::vector<jp_detection> found(results, results + (s == JP_OK ? count : 0));
  jp_detector_destroy(detector);
  if (s != JP_OK) {
    std::fprintf(stderr, "detect: decoding the head: %s: %s\n", jp_status_string(s), jp_last_error());
    return 1;
  }
  std::printf("detections %d (score >= %g, same-class IoU > %g suppressed)\n", count,
              double(o.score), double(o.iou));
  for (int32_t i = 0; i < count; ++i) {
    const jp_detection& d = found[size_t(i)];
    std::printf("  %-12s %.4f  box %.2f %.2f %.2f %.2f\n", label_of(o, d.class_index).c_str(),
                double(d.score), double(plan.picture_x(d.x0)), double(plan.picture_y(d.y0)),
                double(plan.picture_x(d.x1)), double(plan.picture_y(d.y1)));
  }
  for (int32_t i = count - 1; i >= 0; --i)  // the best drawn last, on top
    draw(&pic, found[size_t(i)], plan, label_of(o, found[size_t(i)].class_index));
  return examples::write_result("detect", c.out, pic);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) return 2;
  return run(o);
}
