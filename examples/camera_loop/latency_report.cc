// Percentiles and the histogram PNG of camera_loop: see latency_report.h.
#include "latency_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "stb_image_write.h"

namespace camera_loop {

double LatencySamples::quantile(double q) const {
  if (ms_.empty()) return 0.0;
  std::vector<double> sorted = ms_;
  const size_t rank = static_cast<size_t>(std::ceil(q * double(sorted.size())));
  const size_t k = rank == 0 ? 0 : rank - 1;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(k), sorted.end());
  return sorted[k];
}

double LatencySamples::max() const {
  return ms_.empty() ? 0.0 : *std::max_element(ms_.begin(), ms_.end());
}

std::string LatencySamples::summary() const {
  char text[96];
  std::snprintf(text, sizeof text, "p50 %.2f p99 %.2f max %.2f ms", quantile(0.5), quantile(0.99),
                max());
  return text;
}

namespace {

constexpr int kWidth = 640, kPanelHeight = 180, kBins = 128;

struct Rgb {
  uint8_t r, g, b;
};

void fill(std::vector<uint8_t>* image, int x0, int y0, int x1, int y1, Rgb c) {
  for (int y = std::max(y0, 0); y < std::min(y1, 2 * kPanelHeight); ++y)
    for (int x = std::max(x0, 0); x < std::min(x1, kWidth); ++x) {
      uint8_t* p = &(*image)[(size_t(y) * kWidth + x) * 3];
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }
}

// One panel: bars of the sample counts per bin (tallest bin full height), p50 and p99 lines.
void draw_panel(std::vector<uint8_t>* image, int top, const LatencySamples& s, double axis_ms,
                Rgb colour) {
  std::vector<size_t> bins(kBins, 0);
  for (double ms : s.samples()) {
    const int b = static_cast<int>(ms / axis_ms * kBins);
    ++bins[size_t(std::clamp(b, 0, kBins - 1))];
  }
  const size_t tallest = std::max<size_t>(1, *std::max_element(bins.begin(), bins.end()));
  const int bar_width = kWidth / kBins, usable = kPanelHeight - 12;
  for (int b = 0; b < kBins; ++b) {
    const int h = static_cast<int>(double(bins[size_t(b)]) / double(tallest) * usable + 0.5);
    if (bins[size_t(b)] > 0)
      fill(image, b * bar_width, top + kPanelHeight - 2 - std::max(h, 1), (b + 1) * bar_width - 1,
           top + kPanelHeight - 2, colour);
  }
  fill(image, 0, top + kPanelHeight - 2, kWidth, top + kPanelHeight, {160, 160, 160});  // axis
  const double marks[] = {s.quantile(0.5), s.quantile(0.99)};
  const Rgb mark_colours[] = {{255, 255, 255}, {230, 40, 40}};
  for (int m = 0; m < 2; ++m) {
    const int x = std::min(kWidth - 2, static_cast<int>(marks[m] / axis_ms * kWidth));
    fill(image, x, top + 4, x + 2, top + kPanelHeight - 2, mark_colours[m]);
  }
}

}  // namespace

bool write_histogram_png(const std::string& path, const LatencySamples& inference,
                         const LatencySamples& frame, double* axis_ms, std::string* error) {
  // The axis ends past the slowest frame (rounded up to a whole millisecond), at least 1 ms.
  *axis_ms = std::max(1.0, std::ceil(std::max(inference.max(), frame.max()) * 1.05));
  std::vector<uint8_t> image(size_t(kWidth) * 2 * kPanelHeight * 3, 24);
  draw_panel(&image, 0, inference, *axis_ms, {60, 130, 240});
  draw_panel(&image, kPanelHeight, frame, *axis_ms, {245, 150, 40});
  if (stbi_write_png(path.c_str(), kWidth, 2 * kPanelHeight, 3, image.data(), kWidth * 3) == 0) {
    *error = "could not write the histogram '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace camera_loop
