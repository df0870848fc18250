#include "modeler/io/text_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/input_file.h"

namespace lumos::modeler::io {

StatusOr<std::string> ReadTextFile(const std::string& path, uint64_t max_bytes) {
  LUMOS_ASSIGN_OR_RETURN(InputFile file, OpenInputFile(path));
  if (file.size_bytes > max_bytes) {
    ::close(file.fd);
    return ErrorStatus("%s: too large (%llu bytes; at most %llu)", path.c_str(),
                       static_cast<unsigned long long>(file.size_bytes),
                       static_cast<unsigned long long>(max_bytes));
  }
  std::string text;
  text.resize(file.size_bytes);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(file.fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status error = ErrorStatus("%s: cannot read: %s", path.c_str(), std::strerror(errno));
      ::close(file.fd);
      return error;
    }
    if (n == 0) break;  // Shorter than stat said (truncated meanwhile): what is there.
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  ::close(file.fd);
  return text;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace lumos::modeler::io
