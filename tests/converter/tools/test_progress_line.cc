// jetplan-convert's progress line (converter/tools/progress_line.h) written into a temporary
// file: what each mode prints, and that a quick conversion on a terminal prints nothing.
#include "converter/tools/progress_line.h"

#include <gmock/gmock.h>

#include <cstdio>
#include <string>

namespace jetplan::converter {
namespace {

using ::testing::ContainsRegex;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

class ProgressFile {
 public:
  ProgressFile() : f_(std::tmpfile()) {}
  ~ProgressFile() { std::fclose(f_); }
  std::FILE* get() const { return f_; }
  std::string text() const {
    std::fflush(f_);
    std::string s;
    std::rewind(f_);
    for (int c; (c = std::fgetc(f_)) != EOF;) s += static_cast<char>(c);
    return s;
  }

 private:
  std::FILE* f_;
};

const std::string kErase = "\r\033[K";

TEST(ProgressLine, LinesModePrintsEachStageAndThrottlesCounts) {
  ProgressFile out;
  ProgressLine line(ProgressLine::Mode::kLines, out.get(), 0.0);
  line.update("import", 0, 0);
  line.update("calibrate", 0, 0);
  for (size_t i = 0; i <= 1000; ++i) line.update("calibrate", i, 1000);  // well within a second
  line.update("fold", 0, 0);
  line.finish(true);
  line.update("serialize", 0, 0);  // after finish: nothing
  EXPECT_THAT(out.text(), MatchesRegex("jetplan-convert: import \\([0-9.]+ s\\)\n"
                                       "jetplan-convert: calibrate \\([0-9.]+ s\\)\n"
                                       "jetplan-convert: calibrate \\[-{20}\\] 0/1000 \\([0-9.]+ s\\)\n"
                                       "jetplan-convert: calibrate \\[#{20}\\] 1000/1000 \\([0-9.]+ s\\)\n"
                                       "jetplan-convert: fold \\([0-9.]+ s\\)\n"
                                       "jetplan-convert: converted in [0-9.]+ s\n"));
}

TEST(ProgressLine, TerminalModeDrawsOverItselfAndEndsWithTheTime) {
  ProgressFile out;
  {
    ProgressLine line(ProgressLine::Mode::kTerminal, out.get(), 0.0);
    line.update("import", 0, 0);
    line.update("calibrate", 3, 10);
    line.finish(true);
  }
  const std::string text = out.text();
  EXPECT_THAT(text, StartsWith(kErase + "jetplan-convert: import ("));
  EXPECT_THAT(text, ContainsRegex("\r\033\\[Kjetplan-convert: calibrate \\[#{6}-{14}\\] 3/10, "
                                  "[0-9.]+ s left \\("));
  EXPECT_THAT(text, ContainsRegex("\r\033\\[Kjetplan-convert: converted in [0-9.]+ s\n$"));
  EXPECT_EQ(text.find('\n'), text.size() - 1);  // one line on the screen, ended once
}

// The bar, the count and the time left at the stage's pace so far.
TEST(ProgressLine, CountedStagesShowABarAndTheTimeLeft) {
  EXPECT_EQ(progress_text("calibrate", 25, 100, 10.0, 12.0),
            "jetplan-convert: calibrate [#####---------------] 25/100, 30 s left (12.0 s)");
  EXPECT_EQ(progress_text("calibrate", 3, 4, 1.5, 2.0),
            "jetplan-convert: calibrate [###############-----] 3/4, 0.5 s left (2.0 s)");
  EXPECT_EQ(progress_text("calibrate", 1, 500, 2.0, 3.0),
            "jetplan-convert: calibrate [--------------------] 1/500, 16 min 38 s left (3.0 s)");
  // Nothing done yet, or all of it: no estimate.
  EXPECT_EQ(progress_text("calibrate", 0, 8, 0.0, 0.5),
            "jetplan-convert: calibrate [--------------------] 0/8 (0.5 s)");
  EXPECT_EQ(progress_text("calibrate", 8, 8, 4.0, 4.5),
            "jetplan-convert: calibrate [####################] 8/8 (4.5 s)");
  EXPECT_EQ(progress_text("fold", 0, 0, 0.0, 1.3), "jetplan-convert: fold (1.3 s)");
}

TEST(ProgressLine, TerminalModeShowsNothingForAQuickConversion) {
  ProgressFile out;
  ProgressLine line(ProgressLine::Mode::kTerminal, out.get(), 60.0);
  line.update("import", 0, 0);
  line.update("serialize", 0, 0);
  line.finish(true);
  EXPECT_EQ(out.text(), "");
}

TEST(ProgressLine, AFailedConversionErasesTheLine) {
  ProgressFile out;
  ProgressLine line(ProgressLine::Mode::kTerminal, out.get(), 0.0);
  line.update("fold", 0, 0);
  line.finish(false);
  const std::string text = out.text();
  EXPECT_THAT(text, EndsWith("s)" + kErase));  // the caller's error starts a clean line
  EXPECT_EQ(text.find("converted"), std::string::npos);
}

TEST(ProgressLine, OffPrintsNothing) {
  ProgressFile out;
  ProgressLine line(ProgressLine::Mode::kOff, out.get(), 0.0);
  line.function()("import", 0, 0);
  line.finish(true);
  EXPECT_EQ(out.text(), "");
}

}  // namespace
}  // namespace jetplan::converter
