// The two frame slots between camera_loop's capture thread and its inference thread (the
// preprocessor's pinned buffers). At most one frame waits: a newer frame replaces it and the
// older one counts as dropped; a frame arriving while both slots are busy is dropped too. So
// nothing queues, and offered == processed + dropped once both threads are done.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace camera_loop {

using Clock = std::chrono::steady_clock;

class FrameSlots {
 public:
  // Capture thread: a slot to copy a new frame into, or -1 (the frame is dropped). Counts the
  // frame as offered, and a waiting frame it replaces as dropped.
  int begin_write();
  // Capture thread: the frame in `slot` (from begin_write) is complete, captured at `t`.
  void publish(int slot, Clock::time_point t);
  // Capture thread: no more frames.
  void close();

  // Inference thread: the waiting frame's slot, or -1 when there is none (wait: until one comes
  // or the slots are closed). The slot is the caller's until release().
  int take(bool wait, Clock::time_point* captured);
  void release(int slot);  // also counts the frame as processed

  uint64_t offered() const;
  uint64_t processed() const;
  uint64_t dropped() const;

 private:
  enum class State { kFree, kWriting, kReady, kInUse };
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  State state_[2] = {State::kFree, State::kFree};
  Clock::time_point captured_[2];
  bool closed_ = false;
  uint64_t offered_ = 0, processed_ = 0, dropped_ = 0;
};

}  // namespace camera_loop
