#include "base/logging.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

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
  // Lines that fit (all but those naming a very long path) are formatted on the stack; a longer
  // one goes to the heap whole, so the reason after a long path is never cut off.
  char stack[1024];
  char* buffer = stack;
  size_t capacity = sizeof(stack);
  std::string heap;
  int n = std::snprintf(buffer, capacity, "[lumos %d:%ld] %s: ", static_cast<int>(getpid()),
                        static_cast<long>(syscall(SYS_gettid)), LevelName(level));
  if (n < 0 || static_cast<size_t>(n) >= capacity) return;
  const size_t prefix = static_cast<size_t>(n);
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  int m = std::vsnprintf(buffer + prefix, capacity - prefix, format, args);
  va_end(args);
  if (m < 0) {
    va_end(again);
    return;
  }
  // Room for the text, the debug location and the newline.
  const size_t needed = prefix + static_cast<size_t>(m) + 64 + std::strlen(file) + 2;
  if (needed > capacity) {
    heap.assign(needed, '\0');
    std::memcpy(heap.data(), stack, prefix);
    buffer = heap.data();
    capacity = heap.size();
    std::vsnprintf(buffer + prefix, capacity - prefix, format, again);
  }
  va_end(again);
  size_t length = prefix + static_cast<size_t>(m);
  if (level == LogLevel::kDebug) {
    int k = std::snprintf(buffer + length, capacity - length, " (%s:%d)", file, line);
    if (k > 0) length = std::min(length + static_cast<size_t>(k), capacity - 1);
  }
  buffer[length++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, buffer, length);
  (void)ignored;
}

}  // namespace lumos
