#include "base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lumos {

std::string_view FileTypeName(unsigned int mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFSOCK:
      return "a socket";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a file";
  }
}

StatusOr<InputFile> OpenInputFile(const std::string& path) {
  // O_NONBLOCK: a FIFO without a writer would block open(2) itself. It is cleared again below,
  // though for a regular file it changes nothing.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    // A directory handed on by a walk that could not list it (trace_set.h): say so.
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return ErrorStatus("%s: cannot read this directory: %s", path.c_str(), std::strerror(error));
    }
    return ErrorStatus("%s: cannot open: %s", path.c_str(), std::strerror(error));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    Status error = ErrorStatus("%s: cannot stat: %s", path.c_str(), std::strerror(errno));
    ::close(fd);
    return error;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return ErrorStatus("%s: not a regular file (%s)", path.c_str(),
                       std::string(FileTypeName(st.st_mode)).c_str());
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return InputFile{fd, static_cast<uint64_t>(st.st_size)};
}

}  // namespace lumos
