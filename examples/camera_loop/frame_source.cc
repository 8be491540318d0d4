// Frame sources of camera_loop: see frame_source.h.
#include "frame_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/ioctl.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/videodev2.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "mjpeg.h"
#include "stb_image.h"

namespace camera_loop {
namespace {

using Clock = std::chrono::steady_clock;

jp_preprocess_desc rgb_desc(int width, int height) {
  jp_preprocess_desc d{};
  d.format = JP_PIXEL_RGB8;
  d.width = width;
  d.height = height;
  return d;
}

// Waits until the next tick of `fps`, in short sleeps so that `stop` is seen within 20 ms.
class Pacer {
 public:
  explicit Pacer(double fps)
      : period_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / fps))),
        next_(Clock::now()) {}
  bool wait(const std::atomic<bool>& stop) {
    while (!stop.load()) {
      const Clock::time_point now = Clock::now();
      if (now >= next_) {
        next_ += period_;
        if (next_ < now) next_ = now;  // fell behind (a slow disk): do not burst to catch up
        return true;
      }
      std::this_thread::sleep_for(std::min<Clock::duration>(next_ - now, std::chrono::milliseconds(20)));
    }
    return false;
  }

 private:
  Clock::duration period_;
  Clock::time_point next_;
};

// Every image of a folder, decoded once to RGB; all of one size (the preprocessor is set up for
// one frame size, as a camera's is).
class ImageFolder : public FrameSource {
 public:
  bool open(const std::string& folder, double fps, std::string* error) {
    DIR* dir = opendir(folder.c_str());
    if (dir == nullptr) {
      *error = "image folder '" + folder + "': " + std::strerror(errno);
      return false;
    }
    std::vector<std::string> names;
    while (const dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(dir);
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      const std::string path = folder + "/" + n;
      int w = 0, h = 0, channels = 0;
      stbi_uc* pixels = stbi_load(path.c_str(), &w, &h, &channels, 3);
      if (pixels == nullptr) continue;  // not an image (a README, a subfolder)
      if (frames_.empty()) {
        width_ = w;
        height_ = h;
      } else if (w != width_ || h != height_) {
        stbi_image_free(pixels);
        *error = "image '" + path + "' is " + std::to_string(w) + "x" + std::to_string(h) +
                 ", the folder's first image " + std::to_string(width_) + "x" +
                 std::to_string(height_) + ": every frame must be of one size";
        return false;
      }
      frames_.emplace_back(pixels, pixels + size_t(w) * h * 3);
      stbi_image_free(pixels);
    }
    if (frames_.empty()) {
      *error = "image folder '" + folder + "' has no image stb_image can read";
      return false;
    }
    folder_ = folder;
    pacer_ = std::make_unique<Pacer>(fps);
    return true;
  }
  jp_preprocess_desc desc() const override { return rgb_desc(width_, height_); }
  size_t frame_bytes() const override { return size_t(width_) * height_ * 3; }
  bool read(uint8_t* dst, const std::atomic<bool>& stop, std::string*) override {
    if (!pacer_->wait(stop)) return false;
    std::memcpy(dst, frames_[next_].data(), frame_bytes());
    next_ = (next_ + 1) % frames_.size();
    return true;
  }
  std::string name() const override {
    return "image folder " + folder_ + " (" + std::to_string(frames_.size()) + " images, " +
           std::to_string(width_) + "x" + std::to_string(height_) + ")";
  }

 private:
  std::string folder_;
  std::vector<std::vector<uint8_t>> frames_;
  size_t next_ = 0;
  int width_ = 0, height_ = 0;
  std::unique_ptr<Pacer> pacer_;
};

// Raw RGB24 frames back to back (ffmpeg -f rawvideo -pix_fmt rgb24), looped at the end.
class RawVideo : public FrameSource {
 public:
  bool open(const SourceOptions& o, std::string* error) {
    if (o.raw_width <= 0 || o.raw_height <= 0) {
      *error = "raw video '" + o.raw + "': give its frame size with --size WxH";
      return false;
    }
    file_.open(o.raw, std::ios::binary);
    if (!file_) {
      *error = "raw video '" + o.raw + "': " + std::strerror(errno);
      return false;
    }
    width_ = o.raw_width;
    height_ = o.raw_height;
    file_.seekg(0, std::ios::end);
    const long long size = static_cast<long long>(file_.tellg());
    if (size < static_cast<long long>(frame_bytes())) {
      *error = "raw video '" + o.raw + "' holds no whole " + std::to_string(width_) + "x" +
               std::to_string(height_) + " RGB24 frame (" + std::to_string(size) + " bytes)";
      return false;
    }
    file_.seekg(0);
    path_ = o.raw;
    pacer_ = std::make_unique<Pacer>(o.fps);
    return true;
  }
  jp_preprocess_desc desc() const override { return rgb_desc(width_, height_); }
  size_t frame_bytes() const override { return size_t(width_) * height_ * 3; }
  bool read(uint8_t* dst, const std::atomic<bool>& stop, std::string* error) override {
    if (!pacer_->wait(stop)) return false;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (file_.read(reinterpret_cast<char*>(dst), std::streamsize(frame_bytes()))) return true;
      file_.clear();  // end of file (or a partial last frame): start over
      file_.seekg(0);
    }
    *error = "raw video '" + path_ + "': read failed";
    return false;
  }
  std::string name() const override {
    return "raw video " + path_ + " (" + std::to_string(width_) + "x" + std::to_string(height_) +
           " RGB24)";
  }

 private:
  std::ifstream file_;
  std::string path_;
  int width_ = 0, height_ = 0;
  std::unique_ptr<Pacer> pacer_;
};

#if defined(__linux__)
// A V4L2 capture device streaming YUYV (or MJPEG, decoded to RGB24) through mmap'ed driver
// buffers.
class V4l2Camera : public FrameSource {
 public:
  ~V4l2Camera() override {
    if (fd_ < 0) return;
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    (void)ioctl(fd_, VIDIOC_STREAMOFF, &type);
    for (const Buffer& b : buffers_) munmap(b.start, b.length);
    close(fd_);
  }
  bool open(const SourceOptions& o, std::string* error) {
    path_ = o.camera;
    fd_ = ::open(o.camera.c_str(), O_RDWR | O_NONBLOCK);
    if (fd_ < 0) return fail("open", error);
    v4l2_format fmt{};
    fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    fmt.fmt.pix.width = static_cast<uint32_t>(o.camera_width);
    fmt.fmt.pix.height = static_cast<uint32_t>(o.camera_height);
    fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
    fmt.fmt.pix.field = V4L2_FIELD_NONE;
    if (ioctl(fd_, VIDIOC_S_FMT, &fmt) < 0) return fail("VIDIOC_S_FMT (YUYV)", error);
    if (fmt.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV) {
      // An MJPEG-only camera (most UVC webcams above 640x480): frames decoded to RGB24 here.
      fmt.fmt.pix.width = static_cast<uint32_t>(o.camera_width);
      fmt.fmt.pix.height = static_cast<uint32_t>(o.camera_height);
      fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_MJPEG;
      if (ioctl(fd_, VIDIOC_S_FMT, &fmt) < 0) return fail("VIDIOC_S_FMT (MJPEG)", error);
      if (fmt.fmt.pix.pixelformat != V4L2_PIX_FMT_MJPEG) {
        *error = "camera " + path_ + " streams neither YUYV nor MJPEG";
        return false;
      }
      mjpeg_ = true;
    }
    width_ = static_cast<int>(fmt.fmt.pix.width);
    height_ = static_cast<int>(fmt.fmt.pix.height);
    stride_ = mjpeg_ ? size_t(width_) * 3
                     : std::max<size_t>(fmt.fmt.pix.bytesperline, size_t(width_) * 2);
    v4l2_requestbuffers req{};
    req.count = 4;
    req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    req.memory = V4L2_MEMORY_MMAP;
    if (ioctl(fd_, VIDIOC_REQBUFS, &req) < 0 || req.count < 2) return fail("VIDIOC_REQBUFS", error);
    for (uint32_t i = 0; i < req.count; ++i) {
      v4l2_buffer buf{};
      buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      buf.memory = V4L2_MEMORY_MMAP;
      buf.index = i;
      if (ioctl(fd_, VIDIOC_QUERYBUF, &buf) < 0) return fail("VIDIOC_QUERYBUF", error);
      void* start = mmap(nullptr, buf.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, buf.m.offset);
      if (start == MAP_FAILED) return fail("mmap", error);
      buffers_.push_back({start, buf.length});
      if (ioctl(fd_, VIDIOC_QBUF, &buf) < 0) return fail("VIDIOC_QBUF", error);
    }
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (ioctl(fd_, VIDIOC_STREAMON, &type) < 0) return fail("VIDIOC_STREAMON", error);
    return true;
  }
  jp_preprocess_desc desc() const override {
    jp_preprocess_desc d{};
    d.format = mjpeg_ ? JP_PIXEL_RGB8 : JP_PIXEL_YUYV;
    d.width = width_;
    d.height = height_;
    d.row_bytes = stride_;
    return d;
  }
  size_t frame_bytes() const override { return stride_ * size_t(height_); }
  bool read(uint8_t* dst, const std::atomic<bool>& stop, std::string* error) override {
    while (!stop.load()) {
      fd_set fds;
      FD_ZERO(&fds);
      FD_SET(fd_, &fds);
      timeval timeout{0, 100000};  // see `stop` within 100 ms
      const int r = select(fd_ + 1, &fds, nullptr, nullptr, &timeout);
      if (r < 0 && errno != EINTR) return fail("select", error);
      if (r <= 0) continue;
      v4l2_buffer buf{};
      buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      buf.memory = V4L2_MEMORY_MMAP;
      if (ioctl(fd_, VIDIOC_DQBUF, &buf) < 0) {
        if (errno == EAGAIN) continue;
        return fail("VIDIOC_DQBUF", error);
      }
      const auto* frame = static_cast<const uint8_t*>(buffers_[buf.index].start);
      std::string bad;
      const bool ok =
          !mjpeg_ ? (std::memcpy(dst, frame, std::min(frame_bytes(), size_t(buf.bytesused))), true)
                  : decode_mjpeg(frame, buf.bytesused, width_, height_, dst, &scratch_, &bad);
      if (ioctl(fd_, VIDIOC_QBUF, &buf) < 0) return fail("VIDIOC_QBUF", error);
      // A frame that does not decode (cameras send a truncated one now and then, mostly while
      // starting) is skipped: the next one comes within a frame time.
      if (ok) return true;
    }
    return false;
  }
  std::string name() const override {
    return "camera " + path_ + " (" + std::to_string(width_) + "x" + std::to_string(height_) +
           (mjpeg_ ? " MJPEG)" : " YUYV)");
  }

 private:
  struct Buffer {
    void* start;
    size_t length;
  };
  bool fail(const char* what, std::string* error) {
    *error = "camera " + path_ + ": " + what + ": " + std::strerror(errno);
    return false;
  }
  std::string path_;
  int fd_ = -1;
  int width_ = 0, height_ = 0;
  size_t stride_ = 0;
  bool mjpeg_ = false;            // frames are MJPEG, decoded into RGB24
  std::vector<uint8_t> scratch_;  // an MJPEG frame with its Huffman tables
  std::vector<Buffer> buffers_;
};
#endif

}  // namespace

std::unique_ptr<FrameSource> open_source(const SourceOptions& options, std::string* error) {
#if defined(__linux__)
  if (!options.camera.empty()) {
    auto camera = std::make_unique<V4l2Camera>();
    if (camera->open(options, error)) return camera;
    if (options.images.empty() && options.raw.empty()) return nullptr;
    std::fprintf(stderr, "camera_loop: %s; using the %s instead\n", error->c_str(),
                 options.images.empty() ? "raw video" : "image folder");
  }
#else
  if (!options.camera.empty() && options.images.empty() && options.raw.empty()) {
    *error = "V4L2 cameras need Linux";
    return nullptr;
  }
#endif
  if (!options.images.empty()) {
    auto folder = std::make_unique<ImageFolder>();
    if (folder->open(options.images, options.fps, error)) return folder;
    return nullptr;
  }
  if (!options.raw.empty()) {
    auto raw = std::make_unique<RawVideo>();
    if (raw->open(options, error)) return raw;
    return nullptr;
  }
  *error = "no frame source: give --camera /dev/videoN, --images DIR or --raw FILE --size WxH";
  return nullptr;
}

}  // namespace camera_loop
