#include "base/logging.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace lumos {
namespace {
// Relaxed: the level is a filter; a thread seeing a stale level for a moment is harmless.
std::atomic<int> g_min_level{static_cast<int>(LogLevel::kInfo)};
const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}
}  // namespace

void SetMinLogLevel(LogLevel level) {
  g_min_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

void LogMessage(LogLevel level, const char* file, int line, const char* format, ...) {
  if (static_cast<int>(level) < g_min_level.load(std::memory_order_relaxed)) return;
  char buffer[1024];
  int n = std::snprintf(buffer, sizeof(buffer), "[lumos %d:%ld] %s: ", static_cast<int>(getpid()),
                        static_cast<long>(syscall(SYS_gettid)), LevelName(level));
  va_list args;
  va_start(args, format);
  if (n > 0 && n < static_cast<int>(sizeof(buffer))) {
    int m = std::vsnprintf(buffer + n, sizeof(buffer) - n, format, args);
    n = m < 0 ? n : std::min<int>(n + m, sizeof(buffer) - 2);
  }
  va_end(args);
  if (level == LogLevel::kDebug && n > 0 && n < static_cast<int>(sizeof(buffer)) - 64) {
    n += std::snprintf(buffer + n, sizeof(buffer) - n, " (%s:%d)", file, line);
  }
  if (n < 0) return;
  buffer[n++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, buffer, n);
  (void)ignored;
}

}  // namespace lumos
