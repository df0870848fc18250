#include "base/status.h"

#include <cstdio>

namespace lumos {

// The whole message, however long: a path longer than a fixed buffer (PATH_MAX is 4096, argv
// allows far more) must not cut off the reason that follows it.
Status ErrorStatus(const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  int n = std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  if (n < 0) {
    va_end(again);
    return Status::Error(format);
  }
  if (static_cast<size_t>(n) < sizeof(buffer)) {
    va_end(again);
    return Status::Error(std::string(buffer, static_cast<size_t>(n)));
  }
  std::string message(static_cast<size_t>(n), '\0');
  std::vsnprintf(message.data(), message.size() + 1, format, again);
  va_end(again);
  return Status::Error(std::move(message));
}

}  // namespace lumos
