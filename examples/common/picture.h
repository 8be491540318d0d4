// What the detect and segment examples share: an RGB picture loaded with stb_image and written
// as PNG with stb_image_write, boxes and text drawn into it (a built-in 5 x 7 bitmap font:
// digits, letters, a few signs), a colour per class (the PASCAL VOC colour map).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace examples {

struct Rgb {
  uint8_t r, g, b;
};

struct Picture {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // height rows of width * 3 bytes
  Rgb* at(int x, int y) { return reinterpret_cast<Rgb*>(&rgb[(size_t(y) * width + x) * 3]); }
};

// False with *error set when the file cannot be read or decoded.
bool load_picture(const std::string& path, Picture* out, std::string* error);
bool write_png(const std::string& path, const Picture& picture, std::string* error);
// The examples' last step: writes the PNG and says so ("wrote PATH (W x H)"), or prints why it
// could not. Returns the exit status, 0 or 1.
int write_result(const char* program, const std::string& path, const Picture& picture);

// Outline of `thickness` pixels just inside [x0, x1) x [y0, y1), clipped to the picture.
void draw_box(Picture* p, int x0, int y0, int x1, int y1, Rgb colour, int thickness);
void fill_box(Picture* p, int x0, int y0, int x1, int y1, Rgb colour);
// Text with its top-left corner at (x, y), each font pixel `scale` pixels wide; lowercase is
// drawn as uppercase, a character the font lacks as '?'. Returns the width drawn.
int draw_text(Picture* p, int x, int y, const std::string& text, Rgb colour, int scale);
int text_width(const std::string& text, int scale);
constexpr int kGlyphHeight = 7;

// The PASCAL VOC colour of class k (0: black, 1: dark red, 2: dark green, ...).
Rgb class_colour(int k);

}  // namespace examples
