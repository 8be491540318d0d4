// MJPEG frames from V4L2 cameras (what most UVC webcams send at 640x480 and up) to RGB24. UVC
// MJPEG streams usually leave out the Huffman tables (DHT): the UVC payload format makes the
// JPEG standard's example tables (ITU-T T.81 Annex K.3) the default, which a still-image decoder
// does not know, so they are put back before the frame is decoded with stb_image.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace camera_loop {

// Decodes one MJPEG frame of `bytes` into `rgb` (width * height * 3 bytes, RGB24 rows). False
// with *error saying why when it is not a JPEG, does not decode, or is not width x height.
bool decode_mjpeg(const uint8_t* data, size_t bytes, int width, int height, uint8_t* rgb,
                  std::vector<uint8_t>* scratch, std::string* error);

// The frame with the default Huffman tables inserted before its first SOS marker when it has no
// DHT of its own; the frame as it is otherwise (or when it has no SOS: decoding then fails).
std::vector<uint8_t> with_default_huffman_tables(const uint8_t* data, size_t bytes);

}  // namespace camera_loop
