// examples/camera_loop/mjpeg.h: MJPEG frames as UVC cameras send them (no Huffman tables) decode
// as the same frame with its tables does; bad frames are refused by name.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "mjpeg.h"
#include "stb_image.h"
#include "stb_image_write.h"

namespace camera_loop {
namespace {

constexpr int kWidth = 64, kHeight = 48;

void append(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(context);
  out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
}

// A colour gradient with a square, as a JPEG from stb_image_write.
std::vector<uint8_t> picture(std::vector<uint8_t>* rgb) {
  rgb->resize(kWidth * kHeight * 3);
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      uint8_t* p = &(*rgb)[(y * kWidth + x) * 3];
      const bool square = x > 20 && x < 40 && y > 10 && y < 30;
      p[0] = static_cast<uint8_t>(x * 4);
      p[1] = static_cast<uint8_t>(square ? 230 : y * 5);
      p[2] = static_cast<uint8_t>(square ? 20 : 128);
    }
  std::vector<uint8_t> jpeg;
  EXPECT_NE(stbi_write_jpg_to_func(append, &jpeg, kWidth, kHeight, 3, rgb->data(), 95), 0);
  return jpeg;
}

// The JPEG without its DHT segments, as a UVC camera's MJPEG frame comes.
std::vector<uint8_t> without_tables(const std::vector<uint8_t>& jpeg) {
  std::vector<uint8_t> out(jpeg.begin(), jpeg.begin() + 2);
  size_t at = 2;
  while (at + 4 <= jpeg.size() && !(jpeg[at] == 0xFF && jpeg[at + 1] == 0xDA)) {
    const size_t length = (size_t(jpeg[at + 2]) << 8) | jpeg[at + 3];
    if (jpeg[at + 1] != 0xC4)
      out.insert(out.end(), jpeg.begin() + at, jpeg.begin() + at + 2 + length);
    at += 2 + length;
  }
  out.insert(out.end(), jpeg.begin() + at, jpeg.end());
  return out;
}

TEST(Mjpeg, FramesWithoutHuffmanTablesDecodeAsWithThem) {
  std::vector<uint8_t> rgb;
  const std::vector<uint8_t> jpeg = picture(&rgb);
  const std::vector<uint8_t> uvc = without_tables(jpeg);
  ASSERT_LT(uvc.size(), jpeg.size());  // the tables were there and are gone
  int w = 0, h = 0, c = 0;
  EXPECT_EQ(stbi_load_from_memory(uvc.data(), int(uvc.size()), &w, &h, &c, 3), nullptr)
      << "a still-image decoder should not know the default tables";
  std::vector<uint8_t> scratch, want(rgb.size(), 0xAB), got(rgb.size(), 0xCD);
  std::string error;
  ASSERT_TRUE(decode_mjpeg(jpeg.data(), jpeg.size(), kWidth, kHeight, want.data(), &scratch, &error))
      << error;
  ASSERT_TRUE(decode_mjpeg(uvc.data(), uvc.size(), kWidth, kHeight, got.data(), &scratch, &error))
      << error;
  EXPECT_EQ(got, want);  // the same tables, so the same pixels, bit for bit
  long diff = 0;
  for (size_t i = 0; i < rgb.size(); ++i) diff += std::abs(int(got[i]) - int(rgb[i]));
  EXPECT_LT(double(diff) / double(rgb.size()), 6.0);  // and the picture, within JPEG's loss
  // A frame that has its tables is left as it is.
  EXPECT_EQ(with_default_huffman_tables(jpeg.data(), jpeg.size()), jpeg);
}

TEST(Mjpeg, BadFramesAreRefusedByName) {
  std::vector<uint8_t> rgb;
  const std::vector<uint8_t> jpeg = picture(&rgb);
  std::vector<uint8_t> scratch, out(size_t(kWidth) * kHeight * 3);
  std::string error;
  EXPECT_FALSE(decode_mjpeg(jpeg.data(), jpeg.size(), 32, 48, out.data(), &scratch, &error));
  EXPECT_NE(error.find("64x48, the camera said 32x48"), std::string::npos) << error;
  const std::vector<uint8_t> garbage(500, 0x5A);
  error.clear();
  EXPECT_FALSE(decode_mjpeg(garbage.data(), garbage.size(), kWidth, kHeight, out.data(), &scratch,
                            &error));
  EXPECT_NE(error.find("does not decode"), std::string::npos) << error;
  const std::vector<uint8_t> cut(jpeg.begin(), jpeg.begin() + 40);  // ends inside the headers
  error.clear();
  EXPECT_FALSE(decode_mjpeg(cut.data(), cut.size(), kWidth, kHeight, out.data(), &scratch, &error));
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace camera_loop
