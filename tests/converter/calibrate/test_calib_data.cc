// The calibration set: .npy samples (float32, float16, uint8; with or without the batch dim),
// sample folders for several inputs, images through a preprocessing spec, deterministic order,
// and the errors, each naming the file or folder.
#include <gmock/gmock.h>

#include <cstring>
#include <string>
#include <vector>

#include "converter/src/calibrate/calib_data.h"
#include "converter/src/ir/error.h"
#include "tests/converter/calibrate/calib_test_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::HasSubstr;

std::vector<float> floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

const CalibrationInput kInput{"x", JP_FLOAT32, {1, 2, 2, 2}};

TEST(CalibrationData, NpyOfEachDtypeWithOrWithoutTheBatchDim) {
  const std::string dir = fresh_dir("npy");
  const std::vector<float> v = {0.5f, -1.f, 2.f, 3.f, 4.f, 5.f, 6.f, -7.f};
  write_npy(dir + "/a.npy", {1, 2, 2, 2}, v);
  const std::vector<uint16_t> half = {0x3800, 0xbc00, 0x4000, 0x4200,
                                      0x4400, 0x4500, 0x4600, 0xc700};
  write_npy(dir + "/b.npy", "<f2", {2, 2, 2}, half.data(), half.size() * 2);
  const std::vector<uint8_t> bytes = {0, 1, 2, 3, 4, 5, 6, 255};
  write_npy(dir + "/c.npy", "|u1", {1, 2, 2, 2}, bytes.data(), bytes.size());
  write_text(dir + "/README.txt", "ignored");
  const CalibrationSet set(dir, {kInput}, Preprocess{});
  ASSERT_EQ(set.size(), 3u);
  EXPECT_EQ(set.sample_path(0), dir + "/a.npy");
  EXPECT_EQ(floats(set.load(0)[0]), v);
  EXPECT_EQ(floats(set.load(1)[0]), v);  // float16 converted by value
  EXPECT_EQ(floats(set.load(2)[0]), (std::vector<float>{0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 255.f}));
}

TEST(CalibrationData, SamplesComeSortedAndMaxSamplesKeepsTheFirst) {
  const std::string dir = fresh_dir("sorted");
  for (const char* name : {"c", "a", "b", "a0"}) {
    write_npy(dir + "/" + name + ".npy", {1, 2, 2, 2}, std::vector<float>(8, 1.f));
  }
  const CalibrationSet all(dir, {kInput}, Preprocess{});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all.sample_path(0), dir + "/a.npy");
  EXPECT_EQ(all.sample_path(1), dir + "/a0.npy");
  EXPECT_EQ(all.sample_path(3), dir + "/c.npy");
  const CalibrationSet two(dir, {kInput}, Preprocess{}, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two.sample_path(1), dir + "/a0.npy");
}

TEST(CalibrationData, FolderPerSampleForSeveralInputs) {
  const std::string dir = fresh_dir("folders");
  const std::vector<CalibrationInput> inputs = {{"a", JP_FLOAT32, {2}}, {"b/c", JP_INT64, {1}}};
  for (const char* s : {"s1", "s0"}) {
    ASSERT_EQ(mkdir((dir + "/" + s).c_str(), 0755), 0);
    write_npy(dir + "/" + s + "/a.npy", {2}, {1.f, s[1] == '1' ? 2.f : 3.f});
    const int64_t id = 7;
    write_npy(dir + "/" + s + "/b_c.npy", "<i8", {1}, &id, 8);
  }
  const CalibrationSet set(dir, inputs, Preprocess{});
  ASSERT_EQ(set.size(), 2u);
  const auto s0 = set.load(0);
  ASSERT_EQ(s0.size(), 2u);
  EXPECT_EQ(floats(s0[0]), (std::vector<float>{1.f, 3.f}));
  int64_t id = 0;
  std::memcpy(&id, s0[1].data(), 8);
  EXPECT_EQ(id, 7);

  ASSERT_EQ(mkdir((dir + "/s2").c_str(), 0755), 0);
  write_npy(dir + "/s2/a.npy", {2}, {1.f, 1.f});
  EXPECT_THAT(thrown_error([&] { CalibrationSet(dir, inputs, Preprocess{}); }),
              HasSubstr("sample folder '" + dir + "/s2' has no 'b_c.npy' for input 'b/c'"));
}

TEST(CalibrationData, FolderErrorsNameTheFolder) {
  const std::string empty = fresh_dir("empty");
  EXPECT_THAT(thrown_error([&] { CalibrationSet(empty, {kInput}, Preprocess{}); }),
              HasSubstr("calibration folder '" + empty + "' holds no samples"));
  EXPECT_THAT(thrown_error([&] { CalibrationSet(empty + "/nope", {kInput}, Preprocess{}); }),
              HasSubstr("cannot read calibration folder '" + empty + "/nope'"));
  const std::string mixed = fresh_dir("mixed");
  write_npy(mixed + "/a.npy", {1, 2, 2, 2}, std::vector<float>(8, 1.f));
  write_png(mixed + "/b.png", 2, 2, 3, std::vector<uint8_t>(12, 0));
  EXPECT_THAT(thrown_error([&] { CalibrationSet(mixed, {kInput}, Preprocess{}); }),
              HasSubstr("'" + mixed + "' mixes 1 .npy files, 1 images and 0 folders"));
  const std::string files = fresh_dir("files");
  write_npy(files + "/a.npy", {1, 2, 2, 2}, std::vector<float>(8, 1.f));
  EXPECT_THAT(thrown_error([&] {
                CalibrationSet(files, {kInput, {"y", JP_FLOAT32, {1}}}, {});
              }),
              HasSubstr("the model has 2 inputs ('x', 'y'): give one folder per sample"));
}

TEST(CalibrationData, NpyErrorsNameTheFileAndBothShapes) {
  const std::string dir = fresh_dir("bad");
  write_npy(dir + "/a.npy", {1, 2, 2, 3}, std::vector<float>(12, 1.f));
  const double d[8] = {};
  write_npy(dir + "/b.npy", "<f8", {1, 2, 2, 2}, d, sizeof(d));
  write_text(dir + "/c.npy", "not numpy at all");
  write_npy(dir + "/d.npy", {1, 2, 2, 2}, std::vector<float>(3, 1.f));  // truncated data
  const CalibrationSet set(dir, {kInput}, Preprocess{});
  EXPECT_THAT(thrown_error([&] { set.load(0); }),
              HasSubstr("sample '" + dir +
                        "/a.npy' is 1x2x2x3 '<f4'; input 'x' takes 1x2x2x2 "
                        "float32"));
  EXPECT_THAT(thrown_error([&] { set.load(1); }), HasSubstr("'" + dir + "/b.npy' is 1x2x2x2 '<f8'"));
  EXPECT_THAT(thrown_error([&] { set.load(2); }), HasSubstr("'" + dir + "/c.npy' is not a .npy"));
  EXPECT_THAT(thrown_error([&] { set.load(3); }), HasSubstr("'" + dir + "/d.npy' is truncated"));
}

TEST(CalibrationData, ParsesThePreprocessingSpec) {
  const Preprocess p = parse_preprocess(
      "resize=256,crop=224,mean=0.485:0.456:0.406,std=0.229:0.224:0.225,order=bgr,layout=nhwc,"
      "scale=1");
  EXPECT_EQ(p.resize, 256);
  EXPECT_EQ(p.crop_h, 224);
  EXPECT_EQ(p.crop_w, 224);
  EXPECT_EQ(p.mean, (std::vector<float>{0.485f, 0.456f, 0.406f}));
  EXPECT_EQ(p.std[2], 0.225f);
  EXPECT_TRUE(p.bgr);
  EXPECT_EQ(p.layout, Preprocess::Layout::kNhwc);
  EXPECT_EQ(p.scale, 1.f);
  const Preprocess q = parse_preprocess("resize=300x200,crop=100x50");
  EXPECT_EQ(q.resize_h, 300);
  EXPECT_EQ(q.resize_w, 200);
  EXPECT_EQ(q.crop_w, 50);
  EXPECT_EQ(parse_preprocess("").scale, 255.f);
  EXPECT_THAT(thrown_error([] { parse_preprocess("size=3"); }), HasSubstr("unknown key 'size'"));
  EXPECT_THAT(thrown_error([] { parse_preprocess("std=1:0:1"); }), HasSubstr("non-zero"));
  EXPECT_THAT(thrown_error([] { parse_preprocess("mean=1:2"); }), HasSubstr("mean=M0:M1:M2"));
  EXPECT_THAT(thrown_error([] { parse_preprocess("crop=2,crop=3"); }), HasSubstr("'crop' given twice"));
  EXPECT_THAT(thrown_error([] { parse_preprocess("order=gbr"); }), HasSubstr("order=rgb or order=bgr"));
  EXPECT_THAT(thrown_error([] { parse_preprocess("resize"); }), HasSubstr("KEY=VALUE"));
}

// A 4x6 (HxW) image of one colour: resized (short side 4 -> 2, so 2x3), centre-cropped to 2x2.
TEST(CalibrationData, ImagesArePreprocessedIntoTheInput) {
  const std::string dir = fresh_dir("img");
  std::vector<uint8_t> pixels;
  for (int i = 0; i < 24; ++i) pixels.insert(pixels.end(), {51, 102, 204});
  write_png(dir + "/a.png", 6, 4, 3, pixels);
  const CalibrationInput nchw{"img", JP_FLOAT32, {1, 3, 2, 2}};
  const CalibrationSet set(dir, {nchw}, parse_preprocess("resize=2,crop=2,mean=0.5,std=0.5"));
  const std::vector<float> v = floats(set.load(0)[0]);
  ASSERT_EQ(v.size(), 12u);
  for (int c = 0; c < 3; ++c) {
    const float expected = (pixels[c] / 255.f - 0.5f) / 0.5f;
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(v[c * 4 + k], expected, 1e-6f) << c;
  }
  const CalibrationInput nhwc{"img", JP_FLOAT32, {1, 2, 2, 3}};
  const CalibrationSet bgr(dir, {nhwc}, parse_preprocess("resize=2x2,order=bgr,scale=1"));
  const std::vector<float> w = floats(bgr.load(0)[0]);
  EXPECT_EQ(w[0], 204.f);
  EXPECT_EQ(w[1], 102.f);
  EXPECT_EQ(w[2], 51.f);
  const CalibrationInput gray{"img", JP_FLOAT32, {1, 1, 4, 6}};
  EXPECT_EQ(CalibrationSet(dir, {gray}, Preprocess{}).load(0)[0].size(), 24u * 4);
}

TEST(CalibrationData, ImageErrorsNameTheImageAndBothShapes) {
  const std::string dir = fresh_dir("imgbad");
  write_png(dir + "/a.png", 6, 4, 3, std::vector<uint8_t>(72, 9));
  write_text(dir + "/b.png", "not a png");
  const CalibrationInput input{"img", JP_FLOAT32, {1, 3, 3, 3}};
  const CalibrationSet set(dir, {input}, Preprocess{});
  EXPECT_THAT(thrown_error([&] { set.load(0); }),
              HasSubstr("image '" + dir +
                        "/a.png' is 1x3x4x6 after preprocessing (4x6 HxW "
                        "decoded); input 'img' is 1x3x3x3"));
  EXPECT_THAT(thrown_error([&] { set.load(1); }), HasSubstr("cannot decode image '" + dir + "/b.png'"));
  const CalibrationSet cropped(dir, {input}, parse_preprocess("crop=5"));
  EXPECT_THAT(thrown_error([&] { cropped.load(0); }),
              HasSubstr("image '" + dir +
                        "/a.png' is 4x6 (HxW) after resizing, smaller than the "
                        "crop 5x5"));
  const CalibrationInput ids{"ids", JP_INT64, {1, 3, 3, 3}};
  EXPECT_THAT(thrown_error([&] { CalibrationSet(dir, {ids}, Preprocess{}); }),
              HasSubstr("input 'ids' (1x3x3x3) cannot take images"));
}

}  // namespace
}  // namespace jetplan::converter::testing
