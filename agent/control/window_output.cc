#include "agent/control/window_output.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "agent/core/file_names.h"

namespace lumos::agent::control {
namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kSecondsPerDay = 86'400;
constexpr std::string_view kWindowSuffix = ".w";

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool AllDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant's algorithms):
// exact for every int64 ns instant, independent of the process's time zone.
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

struct CivilDate {
  int64_t year, month, day;
};

CivilDate CivilFromDays(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t day_of_era = days - era * 146097;
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t mp = (5 * day_of_year + 2) / 153;
  const int64_t day = day_of_year - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  return {year_of_era + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0);
}

int64_t DigitsValue(std::string_view text) {
  int64_t value = 0;
  for (char c : text) value = value * 10 + (c - '0');
  return value;
}

std::string WithoutTrailingSlashes(std::string path) {
  if (path.empty()) return ".";
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// dir/name, without doubling the root's '/'.
std::string Join(const std::string& dir, std::string_view name) {
  std::string path = dir;
  if (path != "/") path += '/';
  return path.append(name);
}

std::string ErrnoLine(const char* what, const std::string& path, int error) {
  return std::string(what) + " " + path + ": " + std::strerror(error);
}

struct DirEntry {
  std::string name;
  bool is_directory = false;  // A real directory, not a link to one.
  bool is_regular = false;    // A regular file, not a link to one.
};

// The entries of `path` (not "." or ".."), sorted by name. ENOENT: empty, no error (another
// process removed it). Types from d_type, else lstat: links are neither.
std::vector<DirEntry> ListDirectory(const std::string& path, std::vector<std::string>* errors) {
  std::vector<DirEntry> entries;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) {
    if (errno != ENOENT) errors->push_back(ErrnoLine("cannot read directory", path, errno));
    return entries;
  }
  while (true) {
    errno = 0;
    const dirent* entry = readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) errors->push_back(ErrnoLine("cannot read directory", path, errno));
      break;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    DirEntry item;
    item.name = std::string(name);
    unsigned char type = entry->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (lstat(Join(path, item.name).c_str(), &st) != 0) continue;  // Gone meanwhile.
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
    }
    item.is_directory = type == DT_DIR;
    item.is_regular = type == DT_REG;
    entries.push_back(std::move(item));
  }
  closedir(dir);
  std::sort(entries.begin(), entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

struct Window {
  std::string stamp;
  std::string job_directory;  // Its name under DIR.
  std::string path;           // DIR/<job>/<stamp>.
};

// Every window DIR/<job>/<stamp>/ (real directories whose names are stamps), oldest first.
std::vector<Window> ScanWindows(const std::string& output_dir, std::vector<std::string>* errors) {
  std::vector<Window> windows;
  const std::string dir = WithoutTrailingSlashes(output_dir);
  for (const DirEntry& job : ListDirectory(dir, errors)) {
    if (!job.is_directory) continue;
    const std::string job_path = Join(dir, job.name);
    for (const DirEntry& window : ListDirectory(job_path, errors)) {
      if (!window.is_directory || !ParseWindowStamp(window.name)) continue;
      windows.push_back({window.name, job.name, Join(job_path, window.name)});
    }
  }
  std::sort(windows.begin(), windows.end(), [](const Window& a, const Window& b) {
    return a.stamp != b.stamp ? a.stamp < b.stamp : a.path < b.path;
  });
  return windows;
}

// The pid in "<job>.<host>.<pid>.rank<R>.pb.zst.partial" (or "norank"; no "<job>." in a "nojob"
// window) when `name` is such a file of `host_part` in job directory `job_directory`.
std::optional<pid_t> OrphanPid(std::string_view name, std::string_view job_directory,
                               std::string_view host_part) {
  constexpr std::string_view kSuffix = ".pb.zst.partial";
  if (!EndsWith(name, kSuffix)) return std::nullopt;
  name.remove_suffix(kSuffix.size());
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view rank = name.substr(dot + 1);
  if (rank != "norank" && !(rank.substr(0, 4) == "rank" && AllDigits(rank.substr(4)))) {
    return std::nullopt;
  }
  name = name.substr(0, dot);
  dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view pid_text = name.substr(dot + 1);
  if (!AllDigits(pid_text) || pid_text.size() > 9) return std::nullopt;  // pid_t is 32 bits.
  const std::string_view owner = name.substr(0, dot);  // "<job>.<host>" or "<host>".
  bool matches = false;
  if (owner == host_part) {
    matches = job_directory == kNoJobDirectory;
  } else if (owner.size() > host_part.size() + 1 && EndsWith(owner, host_part) &&
             owner[owner.size() - host_part.size() - 1] == '.') {
    const std::string_view job = owner.substr(0, owner.size() - host_part.size() - 1);
    matches = JobDirectoryName(std::string(job)) == job_directory;
  }
  const pid_t pid = static_cast<pid_t>(DigitsValue(pid_text));
  if (!matches || pid <= 0) return std::nullopt;  // Never kill(0) or kill(-1).
  return pid;
}

// kill(pid, 0): ESRCH is the only proof of death; EPERM (another user's process) is alive.
bool ProcessIsGone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

bool IsLumosFile(std::string_view name) {
  return EndsWith(name, kTraceSuffix) ||
         (EndsWith(name, kPartialSuffix) &&
          EndsWith(name.substr(0, name.size() - kPartialSuffix.size()), kTraceSuffix));
}

bool SameDirectory(const std::string& a, const struct stat& a_stat, bool a_stat_ok,
                   const std::string& b) {
  if (a == b) return true;
  struct stat b_stat {};
  return a_stat_ok && lstat(b.c_str(), &b_stat) == 0 && a_stat.st_dev == b_stat.st_dev &&
         a_stat.st_ino == b_stat.st_ino;
}

// rmdir that leaves a non-empty (a user's file in it) or vanished directory alone.
void RemoveIfEmpty(const std::string& path, std::vector<std::string>* errors) {
  if (rmdir(path.c_str()) == 0) return;
  if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT && errno != EBUSY) {
    errors->push_back(ErrnoLine("cannot remove directory", path, errno));
  }
}

}  // namespace

std::string WindowStamp(int64_t realtime_ns) {
  const int64_t seconds = FloorDiv(realtime_ns, kNsPerSecond);
  const int64_t days = FloorDiv(seconds, kSecondsPerDay);
  const int64_t in_day = seconds - days * kSecondsPerDay;
  const CivilDate date = CivilFromDays(days);
  // Room for six long longs at their widest: GCC's -Wformat-truncation checks the worst case.
  char text[6 * 21 + 4];
  std::snprintf(text, sizeof(text), "%04lld%02lld%02lldT%02lld%02lld%02lldZ",
                static_cast<long long>(date.year), static_cast<long long>(date.month),
                static_cast<long long>(date.day), static_cast<long long>(in_day / 3600),
                static_cast<long long>(in_day / 60 % 60), static_cast<long long>(in_day % 60));
  return text;
}

std::optional<int64_t> ParseWindowStamp(std::string_view text) {
  if (text.size() != 16 || text[8] != 'T' || text[15] != 'Z' || !AllDigits(text.substr(0, 8)) ||
      !AllDigits(text.substr(9, 6))) {
    return std::nullopt;
  }
  const int64_t year = DigitsValue(text.substr(0, 4));
  const int64_t month = DigitsValue(text.substr(4, 2));
  const int64_t day = DigitsValue(text.substr(6, 2));
  const int64_t hour = DigitsValue(text.substr(9, 2));
  const int64_t minute = DigitsValue(text.substr(11, 2));
  const int64_t second = DigitsValue(text.substr(13, 2));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) {
    return std::nullopt;
  }
  // The day must exist: it survives the round trip through the day count.
  const int64_t days = DaysFromCivil(year, month, day);
  const CivilDate back = CivilFromDays(days);
  if (back.year != year || back.month != month || back.day != day) return std::nullopt;
  const int64_t seconds = days * kSecondsPerDay + hour * 3600 + minute * 60 + second;
  // int64 ns covers 1677..2262; a stamp outside would overflow.
  constexpr int64_t kMaxSeconds = INT64_MAX / kNsPerSecond;
  if (seconds > kMaxSeconds || seconds < -kMaxSeconds) return std::nullopt;
  return seconds * kNsPerSecond;
}

std::string JobDirectoryName(const std::string& job_id) {
  if (job_id.empty()) return std::string(kNoJobDirectory);
  std::string name = SafeFilePart(job_id);
  if (std::all_of(name.begin(), name.end(), [](char c) { return c == '.'; })) {
    std::replace(name.begin(), name.end(), '.', '_');
  }
  return name;
}

WindowPaths MakeWindowPaths(const std::string& output_dir, const std::string& job_id,
                            int64_t window_realtime_ns, const std::string& file_name) {
  WindowPaths paths;
  paths.directory = Join(Join(WithoutTrailingSlashes(output_dir), JobDirectoryName(job_id)),
                         WindowStamp(window_realtime_ns));
  paths.final_path = paths.directory + "/" + file_name;
  paths.partial_path = paths.final_path + std::string(kPartialSuffix);
  return paths;
}

Status CreateWindowDirectory(const std::string& directory) {
  const std::string path = WithoutTrailingSlashes(directory);
  for (size_t end = 1; end <= path.size(); ++end) {
    if (end != path.size() && path[end] != '/') continue;
    const std::string part = path.substr(0, end);
    if (mkdir(part.c_str(), 0755) == 0) continue;
    const int error = errno;
    struct stat st {};
    // EEXIST: made by someone else, or a file in the way; stat follows a link to a directory
    // (a user's DIR may be one), which is fine for creating below it.
    if (error == EEXIST && stat(part.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) continue;
      return ErrorStatus("cannot create window directory %s: %s is not a directory", path.c_str(),
                         part.c_str());
    }
    return ErrorStatus("cannot create window directory %s: %s: %s", path.c_str(), part.c_str(),
                       std::strerror(error));
  }
  return Status::Ok();
}

StatusOr<std::string> FinishWindowFile(const std::string& partial_path,
                                       const std::string& final_path) {
  const std::string stem = EndsWith(final_path, kTraceSuffix)
                               ? final_path.substr(0, final_path.size() - kTraceSuffix.size())
                               : final_path;
  const std::string_view suffix = EndsWith(final_path, kTraceSuffix) ? kTraceSuffix : "";
  for (int n = 0; n <= kMaxRenames; ++n) {
    const std::string to =
        n == 0 ? final_path
               : stem + std::string(kWindowSuffix) + std::to_string(n) + std::string(suffix);
    int error = 0;
    const std::string why = RenameNoReplace(partial_path, to, &error);
    if (why.empty()) return to;
    if (error != EEXIST) {
      return ErrorStatus("cannot rename %s to %s: %s", partial_path.c_str(), to.c_str(),
                         why.c_str());
    }
  }
  return ErrorStatus("cannot rename %s: %s and its .w1 to .w%d names are all taken",
                     partial_path.c_str(), final_path.c_str(), kMaxRenames);
}

RecoveryResult RecoverOrphans(const std::string& output_dir, const std::string& host) {
  RecoveryResult result;
  const std::string host_part = TraceHostPart(host);
  for (const Window& window : ScanWindows(output_dir, &result.errors)) {
    for (const DirEntry& entry : ListDirectory(window.path, &result.errors)) {
      if (!entry.is_regular) continue;
      const std::optional<pid_t> pid = OrphanPid(entry.name, window.job_directory, host_part);
      if (!pid || !ProcessIsGone(*pid)) continue;
      const std::string partial = window.path + "/" + entry.name;
      StatusOr<std::string> finished =
          FinishWindowFile(partial, partial.substr(0, partial.size() - kPartialSuffix.size()));
      if (finished.ok()) {
        result.recovered.push_back(std::move(finished).value());
        continue;
      }
      struct stat st {};
      if (lstat(partial.c_str(), &st) != 0 && errno == ENOENT) continue;  // Recovered elsewhere.
      result.errors.push_back(finished.status().message());
    }
  }
  return result;
}

QuotaResult EnforceDiskQuota(const std::string& output_dir, const std::string& host,
                             uint64_t max_bytes, const std::string& keep_directory) {
  QuotaResult result;
  const std::string host_part = TraceHostPart(host);
  const std::string keep = keep_directory.empty() ? "" : WithoutTrailingSlashes(keep_directory);
  struct stat keep_stat {};
  const bool keep_stat_ok = !keep.empty() && lstat(keep.c_str(), &keep_stat) == 0;

  struct LumosFile {
    std::string path;
    uint64_t bytes = 0;
  };
  struct ScannedWindow {
    const Window* window = nullptr;
    std::vector<LumosFile> files;
    bool deletable = true;
  };
  const std::vector<Window> windows = ScanWindows(output_dir, &result.errors);
  std::vector<ScannedWindow> scanned;
  scanned.reserve(windows.size());
  uint64_t total = 0;
  for (const Window& window : windows) {
    ScannedWindow item;
    item.window = &window;
    item.deletable = keep.empty() || !SameDirectory(keep, keep_stat, keep_stat_ok, window.path);
    for (const DirEntry& entry : ListDirectory(window.path, &result.errors)) {
      if (!entry.is_regular || !IsLumosFile(entry.name)) continue;
      const std::string path = window.path + "/" + entry.name;
      struct stat st {};
      if (lstat(path.c_str(), &st) != 0) continue;  // Renamed or removed meanwhile.
      if (EndsWith(entry.name, kPartialSuffix)) {
        // Deletable only when provably dead: a process of this host that no longer exists.
        const std::optional<pid_t> pid = OrphanPid(entry.name, window.job_directory, host_part);
        if (!pid || !ProcessIsGone(*pid)) item.deletable = false;
      }
      item.files.push_back({path, static_cast<uint64_t>(st.st_size)});
      total += static_cast<uint64_t>(st.st_size);
    }
    scanned.push_back(std::move(item));
  }

  for (const ScannedWindow& item : scanned) {
    if (max_bytes == 0 || total <= max_bytes) break;
    if (!item.deletable || item.files.empty()) continue;
    bool deleted_any = false;
    for (const LumosFile& file : item.files) {
      if (unlink(file.path.c_str()) == 0) {
        result.bytes_freed += file.bytes;
        total -= file.bytes;
        deleted_any = true;
      } else if (errno == ENOENT) {
        total -= file.bytes;  // Another process's quota run (or a rename) took it first.
      } else {
        result.errors.push_back(ErrnoLine("cannot delete", file.path, errno));
      }
    }
    if (deleted_any) ++result.windows_deleted;
    RemoveIfEmpty(item.window->path, &result.errors);
    RemoveIfEmpty(Join(WithoutTrailingSlashes(output_dir), item.window->job_directory),
                  &result.errors);
  }
  result.bytes_remaining = total;
  return result;
}

}  // namespace lumos::agent::control
