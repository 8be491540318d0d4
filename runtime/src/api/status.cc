#include "runtime/src/api/status.h"

#include <cstdarg>
#include <cstdio>
#include <pthread.h>

namespace jetplan::rt {
namespace {

// fn and user are read as a pair under the lock; the callback itself runs outside it, so it may
// log or replace the callback without deadlock. A plain pthread mutex: std::mutex may throw.
pthread_mutex_t g_sink_mutex = PTHREAD_MUTEX_INITIALIZER;
jp_log_fn g_sink_fn = nullptr;
void* g_sink_user = nullptr;

constexpr size_t kMessageBytes = 1024;
thread_local char t_last_error[kMessageBytes] = "";

void emit(jp_log_level level, const char* message) {
  jp_log_fn fn;
  void* user;
  pthread_mutex_lock(&g_sink_mutex);
  fn = g_sink_fn;
  user = g_sink_user;
  pthread_mutex_unlock(&g_sink_mutex);
  if (fn != nullptr) fn(user, level, message);
}

}  // namespace

Status fail(Status status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(t_last_error, kMessageBytes, format, args);
  va_end(args);
  emit(JP_LOG_ERROR, t_last_error);
  return status;
}

void warn(const char* format, ...) {
  char message[kMessageBytes];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, kMessageBytes, format, args);
  va_end(args);
  emit(JP_LOG_WARNING, message);
}

void clear_last_error() { t_last_error[0] = '\0'; }

}  // namespace jetplan::rt

extern "C" {

void jp_set_log_callback(jp_log_fn fn, void* user) {
  using namespace jetplan::rt;
  pthread_mutex_lock(&g_sink_mutex);
  g_sink_fn = fn;
  g_sink_user = fn != nullptr ? user : nullptr;
  pthread_mutex_unlock(&g_sink_mutex);
}

const char* jp_last_error(void) { return jetplan::rt::t_last_error; }

const char* jp_status_string(jp_status status) {
  switch (status) {
    case JP_OK: return "ok";
    case JP_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case JP_ERROR_IO: return "i/o error";
    case JP_ERROR_INVALID_PLAN: return "invalid plan";
    case JP_ERROR_VERSION_MISMATCH: return "plan schema version mismatch";
    case JP_ERROR_UNSUPPORTED: return "unsupported";
    case JP_ERROR_OUT_OF_MEMORY: return "out of memory";
    case JP_ERROR_SHAPE_MISMATCH: return "shape mismatch";
    case JP_ERROR_NOT_FOUND: return "not found";
    case JP_ERROR_DEVICE: return "device error";
    case JP_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char* jp_version_string(void) { return "0.1.0"; }

}  // extern "C"
