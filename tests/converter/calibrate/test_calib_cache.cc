// The calibration cache file: written exactly (hex floats) and read back the same; refused with a
// message naming the file for another model (both hashes), a malformed line (its number), and an
// amax that is zero, negative, NaN or infinite (the tensor).
#include <gmock/gmock.h>

#include <cmath>
#include <string>

#include "converter/src/calibrate/calib_cache.h"
#include "converter/src/ir/error.h"
#include "tests/converter/calibrate/calib_test_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::string& text, const std::string& hash) {
  try {
    parse_calibration_cache(text, "c.cache", hash);
  } catch (const ConvertError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the cache was accepted:\n" << text;
  return "";
}

CalibrationCache sample_cache() {
  CalibrationCache c;
  c.model_hash = model_hash("model bytes", {{"x", {1, 3, 8, 8}}}, true);
  c.method = "percentile=99.9";
  c.samples = 12;
  c.amax = {{"x", 0.1f}, {"conv out", 3.0e-7f}, {"odd\\name\nline", 12345.678f}};
  c.no_range = {"dead"};
  return c;
}

TEST(CalibrationCache, RoundTripsExactly) {
  const CalibrationCache c = sample_cache();
  const std::string path = fresh_dir("rt") + "/model.cache";
  write_calibration_cache(path, c);
  const CalibrationCache back = read_calibration_cache(path, c.model_hash);
  EXPECT_EQ(back.model_hash, c.model_hash);
  EXPECT_EQ(back.method, c.method);
  EXPECT_EQ(back.samples, 12u);
  EXPECT_EQ(back.amax, c.amax);  // bit for bit: %a is exact
  EXPECT_EQ(back.no_range, c.no_range);
  const std::string text = read_text(path);
  EXPECT_THAT(text, ::testing::StartsWith("jetplan-calibration 1 " + c.model_hash +
                                          " percentile=99.9 12\n"));
  EXPECT_THAT(text, HasSubstr("0x1.99999ap-4 x\n"));
  EXPECT_THAT(text, HasSubstr("none dead\n"));
  EXPECT_THAT(text, HasSubstr(" odd\\\\name\\nline\n"));
  EXPECT_EQ(format_calibration_cache(back), text);
}

TEST(CalibrationCache, HashCoversModelShapesAndFusion) {
  const std::string a = model_hash("m", {{"x", {1, 3}}}, true);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a, model_hash("m", {{"x", {1, 3}}}, true));
  EXPECT_NE(a, model_hash("n", {{"x", {1, 3}}}, true));
  EXPECT_NE(a, model_hash("m", {{"x", {2, 3}}}, true));
  EXPECT_NE(a, model_hash("m", {}, true));
  EXPECT_NE(a, model_hash("m", {{"x", {1, 3}}}, false));
  EXPECT_NE(a, model_hash("m", {{"x", {1, 3}}}, true, {{"sr", "16000"}}));
  EXPECT_NE(model_hash("m", {}, true, {{"sr", "8000"}}), model_hash("m", {}, true, {{"sr", "16000"}}));
}

TEST(CalibrationCache, RefusesAnotherModelNamingBothHashes) {
  const CalibrationCache c = sample_cache();
  const std::string other = model_hash("other model", {}, true);
  const std::string e = error_of(format_calibration_cache(c), other);
  EXPECT_THAT(e, HasSubstr("'c.cache' is for another model"));
  EXPECT_THAT(e, HasSubstr(c.model_hash));
  EXPECT_THAT(e, HasSubstr(other));
}

TEST(CalibrationCache, RefusesMalformedLinesByNumber) {
  const std::string h = sample_cache().model_hash;
  const std::string head = "jetplan-calibration 1 " + h + " minmax 3\n";
  EXPECT_THAT(error_of("", h), HasSubstr("'c.cache' is empty"));
  EXPECT_THAT(error_of("hello\n", h), HasSubstr("line 1: not a calibration cache"));
  EXPECT_THAT(error_of("jetplan-calibration 2 " + h + " minmax 3\n", h),
              HasSubstr("format version 2"));
  EXPECT_THAT(error_of("jetplan-calibration 1 " + h + " minmax\n", h), HasSubstr("line 1"));
  EXPECT_THAT(error_of("jetplan-calibration 1 " + h + " magic 3\n", h),
              HasSubstr("unknown calibration method 'magic'"));
  EXPECT_THAT(error_of(head + "0x1p+0 a\nnonsense\n", h), HasSubstr("line 3: expected"));
  EXPECT_THAT(error_of(head + "0x1p+0 a\n1.5x b\n", h),
              HasSubstr("line 3: '1.5x' is not a number (tensor 'b')"));
  EXPECT_THAT(error_of(head + "0x1p+0 a\n0x1p+1 a\n", h),
              HasSubstr("line 3: tensor 'a' is listed twice"));
  EXPECT_THAT(error_of(head + "0x1p+0 bad\\q\n", h), HasSubstr("line 2: a tensor name"));
}

TEST(CalibrationCache, RefusesAmaxThatIsNoScale) {
  const std::string h = sample_cache().model_hash;
  const std::string head = "jetplan-calibration 1 " + h + " minmax 3\n";
  for (const char* value : {"0x0p+0", "-0x1p+0", "nan", "inf", "-inf", "0x1p-200", "1e300"}) {
    const std::string e = error_of(head + value + " t1\n", h);
    EXPECT_THAT(e, HasSubstr("line 2: tensor 't1' has amax " + std::string(value))) << value;
    EXPECT_THAT(e, HasSubstr("positive and finite"));
  }
}

TEST(CalibrationCache, MissingFileAndUnwritablePathAreNamed) {
  const std::string dir = fresh_dir("io");
  try {
    read_calibration_cache(dir + "/none.cache", "h");
    ADD_FAILURE();
  } catch (const ConvertError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot read calibration cache '" + dir + "/none.cache'"));
  }
  try {
    write_calibration_cache(dir + "/no/such/dir.cache", sample_cache());
    ADD_FAILURE();
  } catch (const ConvertError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("cannot write calibration cache '" + dir + "/no/such/dir.cache'"));
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
