#include "modeler/trace/trace_set.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace lumos::modeler {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status AddDirectory(const std::string& dir, std::vector<std::string>* out) {
  std::error_code error;
  size_t before = out->size();
  auto it = std::filesystem::recursive_directory_iterator(dir, error);
  if (error) return ErrorStatus("%s: cannot list: %s", dir.c_str(), error.message().c_str());
  for (; it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (error) return ErrorStatus("%s: cannot list: %s", dir.c_str(), error.message().c_str());
    if (it->is_regular_file(error) && EndsWith(it->path().string(), ".pb.zst")) {
      out->push_back(it->path().string());
    }
  }
  if (out->size() == before)
    return ErrorStatus("%s: no *.pb.zst files in this directory", dir.c_str());
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& args) {
  std::vector<std::string> paths;
  for (const std::string& arg : args) {
    struct stat st {};
    if (stat(arg.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        LUMOS_RETURN_IF_ERROR(AddDirectory(arg, &paths));
      } else {
        paths.push_back(arg);
      }
      continue;
    }
    if (arg.find_first_of("*?[") == std::string::npos) {
      return ErrorStatus("%s: no such file or directory", arg.c_str());
    }
    glob_t matches{};
    int rc = glob(arg.c_str(), 0, nullptr, &matches);
    if (rc != 0 || matches.gl_pathc == 0) {
      globfree(&matches);
      return ErrorStatus("%s: the pattern matches no file", arg.c_str());
    }
    for (size_t i = 0; i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
    globfree(&matches);
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

}  // namespace lumos::modeler
