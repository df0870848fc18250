#include "base/status.h"

#include <cstdio>

namespace lumos {

Status ErrorStatus(const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return Status::Error(buffer);
}

}  // namespace lumos
