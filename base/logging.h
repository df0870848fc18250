// Design: printf-style logging to stderr with a "[lumos pid:tid]" prefix (STYLE.md 4.1).
// One write(2) per line so lines from several threads never interleave. Not for hot paths.
#pragma once

namespace lumos {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Lines below this level are dropped (default kInfo).
void SetMinLogLevel(LogLevel level);
void LogMessage(LogLevel level, const char* file, int line, const char* format, ...)
    __attribute__((format(printf, 4, 5)));

}  // namespace lumos

#define LUMOS_LOG(level, ...) \
  ::lumos::LogMessage(::lumos::LogLevel::k##level, __FILE__, __LINE__, __VA_ARGS__)

// Always-on invariant check: logs and aborts. For bugs, never for bad input.
#define LUMOS_CHECK(cond)                          \
  do {                                             \
    if (!(cond)) {                                 \
      LUMOS_LOG(Error, "check failed: %s", #cond); \
      __builtin_trap();                            \
    }                                              \
  } while (0)

#ifdef NDEBUG
#define LUMOS_DCHECK(cond) \
  do {                     \
  } while (0)
#else
#define LUMOS_DCHECK(cond) LUMOS_CHECK(cond)
#endif
