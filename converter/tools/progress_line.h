// jetplan-convert's progress line on stderr: the stage a conversion is in (ConvertOptions::
// progress: import, calibrate N/M, fold, ..., serialize) and the time since it began; a counted
// stage also gets a bar and an estimate of the time it has left (its time so far per item
// done, times the items left), e.g.
//   jetplan-convert: calibrate [##------------------] 12/100, 25 s left (3.4 s)
// It goes to stderr only, so a plan and the summary on stdout are the same with it or without.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "converter/src/convert.h"

namespace jetplan::converter {

// The line's text: STAGE, and for a counted stage (total > 0) the bar, DONE/TOTAL and, once
// something is done and until all is, the time left at the stage's pace so far
// (stage_seconds: since the stage's count began); then the conversion's time (seconds).
std::string progress_text(const std::string& stage, size_t done, size_t total,
                          double stage_seconds, double seconds);

class ProgressLine {
 public:
  enum class Mode {
    kOff,
    // One line drawn over itself ('\r', then erase to the end of the line) at each update and
    // every 100 ms by a thread of its own (so the time moves inside a long stage), from the
    // moment the conversion has run `delay_seconds` (a quicker one shows nothing).
    kTerminal,
    // A line per stage, and per count at most once a second plus the last one; no thread. For
    // logs and tests (--progress when stderr is not a terminal).
    kLines,
  };
  // `out` is borrowed for the object's life.
  ProgressLine(Mode mode, std::FILE* out, double delay_seconds);
  ~ProgressLine();  // finish(false) when not finished yet
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // ConvertOptions::progress.
  void update(const char* stage, size_t done, size_t total);
  // A function calling update on this object (which must outlive it).
  ProgressFn function();
  // Ends the line before anything else is printed: "converted in N s" when `converted` and a
  // line was shown, else the terminal line is erased. Later updates print nothing.
  void finish(bool converted);

 private:
  double elapsed() const;
  std::string text_locked() const;  // "jetplan-convert: STAGE[ DONE/TOTAL] (N.N s)"
  void tick();                      // kTerminal's thread
  void draw_locked();               // kTerminal: the line over the last one

  const Mode mode_;
  std::FILE* const out_;
  const double delay_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string stage_;
  size_t done_ = 0, total_ = 0;
  double stage_start_ = 0.0;  // when the current stage's count began (elapsed())
  bool shown_ = false;     // something was printed
  bool finished_ = false;
  // kLines: what the last line said and when, so counts are printed at most once a second.
  std::string printed_stage_;
  size_t printed_done_ = 0, printed_total_ = 0;
  double printed_at_ = 0.0;
  std::thread ticker_;
};

}  // namespace jetplan::converter
