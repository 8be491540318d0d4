// The frame hand-over of camera_loop: see frame_slots.h.
#include "frame_slots.h"

namespace camera_loop {

int FrameSlots::begin_write() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++offered_;
  int ready = -1;
  for (int s = 0; s < 2; ++s) {
    if (state_[s] == State::kFree) {
      state_[s] = State::kWriting;
      for (int o = 0; o < 2; ++o) {
        if (state_[o] == State::kReady) {  // the new frame supersedes the waiting one
          state_[o] = State::kFree;
          ++dropped_;
        }
      }
      return s;
    }
    if (state_[s] == State::kReady) ready = s;
  }
  if (ready >= 0) {  // the other slot is being inferred: overwrite the waiting frame
    state_[ready] = State::kWriting;
    ++dropped_;
    return ready;
  }
  ++dropped_;  // both slots busy
  return -1;
}

void FrameSlots::publish(int slot, Clock::time_point t) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    state_[slot] = State::kReady;
    captured_[slot] = t;
  }
  ready_.notify_one();
}

void FrameSlots::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

int FrameSlots::take(bool wait, Clock::time_point* captured) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    for (int s = 0; s < 2; ++s) {
      if (state_[s] == State::kReady) {
        state_[s] = State::kInUse;
        *captured = captured_[s];
        return s;
      }
    }
    if (!wait || closed_) return -1;
    ready_.wait(lock);
  }
}

void FrameSlots::release(int slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_[slot] = State::kFree;
  ++processed_;
}

uint64_t FrameSlots::offered() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return offered_;
}
uint64_t FrameSlots::processed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return processed_;
}
uint64_t FrameSlots::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

}  // namespace camera_loop
