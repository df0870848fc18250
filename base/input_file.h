// Design: opens a file named as input for reading, without blocking. open(2) of a FIFO with no
// writer waits for one forever, and read(2) of a terminal or a FIFO waits for input; only a
// regular file is accepted, and it is checked before anything is read from it. Errors name the
// path first, then the reason ("p.pb.zst: not a regular file (a FIFO)").
// Threading: no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace lumos {

struct InputFile {
  int fd = -1;  // The caller owns it (close(2) it); blocking mode, O_CLOEXEC.
  uint64_t size_bytes = 0;
};

// Opens `path` read-only (O_NONBLOCK for the open only) and accepts it only if it is a regular
// file; otherwise nothing is left open.
StatusOr<InputFile> OpenInputFile(const std::string& path);

// "a directory", "a FIFO", "a socket", "a character device", ... for a stat(2) st_mode.
std::string_view FileTypeName(unsigned int mode);

}  // namespace lumos
