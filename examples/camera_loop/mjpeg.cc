#include "mjpeg.h"

#include <cstring>

#include "stb_image.h"
#include "stb_image_write.h"

namespace camera_loop {
namespace {

void append(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(context);
  const auto* p = static_cast<const uint8_t*>(data);
  out->insert(out->end(), p, p + size);
}

// Calls f(offset, marker, segment_length) for each marker segment before the first SOS
// (0xFFDA), then f(offset of SOS, 0xDA, 0) and stops; false where the bytes are not a JPEG.
template <typename F>
bool walk_segments(const uint8_t* d, size_t n, F&& f) {
  if (n < 4 || d[0] != 0xFF || d[1] != 0xD8) return false;
  size_t at = 2;
  while (at + 4 <= n) {
    if (d[at] != 0xFF) return false;
    const uint8_t marker = d[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xDA) {
      f(at, marker, size_t{0});
      return true;
    }
    const size_t length = (size_t(d[at + 2]) << 8) | d[at + 3];
    if (length < 2 || at + 2 + length > n) return false;
    f(at, marker, length);
    at += 2 + length;
  }
  return false;
}

// The Annex K.3 tables as DHT segments: the ones stb_image_write puts in every JPEG it writes
// (baseline, the standard's example tables), taken from an 8x8 image it encodes, so they are not
// restated here.
const std::vector<uint8_t>& default_dht() {
  static const std::vector<uint8_t> dht = [] {
    std::vector<uint8_t> jpeg, out;
    const uint8_t gray[8 * 8 * 3] = {};
    stbi_write_jpg_to_func(append, &jpeg, 8, 8, 3, gray, 90);
    walk_segments(jpeg.data(), jpeg.size(), [&](size_t at, uint8_t marker, size_t length) {
      if (marker == 0xC4) out.insert(out.end(), jpeg.begin() + at, jpeg.begin() + at + 2 + length);
    });
    return out;
  }();
  return dht;
}

}  // namespace

std::vector<uint8_t> with_default_huffman_tables(const uint8_t* data, size_t bytes) {
  bool has_dht = false;
  size_t sos = 0;
  const bool jpeg = walk_segments(data, bytes, [&](size_t at, uint8_t marker, size_t) {
    if (marker == 0xC4) has_dht = true;
    if (marker == 0xDA) sos = at;
  });
  std::vector<uint8_t> out(data, data + bytes);
  if (!jpeg || has_dht || sos == 0) return out;
  const std::vector<uint8_t>& dht = default_dht();
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(sos), dht.begin(), dht.end());
  return out;
}

bool decode_mjpeg(const uint8_t* data, size_t bytes, int width, int height, uint8_t* rgb,
                  std::vector<uint8_t>* scratch, std::string* error) {
  *scratch = with_default_huffman_tables(data, bytes);
  int w = 0, h = 0, channels = 0;
  stbi_uc* pixels = stbi_load_from_memory(scratch->data(), static_cast<int>(scratch->size()), &w,
                                          &h, &channels, 3);
  if (pixels == nullptr) {
    *error = std::string("an MJPEG frame does not decode: ") + stbi_failure_reason();
    return false;
  }
  const bool fits = w == width && h == height;
  if (fits) std::memcpy(rgb, pixels, size_t(width) * size_t(height) * 3);
  stbi_image_free(pixels);
  if (!fits) {
    *error = "an MJPEG frame is " + std::to_string(w) + "x" + std::to_string(h) +
             ", the camera said " + std::to_string(width) + "x" + std::to_string(height);
    return false;
  }
  return true;
}

}  // namespace camera_loop
