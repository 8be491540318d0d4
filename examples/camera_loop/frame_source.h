// Where camera_loop's frames come from: a V4L2 camera (YUYV or MJPEG), a folder of images or a raw RGB24
// video file (both paced at a fixed frame rate, looping). Every source fills caller-owned memory
// of frame_bytes() per read.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "jetplan/jetplan.h"

namespace camera_loop {

struct SourceOptions {
  std::string camera;  // /dev/videoN; tried first when set
  std::string images;  // a folder of images stb_image reads (PNG, JPEG, BMP, PPM)
  std::string raw;     // a file of raw RGB24 frames of raw_width x raw_height
  int raw_width = 0, raw_height = 0;
  int camera_width = 640, camera_height = 480;
  double fps = 30.0;  // images and raw files
};

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // The frame's pixel format, width, height and stride, for jp_preprocessor_create.
  virtual jp_preprocess_desc desc() const = 0;
  virtual size_t frame_bytes() const = 0;
  // Waits for the next frame (a camera's, or the next tick of the frame rate) and writes it to
  // dst. False when `stop` was set while waiting, or on an error (then *error says which).
  virtual bool read(uint8_t* dst, const std::atomic<bool>& stop, std::string* error) = 0;
  virtual std::string name() const = 0;
};

// The camera when options.camera names one that opens, else the image folder or raw file;
// null with *error naming the file and the reason when none can be used.
std::unique_ptr<FrameSource> open_source(const SourceOptions& options, std::string* error);

}  // namespace camera_loop
