// Error plumbing of the runtime core: a status enum (the C API's jp_status), a formatter that
// records the detail for jp_last_error() and the log callback, and return-if-error.
#pragma once

#include "jetplan/jetplan.h"

namespace jetplan::rt {

using Status = jp_status;

// Formats the detail, stores it as this thread's last error, sends it to the log callback and
// returns `status`. Never allocates.
[[nodiscard]] Status fail(Status status, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// Sends a warning to the log callback.
void warn(const char* format, ...) __attribute__((format(printf, 1, 2)));

void clear_last_error();

}  // namespace jetplan::rt

#define JP_RETURN_IF_ERROR(expr)                       \
  do {                                                 \
    const ::jetplan::rt::Status jp_status_ = (expr);   \
    if (jp_status_ != JP_OK) return jp_status_;        \
  } while (0)
