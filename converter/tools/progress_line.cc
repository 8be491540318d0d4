#include "converter/tools/progress_line.h"

#include <algorithm>
#include <cmath>
#include <system_error>

namespace jetplan::converter {

ProgressLine::ProgressLine(Mode mode, std::FILE* out, double delay_seconds)
    : mode_(mode), out_(out), delay_(delay_seconds), start_(std::chrono::steady_clock::now()) {
  if (mode_ != Mode::kTerminal) return;
  try {
    ticker_ = std::thread([this] { tick(); });
  } catch (const std::system_error&) {
    // No thread to spare: the line is still drawn at each update, only the time stands still.
  }
}

ProgressLine::~ProgressLine() { finish(false); }

double ProgressLine::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string progress_text(const std::string& stage, size_t done, size_t total,
                          double stage_seconds, double seconds) {
  std::string text = "jetplan-convert: " + stage;
  if (total > 0) {
    constexpr size_t kBar = 20;
    const size_t filled = std::min(done, total) * kBar / total;
    text += " [" + std::string(filled, '#') + std::string(kBar - filled, '-') + "] " +
            std::to_string(done) + "/" + std::to_string(total);
    if (done > 0 && done < total) {
      const double left = stage_seconds / double(done) * double(total - done);
      char eta[48];
      if (left >= 120.0) {
        const long s = std::lround(left);
        std::snprintf(eta, sizeof eta, ", %ld min %02ld s left", s / 60, s % 60);
      } else {
        std::snprintf(eta, sizeof eta, left >= 10.0 ? ", %.0f s left" : ", %.1f s left", left);
      }
      text += eta;
    }
  }
  char time[32];
  std::snprintf(time, sizeof time, " (%.1f s)", seconds);
  return text + time;
}

std::string ProgressLine::text_locked() const {
  const double now = elapsed();
  return progress_text(stage_, done_, total_, now - stage_start_, now);
}

void ProgressLine::update(const char* stage, size_t done, size_t total) {
  if (mode_ == Mode::kOff) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  // A new stage, or a new count in it, starts the clock of its estimate.
  if (stage_ != stage || total != total_ || done < done_) stage_start_ = elapsed();
  stage_ = stage;
  done_ = done;
  total_ = total;
  if (mode_ == Mode::kTerminal) {
    if (elapsed() >= delay_) draw_locked();  // at once; the ticker moves the time
    return;
  }
  const double now = elapsed();
  if (shown_ && stage_ == printed_stage_ && total == printed_total_ &&
      (done == printed_done_ || (done < total && now - printed_at_ < 1.0)))
    return;
  std::fprintf(out_, "%s\n", text_locked().c_str());
  std::fflush(out_);
  shown_ = true;
  printed_stage_ = stage_;
  printed_done_ = done;
  printed_total_ = total;
  printed_at_ = now;
}

ProgressFn ProgressLine::function() {
  return [this](const char* stage, size_t done, size_t total) { update(stage, done, total); };
}

void ProgressLine::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!finished_) {
    wake_.wait_for(lock, std::chrono::milliseconds(100));
    if (finished_ || stage_.empty() || elapsed() < delay_) continue;
    draw_locked();
  }
}

void ProgressLine::draw_locked() {
  std::fprintf(out_, "\r\033[K%s", text_locked().c_str());
  std::fflush(out_);
  shown_ = true;
}

void ProgressLine::finish(bool converted) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    if (shown_) {
      if (mode_ == Mode::kTerminal) std::fputs("\r\033[K", out_);
      if (converted) std::fprintf(out_, "jetplan-convert: converted in %.1f s\n", elapsed());
      std::fflush(out_);
    }
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

}  // namespace jetplan::converter
