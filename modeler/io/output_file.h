// Design: how lumos-model writes its files, so that writing an output never destroys anything.
// Destinations, decided by what is there now (through symbolic links):
//   * nothing, or a regular file: the bytes go to a new temporary file next to it,
//     "OUT.XXXXXX.tmp" (random, created O_EXCL: two runs never share one), with the mode of the
//     file it replaces; Commit() syncs it (fsync), closes it (errors checked) and renames it
//     over the destination, so the destination is either untouched or the complete output;
//   * a character device or FIFO (/dev/null, /dev/stdout on a pipe or terminal): written to
//     directly, never replaced; Commit() closes it;
//   * a directory, block device or socket: refused.
// An OutputFile dropped before Commit() removes its temporary file. So does SIGINT, SIGTERM or
// SIGHUP: the first output installs a handler for each of them (unless it is ignored) that
// unlinks every temporary file and directory still registered (async-signal-safe: a chain of
// fixed blocks of C strings, read with atomic loads) and then re-raises the signal under the
// disposition it had before. SIGXFSZ is ignored from then on (unless handled already), so a
// write past `ulimit -f` fails with EFBIG instead of killing the process.
// OutputSet: several outputs that are all or nothing. Every file is written to its temporary
// first; Commit() renames them all, with SIGINT/SIGTERM/SIGHUP held back meanwhile. A failure
// before that removes every temporary file and the directory the set created, and nothing
// else: a file that existed before is never touched. Should a rename fail part way, the error
// names the destinations already replaced.
// Errors name the path and carry strerror(errno); nothing is logged.
// Threading: outputs are created, written and dropped by one thread (the signal handler may
// run on any thread; it only reads the registry).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace lumos::modeler::io {
namespace internal {
struct CleanupEntry;  // A path the signal handler removes (output_file.cc).
}  // namespace internal

// The first key of every JSON file lumos-model writes ("lumos_output": "export", ...): how a
// later run knows the file at its output path is an earlier output it may replace.
inline constexpr const char kOutputMarkerKey[] = "lumos_output";

// The --force option's help, the same in every command that writes files.
inline constexpr const char kForceHelp[] =
    "replace an output file that lumos-model did not write (an agent's trace, a profiler's "
    "JSON, anything else); without it such a file is refused and left as it is";

// What an output may replace. A regular file at the path that lumos-model did not write (an
// agent's trace, a profiler's JSON, anything else) is refused unless `force`; lumos-model's own
// earlier outputs (JSON with kOutputMarkerKey in its first 4 KiB, a cost model, a Lumos trace
// that `own_trace` accepts: import's and synth's, never the agent's) and empty files are
// replaced.
struct ReplacePolicy {
  bool force = false;  // --force: any regular file.
  // Whether the Lumos trace at this path is this kind of command's own earlier output (it
  // reads the header; io does not know the trace format). Unset: no trace is replaced.
  std::function<bool(const std::string& path)> own_trace;
};

class OutputFile {
 public:
  // Prepares `path` for writing (see above). Fails, naming `path` and the reason, when it is a
  // directory or another kind of file that is not replaced, a file `replace` does not allow,
  // or when the temporary file (or the device) cannot be opened. Temporary files of earlier
  // runs for the same destination (killed by SIGKILL) older than a day are removed first.
  static StatusOr<std::unique_ptr<OutputFile>> Create(const std::string& path,
                                                      const ReplacePolicy& replace = {});
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // The destination as given.
  const std::string& path() const { return path_; }
  // Where the bytes go: the temporary file, or path() itself when written directly. Code that
  // opens files by name (the trace writer) writes there.
  const std::string& write_path() const { return write_path_; }
  bool direct() const { return temporary_ == nullptr; }

  // `status` speaking of path() where it names write_path() (code that opened the file by
  // name reports the temporary name, which is gone after a failure).
  Status Reword(const Status& status) const;

  // Writes all of `bytes` to write_path() through this file's own descriptor.
  Status Write(std::string_view bytes);
  // Syncs (temporary files only) and closes the file, checking both; the bytes are all there
  // once it succeeds. On failure the temporary file is removed. Idempotent.
  Status Finish();
  // Finish(), then puts the output in place (renames the temporary file over path()). On
  // failure path() is untouched and the temporary file is gone.
  Status Commit();

 private:
  friend class OutputSet;
  OutputFile() = default;
  // The rename of Commit(), after Finish().
  Status Rename();
  // Closes the file and removes the temporary one (an uncommitted output).
  void Discard();

  std::string path_;
  std::string destination_;  // path_ with symbolic links resolved: what the rename replaces.
  std::string write_path_;
  int fd_ = -1;
  internal::CleanupEntry* temporary_ = nullptr;  // Registered temporary; null: direct or gone.
  bool replaces_ = false;  // The destination is a regular file that the rename replaces.
  bool finished_ = false;
  bool committed_ = false;
};

class OutputSet {
 public:
  OutputSet() = default;
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  // Makes `directory` the place of the set's outputs: created when missing (and removed again,
  // if still empty, unless the set is committed); refused when it exists and is not a
  // directory.
  Status UseDirectory(const std::string& directory);
  // A new output of the set (OutputFile::Create); owned by the set.
  StatusOr<OutputFile*> Add(const std::string& path, const ReplacePolicy& replace = {});
  // Finishes every output, then renames them all. On failure the error names the file, the
  // reason and, after a failed rename, the destinations that were already replaced.
  Status Commit();
  size_t size() const { return files_.size(); }

 private:
  std::vector<std::unique_ptr<OutputFile>> files_;
  std::string directory_;
  internal::CleanupEntry* created_directory_ = nullptr;  // Registered until committed.
  bool committed_ = false;
};

// Whether `a` and `b` name the same existing file (device and inode); false when either does
// not exist.
bool SameFile(const std::string& a, const std::string& b);

}  // namespace lumos::modeler::io
