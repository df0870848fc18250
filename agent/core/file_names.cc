#include "agent/core/file_names.h"

#include <fcntl.h>  // AT_FDCWD
#include <stdio.h>  // renameat2, RENAME_NOREPLACE
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lumos::agent {

std::string SafeFilePart(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

std::string TraceHostPart(const std::string& host) {
  return SafeFilePart(host.empty() ? "unknown" : host);
}

std::string TraceFileName(const std::string& job_id, const std::string& host, uint32_t pid,
                          const RankInfo& rank) {
  std::string name;
  if (!job_id.empty()) name = SafeFilePart(job_id) + ".";
  name += TraceHostPart(host);
  name += "." + std::to_string(pid) + ".";
  name += rank.rank.has_value() ? "rank" + std::to_string(*rank.rank) : std::string("norank");
  name += ".pb.zst";
  return name;
}

std::string RenameNoReplace(const std::string& from, const std::string& to, int* error) {
  int ignored = 0;
  int& code = error != nullptr ? *error : ignored;
  code = 0;
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return "";
  code = errno;
  if (code != EINVAL && code != ENOSYS && code != EOPNOTSUPP) return std::strerror(code);
  if (link(from.c_str(), to.c_str()) != 0) {  // EEXIST as well.
    code = errno;
    return std::strerror(code);
  }
  if (unlink(from.c_str()) != 0) {
    // Two names for one file would read as two ranks: take the new one back.
    code = errno;
    std::string why = std::string("unlink of the old name: ") + std::strerror(code);
    unlink(to.c_str());
    return why;
  }
  code = 0;
  return "";
}

}  // namespace lumos::agent
