#include "modeler/trace/trace_set.h"

#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

namespace lumos::modeler {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Walks `root` without recursion (any depth), following symbolic links to directories (a
// directory of ranks linked in was skipped without a word) and never entering a directory twice
// (by device and inode: a link to an ancestor is no cycle). A directory that cannot be opened or
// read to the end is itself added to `out`, as is every *.pb.zst entry whatever its type: the
// command then names each with the reason it cannot be read, and the walk goes on.
Status AddDirectory(const std::string& root, std::vector<std::string>* out) {
  const size_t before = out->size();
  std::vector<std::string> pending = {root};
  std::set<std::pair<dev_t, ino_t>> visited;
  while (!pending.empty()) {
    const std::string dir = std::move(pending.back());
    pending.pop_back();
    DIR* stream = opendir(dir.c_str());
    if (stream == nullptr) {
      out->push_back(dir);
      continue;
    }
    // A directory seen before (a bind mount of an ancestor) is not walked again: no cycle.
    struct stat st {};
    if (fstat(dirfd(stream), &st) == 0 && !visited.insert({st.st_dev, st.st_ino}).second) {
      closedir(stream);
      continue;
    }
    const std::string prefix = EndsWith(dir, "/") ? dir : dir + "/";
    for (;;) {
      errno = 0;
      const dirent* entry = readdir(stream);
      if (entry == nullptr) {
        if (errno != 0) out->push_back(dir);  // Cut short: what it still holds goes unread.
        break;
      }
      const char* name = entry->d_name;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
      std::string path = prefix + name;
      unsigned char type = entry->d_type;
      if (type == DT_UNKNOWN) {  // Some file systems leave the type to lstat(2).
        struct stat st {};
        if (lstat(path.c_str(), &st) != 0) {
          out->push_back(std::move(path));  // Cannot even tell what it is: named.
          continue;
        }
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
      }
      if (type == DT_LNK) {  // Followed: a directory is walked, anything else is a file.
        struct stat target {};
        type = stat(path.c_str(), &target) == 0 && S_ISDIR(target.st_mode) ? DT_DIR : DT_REG;
      }
      if (type == DT_DIR) {
        pending.push_back(std::move(path));
      } else if (EndsWith(path, ".pb.zst")) {
        out->push_back(std::move(path));
      }
    }
    closedir(stream);
  }
  if (out->size() == before) {
    return ErrorStatus("%s: no *.pb.zst files in this directory", root.c_str());
  }
  return Status::Ok();
}

// glob(3)'s error callback takes no user pointer: the directories it could not read during the
// current call.
thread_local std::vector<std::string>* g_glob_errors = nullptr;

int OnGlobError(const char* path, int /*error*/) {
  if (g_glob_errors != nullptr) g_glob_errors->emplace_back(path);
  return 0;  // Go on with the rest of the pattern.
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& args,
                                                    std::vector<std::string>* problems) {
  std::vector<std::string> paths;
  Status first_problem = Status::Ok();
  const size_t problems_before = problems != nullptr ? problems->size() : 0;
  // An argument that names nothing: an error at once without `problems`, else noted there.
  auto name_nothing = [&](const Status& status) -> bool {
    if (problems == nullptr) return false;
    if (first_problem.ok()) first_problem = status;
    problems->push_back(status.message());
    return true;
  };
  for (const std::string& arg : args) {
    struct stat st {};
    if (stat(arg.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        Status added = AddDirectory(arg, &paths);
        if (!added.ok() && !name_nothing(added)) return added;
      } else {
        paths.push_back(arg);
      }
      continue;
    }
    const int error = errno;
    if (arg.find_first_of("*?[") == std::string::npos) {
      if (error == ENOENT || error == ENOTDIR) {
        Status missing = ErrorStatus("%s: no such file or directory", arg.c_str());
        if (!name_nothing(missing)) return missing;
        continue;
      }
      // Not missing but unreadable (a search permission, a name too long...): the command names
      // it with the reason when it fails to open it, like any unreadable file.
      paths.push_back(arg);
      continue;
    }
    glob_t matches{};
    std::vector<std::string> unreadable;
    g_glob_errors = &unreadable;
    int rc = glob(arg.c_str(), 0, OnGlobError, &matches);
    g_glob_errors = nullptr;
    for (std::string& dir : unreadable) paths.push_back(std::move(dir));
    if ((rc != 0 || matches.gl_pathc == 0) && unreadable.empty()) {
      globfree(&matches);
      Status none = ErrorStatus("%s: the pattern matches no file", arg.c_str());
      if (!name_nothing(none)) return none;
      continue;
    }
    for (size_t i = 0; i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
    globfree(&matches);
  }
  if (paths.empty() && !first_problem.ok()) {
    // Nothing to read: one argument's problem is the error itself; several stay listed, and
    // the error says that none of them gave a trace.
    if (problems->size() == problems_before + 1) {
      problems->pop_back();
      return first_problem;
    }
    return ErrorStatus("none of the %zu inputs names a trace file", args.size());
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

}  // namespace lumos::modeler
