// Design: where capture windows go on disk, how a finished window file gets its final name, and
// the disk quota (issue 15: periodic and on-demand capture).
//   Layout: DIR/<job>/<stamp>/<job>.<host>.<pid>.rank<R>.pb.zst, one directory per window, named
//     from the window's coordinated start instant (every rank of a job gets the same stamp, so a
//     window's files sit together), "nojob" for an unknown job. A file is written as
//     "<name>.partial" and renamed when complete; a rename never replaces a file: a name taken
//     gets ".w<N>" (N = 1, 2, ...) before ".pb.zst".
//   Orphans: a process killed mid-window (SIGKILL, OOM) leaves its ".partial"; the format is
//     independent zstd frames, so it is a readable prefix. RecoverOrphans gives such files of
//     dead processes of this host their final names.
//   Quota: EnforceDiskQuota deletes the oldest windows' Lumos files (*.pb.zst, *.pb.zst.partial)
//     until the total is under the limit. It never deletes anything else (a user's file keeps
//     its window directory), the window being written, or a window with a ".partial" that may
//     still be written (a live process of this host, or any process of another host: liveness
//     cannot be checked there).
// Concurrency: every process of a host (all ranks of a job, several jobs) may run these at the
//   same time on one DIR: a file or directory another process removed or renamed first
//   (ENOENT) is not an error, creation tolerates EEXIST, renames never replace. A window
//   directory is created just before its first ".partial" is opened; a quota run in between
//   can remove the empty directory again (the opener then creates it again, or fails open).
// Symbolic links are never followed below DIR (a link cannot lead a deletion outside it).
// Cost: one readdir per directory and one sort; thousands of entries stay O(n log n).
// Threading: no shared state; any thread, never the hot path (allocates, does file I/O).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace lumos::agent::control {

// File name suffixes: a complete window file, and one being written.
inline constexpr std::string_view kTraceSuffix = ".pb.zst";
inline constexpr std::string_view kPartialSuffix = ".partial";
// A window directory's name for an unknown job id.
inline constexpr std::string_view kNoJobDirectory = "nojob";

// The UTC second of `realtime_ns` (CLOCK_REALTIME), "YYYYMMDDTHHMMSSZ": fixed width, so names
// sort as times do; no ':' (filesystem-safe everywhere). Sub-second parts are dropped (floor).
std::string WindowStamp(int64_t realtime_ns);
// The inverse: the stamp's second in ns; nullopt unless `text` is exactly such a stamp (16
// bytes, a real calendar date, hour < 24, minute and second < 60).
std::optional<int64_t> ParseWindowStamp(std::string_view text);

struct WindowPaths {
  std::string directory;     // DIR/<job>/<stamp> (no trailing '/').
  std::string partial_path;  // directory/<file_name>.partial: written while the window lasts.
  std::string final_path;    // directory/<file_name>: its name when complete.
};

// The job's directory name: SafeFilePart(job_id) (agent/core/file_names.h); "" is "nojob", and a
// name of dots only ("." or "..") has its dots made '_' so it stays below DIR.
std::string JobDirectoryName(const std::string& job_id);

// `output_dir` as given (trailing '/' dropped; "" is "."); `file_name` is one path part
// (TraceFileName's).
WindowPaths MakeWindowPaths(const std::string& output_dir, const std::string& job_id,
                            int64_t window_realtime_ns, const std::string& file_name);

// mkdir -p, mode 0755 (less the umask). An existing directory is fine (another rank made it);
// anything else in the way (a file) is an error naming the path.
Status CreateWindowDirectory(const std::string& directory);

// Renames the finished `partial_path` to `final_path`, never over an existing file: when that
// name is taken, to "<final minus .pb.zst>.w<N>.pb.zst" with the lowest free N (1..kMaxRenames).
// Returns the name the file got, or an error naming both paths (the partial file stays).
inline constexpr int kMaxRenames = 9999;
StatusOr<std::string> FinishWindowFile(const std::string& partial_path,
                                       const std::string& final_path);

struct RecoveryResult {
  std::vector<std::string> recovered;  // The final names given, in window then name order.
  std::vector<std::string> errors;     // One line each (what, where, why).
};

// Finds every "<job>.<host>.<pid>.rank<R>.pb.zst.partial" (or "norank"; the "<job>." part as
// the window's job directory names it, none under "nojob") in the windows DIR/<job>/<stamp>/
// whose host is `host` (as TraceFileName writes it) and whose pid no longer exists here
// (kill(pid, 0) fails with ESRCH), and finishes it (FinishWindowFile). Files of live processes
// (a reused pid counts as live: the file waits), of other hosts, and names outside the pattern
// are left alone. A file another process recovered first is skipped silently.
RecoveryResult RecoverOrphans(const std::string& output_dir, const std::string& host);

struct QuotaResult {
  uint64_t windows_deleted = 0;     // Windows whose Lumos files this call deleted.
  uint64_t bytes_freed = 0;         // Sizes of the files this call unlinked.
  uint64_t bytes_remaining = 0;     // Lumos files left in all windows (as scanned, less deletions).
  std::vector<std::string> errors;  // One line each (what, where, why).
};

// While the Lumos files of all windows DIR/<job>/<stamp>/ total more than `max_bytes` (their
// st_size), deletes the oldest window (by stamp, then path): its Lumos files, then the window
// directory if that left it empty, then the job directory if empty. Skips `keep_directory`
// (compared as a path, after dropping trailing '/'; "" keeps none), and windows holding a
// ".partial" that may be live (see the top; `host` as for RecoverOrphans). max_bytes == 0
// means no quota: nothing is deleted (the totals are still reported).
QuotaResult EnforceDiskQuota(const std::string& output_dir, const std::string& host,
                             uint64_t max_bytes, const std::string& keep_directory);

}  // namespace lumos::agent::control
