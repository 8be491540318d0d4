// camera_loop: frames from a camera (or an image folder / raw video at a fixed rate) through a
// jetplan plan, live. A capture thread hands frames over two slots (frame_slots.h); the
// inference thread preprocesses them into the plan's input with jp_preprocessor (on CUDA plans:
// upload on its own stream, overlapped with the run in flight, then the fused kernel) and runs
// the plan. Frames that come faster than inference are dropped and counted. Prints inference
// latency and frame time (capture to result) live, top-5 for classifiers or, with --detect, the
// detections of a YOLO-style grid head (jp_detector: decode and NMS on the GPU for CUDA plans,
// inside the frame time), and a latency histogram PNG at the end. Stops after --frames N or on
// Ctrl-C.
//
//   camera_loop --plan model.jplan [--camera /dev/video0] [--images DIR | --raw FILE --size WxH]
//               [--fps 30] [--frames N] [--fit crop|letterbox|stretch] [--bgr]
//               [--mean R,G,B] [--std R,G,B] [--histogram latency.png]
//               [--detect [--score 0.25] [--iou 0.45]]
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "frame_slots.h"
#include "frame_source.h"
#include "jetplan/jetplan.h"
#include "latency_report.h"

namespace camera_loop {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) { g_stop.store(true); }

struct Options {
  std::string plan;
  SourceOptions source;
  long long frames = 0;  // 0: until Ctrl-C
  jp_fit fit = JP_FIT_CENTER_CROP;
  bool bgr = false;
  float mean[3] = {0.485f, 0.456f, 0.406f};  // ImageNet
  float std[3] = {0.229f, 0.224f, 0.225f};
  std::string histogram = "latency.png";
  bool detect = false;  // output 0 is a grid head [1, 5 + C, GH, GW]
  float score = 0.25f, iou = 0.45f;
};

bool parse_triple(const char* text, float out[3]) {
  return std::sscanf(text, "%f,%f,%f", &out[0], &out[1], &out[2]) == 3;
}

bool parse_size(const char* text, int* w, int* h) {
  return std::sscanf(text, "%dx%d", w, h) == 2 && *w > 0 && *h > 0;
}

// False (with the message printed) on a bad command line.
bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    const bool has_value = a != "--bgr" && a != "--detect";
    if (has_value && v == nullptr) {
      std::fprintf(stderr, "camera_loop: %s needs a value\n", a.c_str());
      return false;
    }
    bool ok = true;
    if (a == "--plan") o->plan = v;
    else if (a == "--camera") o->source.camera = v;
    else if (a == "--camera-size") ok = parse_size(v, &o->source.camera_width, &o->source.camera_height);
    else if (a == "--images") o->source.images = v;
    else if (a == "--raw") o->source.raw = v;
    else if (a == "--size") ok = parse_size(v, &o->source.raw_width, &o->source.raw_height);
    else if (a == "--fps") ok = (o->source.fps = std::atof(v)) > 0;
    else if (a == "--frames") ok = (o->frames = std::atoll(v)) > 0;
    else if (a == "--mean") ok = parse_triple(v, o->mean);
    else if (a == "--std") ok = parse_triple(v, o->std);
    else if (a == "--histogram") o->histogram = v;
    else if (a == "--bgr") o->bgr = true;
    else if (a == "--detect") o->detect = true;
    else if (a == "--score") o->score = std::strtof(v, nullptr);
    else if (a == "--iou") o->iou = std::strtof(v, nullptr);
    else if (a == "--fit") {
      const std::string f = v;
      o->fit = f == "crop" ? JP_FIT_CENTER_CROP : f == "letterbox" ? JP_FIT_LETTERBOX : JP_FIT_STRETCH;
      ok = f == "crop" || f == "letterbox" || f == "stretch";
    } else {
      std::fprintf(stderr, "camera_loop: unknown option '%s'\n", a.c_str());
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "camera_loop: bad value '%s' for %s\n", v, a.c_str());
      return false;
    }
    if (has_value) ++i;
  }
  if (o->plan.empty()) {
    std::fprintf(stderr, "usage: camera_loop --plan model.jplan [--camera /dev/videoN] "
                 "[--images DIR | --raw FILE --size WxH] [--fps 30] [--frames N] "
                 "[--fit crop|letterbox|stretch] [--bgr] [--mean R,G,B] [--std R,G,B] "
                 "[--histogram latency.png] [--detect [--score 0.25] [--iou 0.45]]\n");
    return false;
  }
  return true;
}

// The plan, its context and the preprocessor of its first input; destroys them in order.
struct Runtime {
  jp_plan* plan = nullptr;
  jp_context* ctx = nullptr;
  jp_preprocessor* pre = nullptr;
  jp_detector* detector = nullptr;  // with --detect
  ~Runtime() {
    jp_detector_destroy(detector);
    jp_preprocessor_destroy(pre);
    jp_context_destroy(ctx);
    jp_plan_destroy(plan);
  }
};

bool check(jp_status s, const char* what) {
  if (s == JP_OK) return true;
  std::fprintf(stderr, "camera_loop: %s: %s: %s\n", what, jp_status_string(s), jp_last_error());
  return false;
}

// A detector on output 0, a grid head [1, 5 + C, GH, GW] over input 0's pixels.
bool open_detector(const Options& o, Runtime* rt) {
  jp_tensor_desc in, head;
  if (!check(jp_plan_input_desc(rt->plan, 0, &in), "reading input 0") ||
      !check(jp_context_output_desc(rt->ctx, 0, &head), "reading output 0"))
    return false;
  if (head.rank != 4 || head.dims[1] < 6) {
    std::fprintf(stderr, "camera_loop: --detect: output '%s' is not a grid head "
                 "[1, 5 + classes, GH, GW]\n", head.name);
    return false;
  }
  const bool nchw = in.dims[1] == 3;  // the preprocessor took [1, 3, H, W] or [1, H, W, 3]
  jp_detect_desc d{};
  d.classes = static_cast<int32_t>(head.dims[1] - 5);
  d.grid_height = static_cast<int32_t>(head.dims[2]);
  d.grid_width = static_cast<int32_t>(head.dims[3]);
  d.image_height = static_cast<float>(nchw ? in.dims[2] : in.dims[1]);
  d.image_width = static_cast<float>(nchw ? in.dims[3] : in.dims[2]);
  d.stride = d.image_width / static_cast<float>(d.grid_width);
  d.score_threshold = o.score;
  d.iou_threshold = o.iou;
  d.max_candidates = 1000;
  d.max_detections = 100;
  return check(jp_detector_create(rt->ctx, 0, &d, &rt->detector), "--detect");
}

bool open_runtime(const Options& o, const FrameSource& source, Runtime* rt) {
  if (!check(jp_plan_load_file(o.plan.c_str(), &rt->plan), ("loading plan '" + o.plan + "'").c_str()) ||
      !check(jp_context_create(rt->plan, nullptr, &rt->ctx), "creating a context"))
    return false;
  jp_preprocess_desc desc = source.desc();
  desc.fit = o.fit;
  desc.bgr = o.bgr ? 1 : 0;
  desc.pad_value = 114.f;
  std::memcpy(desc.mean, o.mean, sizeof desc.mean);
  std::memcpy(desc.std, o.std, sizeof desc.std);
  return check(jp_preprocessor_create(rt->ctx, 0, &desc, &rt->pre), "preparing the input") &&
         (!o.detect || open_detector(o, rt));
}

void capture(FrameSource* source, FrameSlots* slots, jp_preprocessor* pre, long long frames,
             std::string* error) {
  std::vector<uint8_t> scratch(source->frame_bytes());
  for (long long n = 0; frames == 0 || n < frames; ++n) {
    if (!source->read(scratch.data(), g_stop, error)) break;
    const Clock::time_point t = Clock::now();
    const int slot = slots->begin_write();
    if (slot < 0) continue;  // both slots busy: dropped (counted)
    std::memcpy(jp_preprocessor_frame(pre, slot), scratch.data(), scratch.size());
    slots->publish(slot, t);
  }
  slots->close();
}

// The five largest entries of a classifier's [1, K] Float32 output, as "class:score" pairs.
std::string top5(const jp_context* ctx) {
  jp_tensor_desc desc;
  const void* data = nullptr;
  size_t bytes = 0;
  if (jp_context_output_desc(ctx, 0, &desc) != JP_OK || desc.dtype != JP_FLOAT32 ||
      desc.rank != 2 || desc.dims[0] != 1 || desc.dims[1] < 5 ||
      jp_context_get_output(ctx, 0, &data, &bytes) != JP_OK)
    return "";
  const float* scores = static_cast<const float*>(data);
  std::vector<int> order(static_cast<size_t>(desc.dims[1]));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                    [&](int a, int b) { return scores[a] > scores[b]; });
  std::string text = "top-5";
  char item[48];
  for (int k = 0; k < 5; ++k) {
    std::snprintf(item, sizeof item, " %d:%.3f", order[size_t(k)], double(scores[order[size_t(k)]]));
    text += item;
  }
  return text;
}

struct Stats {
  LatencySamples inference, frame;
  std::string last_top5;  // or, with --detect, "detections N"
};

void print_live(const FrameSlots& slots, const Stats& s) {
  std::printf("frames %llu (dropped %llu) | inference %s | frame %s%s%s\n",
              static_cast<unsigned long long>(slots.processed()),
              static_cast<unsigned long long>(slots.dropped()), s.inference.summary().c_str(),
              s.frame.summary().c_str(), s.last_top5.empty() ? "" : " | ", s.last_top5.c_str());
  std::fflush(stdout);
}

// Runs frames until the capture side closes; false on a runtime error (printed).
bool infer(Runtime* rt, FrameSlots* slots, Stats* stats) {
  int pending = -1;  // the slot whose run is queued
  Clock::time_point pending_captured, pending_start, last_print = Clock::now();
  for (;;) {
    Clock::time_point captured;
    // With a run in flight, take a frame only if one is waiting: its upload then overlaps it.
    // Without, wait for one; none means the capture side closed and nothing is left.
    const bool idle = pending < 0;
    const int slot = slots->take(idle, &captured);
    if (slot >= 0 && !check(jp_preprocessor_run(rt->pre, slot), "preprocessing a frame")) return false;
    if (pending >= 0) {
      if (!check(jp_context_synchronize(rt->ctx), "running the plan")) return false;
      if (rt->detector != nullptr) {  // inside the frame time: a result is boxes
        const jp_detection* boxes = nullptr;
        int32_t count = 0;
        if (!check(jp_detector_run(rt->detector, &boxes, &count), "decoding the detections"))
          return false;
        stats->last_top5 = "detections " + std::to_string(count);
      }
      const Clock::time_point done = Clock::now();
      stats->inference.add(std::chrono::duration<double, std::milli>(done - pending_start).count());
      stats->frame.add(std::chrono::duration<double, std::milli>(done - pending_captured).count());
      if (rt->detector == nullptr) stats->last_top5 = top5(rt->ctx);
      slots->release(pending);
      pending = -1;
      if (done - last_print > std::chrono::seconds(1)) {
        print_live(*slots, *stats);
        last_print = done;
      }
    }
    if (slot < 0) {
      if (idle) break;
      continue;
    }
    pending_start = Clock::now();
    if (!check(jp_context_enqueue(rt->ctx), "running the plan")) return false;
    pending = slot;
    pending_captured = captured;
  }
  return true;
}

int run(const Options& o) {
  std::string error;
  std::unique_ptr<FrameSource> source = open_source(o.source, &error);
  if (source == nullptr) {
    std::fprintf(stderr, "camera_loop: %s\n", error.c_str());
    return 1;
  }
  Runtime rt;
  if (!open_runtime(o, *source, &rt)) return 1;
  std::printf("camera_loop: %s -> plan %s (%s), %s\n", source->name().c_str(), o.plan.c_str(),
              jp_plan_device_name(rt.plan), o.frames > 0 ? (std::to_string(o.frames) + " frames").c_str() : "until Ctrl-C");
  FrameSlots slots;
  Stats stats;
  std::string capture_error;
  std::thread capturer(capture, source.get(), &slots, rt.pre, o.frames, &capture_error);
  bool ok = true;
  std::thread inferrer([&] { ok = infer(&rt, &slots, &stats); if (!ok) g_stop.store(true); });
  inferrer.join();
  g_stop.store(true);
  capturer.join();
  if (!capture_error.empty()) std::fprintf(stderr, "camera_loop: %s\n", capture_error.c_str());
  if (!ok || !capture_error.empty()) return 1;
  print_live(slots, stats);
  std::printf("frames offered %llu = processed %llu + dropped %llu\n",
              static_cast<unsigned long long>(slots.offered()),
              static_cast<unsigned long long>(slots.processed()),
              static_cast<unsigned long long>(slots.dropped()));
  double axis_ms = 0;
  if (!write_histogram_png(o.histogram, stats.inference, stats.frame, &axis_ms, &error)) {
    std::fprintf(stderr, "camera_loop: %s\n", error.c_str());
    return 1;
  }
  std::printf("histogram %s (0 to %.0f ms; top: inference, bottom: frame time; white p50, red p99)\n",
              o.histogram.c_str(), axis_ms);
  return 0;
}

}  // namespace
}  // namespace camera_loop

int main(int argc, char** argv) {
  camera_loop::Options options;
  if (!camera_loop::parse(argc, argv, &options)) return 2;
  struct sigaction action {};
  action.sa_handler = camera_loop::on_sigint;
  sigaction(SIGINT, &action, nullptr);
  return camera_loop::run(options);
}
