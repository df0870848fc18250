#include "modeler/io/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

namespace lumos::modeler::io {
namespace internal {

// A path to remove on a signal: a malloc'd C string, or null when the slot is free.
struct CleanupEntry {
  std::atomic<char*> path{nullptr};
};

}  // namespace internal
namespace {

using internal::CleanupEntry;

// The paths the signal handler removes. Entries live in fixed blocks chained from the first,
// never freed or moved, so the handler walks them with atomic loads only (no lock, no
// allocation). Adding and removing take a mutex the handler never touches. A removed path is
// freed by the thread that removes it: outputs belong to one thread (see the header), and a
// handler running on that thread cannot interleave with it.
class CleanupRegistry {
 public:
  CleanupRegistry() {
    for (CleanupEntry& entry : first_.entries) free_.push_back(&entry);
  }

  CleanupEntry* Add(const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) {
      Block* block = new Block();  // Never freed: the handler may be reading it.
      for (CleanupEntry& entry : block->entries) free_.push_back(&entry);
      last_->next.store(block, std::memory_order_release);
      last_ = block;
    }
    CleanupEntry* entry = free_.back();
    free_.pop_back();
    entry->path.store(::strdup(path.c_str()), std::memory_order_release);
    return entry;
  }

  void Remove(CleanupEntry* entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::free(entry->path.exchange(nullptr, std::memory_order_acq_rel));
    free_.push_back(entry);
  }

  // Async-signal-safe.
  template <typename Function>
  void ForEach(Function function) const {
    for (const Block* block = &first_; block != nullptr;
         block = block->next.load(std::memory_order_acquire)) {
      for (const CleanupEntry& entry : block->entries) {
        const char* path = entry.path.load(std::memory_order_acquire);
        if (path != nullptr) function(path);
      }
    }
  }

 private:
  static constexpr size_t kBlockEntries = 128;
  struct Block {
    CleanupEntry entries[kBlockEntries];
    std::atomic<Block*> next{nullptr};
  };
  Block first_;
  Block* last_ = &first_;
  std::mutex mutex_;
  std::vector<CleanupEntry*> free_;
};

// Created once, never destroyed: a signal may arrive while static destructors run.
CleanupRegistry* const g_files = new CleanupRegistry();
CleanupRegistry* const g_directories = new CleanupRegistry();

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[std::size(kCleanupSignals)];

void OnCleanupSignal(int signal_number) {
  const int saved_errno = errno;
  g_files->ForEach([](const char* path) { ::unlink(path); });
  g_directories->ForEach([](const char* path) { ::rmdir(path); });  // Only when empty.
  for (size_t i = 0; i < std::size(kCleanupSignals); ++i) {
    if (kCleanupSignals[i] != signal_number) continue;
    // The signal is blocked while this handler runs: raised again, it is delivered under the
    // previous disposition (by default: the process ends by it) once the handler returns.
    ::sigaction(signal_number, &g_previous[i], nullptr);
    ::raise(signal_number);
  }
  errno = saved_errno;
}

void InstallCleanupHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = OnCleanupSignal;
    sigemptyset(&action.sa_mask);
    for (int signal_number : kCleanupSignals) sigaddset(&action.sa_mask, signal_number);
    action.sa_flags = SA_RESTART;
    for (size_t i = 0; i < std::size(kCleanupSignals); ++i) {
      struct sigaction current {};
      if (::sigaction(kCleanupSignals[i], nullptr, &current) != 0) continue;
      // An ignored signal (nohup, a background job's SIGINT) stays ignored.
      if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN) continue;
      g_previous[i] = current;
      ::sigaction(kCleanupSignals[i], &action, nullptr);
    }
    // A write past RLIMIT_FSIZE raises SIGXFSZ, which by default kills the process (and dumps
    // core) mid-write; ignored, the write fails with EFBIG and the output reports it.
    struct sigaction file_size {};
    if (::sigaction(SIGXFSZ, nullptr, &file_size) == 0 && (file_size.sa_flags & SA_SIGINFO) == 0 &&
        file_size.sa_handler == SIG_DFL) {
      file_size.sa_handler = SIG_IGN;
      ::sigaction(SIGXFSZ, &file_size, nullptr);
    }
  });
}

// Holds SIGINT/SIGTERM/SIGHUP back in this thread: around a path's creation and its
// registration (a signal between the two would leave the file behind), and around the
// renames of a set (they all happen, then the signal is taken).
class CleanupSignalsBlocked {
 public:
  CleanupSignalsBlocked() {
    sigset_t set;
    sigemptyset(&set);
    for (int signal_number : kCleanupSignals) sigaddset(&set, signal_number);
    blocked_ = ::pthread_sigmask(SIG_BLOCK, &set, &previous_) == 0;
  }
  ~CleanupSignalsBlocked() {
    if (blocked_) ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  CleanupSignalsBlocked(const CleanupSignalsBlocked&) = delete;
  CleanupSignalsBlocked& operator=(const CleanupSignalsBlocked&) = delete;

 private:
  sigset_t previous_{};
  bool blocked_ = false;
};

// Six characters of [A-Za-z0-9] for a temporary name; O_EXCL catches the rare collision.
std::string RandomTag() {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static std::atomic<uint64_t> counter{0};
  uint64_t bits = 0;
  if (::getrandom(&bits, sizeof(bits), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(bits))) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    bits = (static_cast<uint64_t>(now.tv_nsec) << 20) ^ static_cast<uint64_t>(now.tv_sec) ^
           (static_cast<uint64_t>(::getpid()) << 40) ^ counter.fetch_add(1) * 0x9e3779b97f4a7c15ull;
  }
  std::string tag(6, 'x');
  for (char& c : tag) {
    c = kAlphabet[bits % (sizeof(kAlphabet) - 1)];
    bits /= sizeof(kAlphabet) - 1;
  }
  return tag;
}

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// "" when the regular file at `path` is lumos-model's own earlier output that `replace` allows
// replacing; else what it holds ("a Lumos trace", "JSON", ...) for the refusal.
std::string ForeignContent(const std::string& path, const ReplacePolicy& replace) {
  char head[4096];
  ssize_t n = -1;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0) {
    do {
      n = ::pread(fd, head, sizeof(head), 0);
    } while (n < 0 && errno == EINTR);
    ::close(fd);
  }
  if (n < 0) return "a file it cannot read";
  const std::string_view text(head, static_cast<size_t>(n));
  // A Lumos trace: a zstd skippable frame (magic 0x184D2A5?) holding "LUMOSPB".
  if (text.size() >= 16 && static_cast<uint8_t>(text[0]) >= 0x50 &&
      static_cast<uint8_t>(text[0]) <= 0x5F && text.substr(1, 3) == "\x2A\x4D\x18" &&
      text.substr(8, 7) == "LUMOSPB") {
    return replace.own_trace && replace.own_trace(path) ? "" : "a Lumos trace";
  }
  if (text.find(std::string("\"") + kOutputMarkerKey + "\"") != std::string_view::npos ||
      text.find("\"format\":\"lumos-cost-model\"") != std::string_view::npos) {
    return "";
  }
  // costs predict's CSV: the queries' columns, then its own two.
  const std::string_view first_line = text.substr(0, text.find('\n'));
  if (first_line.size() >= 20 &&
      first_line.substr(first_line.size() - 20) == ",predicted_us,source") {
    return "";
  }
  if (text.size() >= 2 && static_cast<uint8_t>(text[0]) == 0x1f &&
      static_cast<uint8_t>(text[1]) == 0x8b) {
    return "a gzip file";
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    return "JSON";
  }
  return "a file";
}

// The temporary files of `destination` are "STEM.XXXXXX.tmp" next to it: STEM is the
// destination, or, when its name leaves no room for the 11-character suffix within NAME_MAX, its
// name cut and marked with a hash of the whole (a legal 250-character name failed).
std::string TemporaryStem(const std::string& destination) {
  const size_t slash = destination.rfind('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  const size_t name_length = destination.size() - name_start;
  constexpr size_t kSuffix = 11;  // ".XXXXXX.tmp"
  if (name_length + kSuffix <= NAME_MAX) return destination;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a of the whole name.
  for (size_t i = name_start; i < destination.size(); ++i) {
    hash = (hash ^ static_cast<uint8_t>(destination[i])) * 1099511628211ull;
  }
  char tag[20];
  std::snprintf(tag, sizeof(tag), "~%08x", static_cast<uint32_t>(hash));
  return destination.substr(0, name_start + NAME_MAX - kSuffix - 9) + tag;
}

// Removes "STEM.XXXXXX.tmp" files of `destination` older than a day: what a run killed by
// SIGKILL (no handler runs) left behind. Younger ones may belong to a run still writing.
void RemoveStaleTemporaries(const std::string& destination) {
  const std::string stem = TemporaryStem(destination);
  const size_t slash = stem.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : stem.substr(0, slash + 1);
  const std::string prefix = (slash == std::string::npos ? stem : stem.substr(slash + 1)) + ".";
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return;
  const time_t day_ago = ::time(nullptr) - time_t{24} * 3600;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name(entry->d_name);
    if (name.size() != prefix.size() + 10 || name.substr(0, prefix.size()) != prefix ||
        name.substr(name.size() - 4) != ".tmp") {
      continue;
    }
    const std::string full = (slash == std::string::npos ? "" : directory) + std::string(name);
    struct stat st {};
    if (::lstat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime < day_ago) {
      ::unlink(full.c_str());
    }
  }
  ::closedir(dir);
}

}  // namespace

StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(const std::string& path,
                                                         const ReplacePolicy& replace) {
  if (path.empty()) return Status::Error("the output file name is empty");
  if (path.back() == '/') {
    return ErrorStatus("cannot write %s: a directory name (give the name of a file to write)",
                       path.c_str());
  }
  InstallCleanupHandlers();
  std::unique_ptr<OutputFile> file(new OutputFile());
  file->path_ = path;
  file->destination_ = path;
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;  // Through symbolic links.
  if (!exists && errno != ENOENT) {
    return ErrorStatus("cannot write %s: %s", path.c_str(), std::strerror(errno));
  }
  struct stat link {};
  if (exists && S_ISREG(st.st_mode) && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    // The rename replaces the link's target, not the link.
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (resolved == nullptr) {
      return ErrorStatus("cannot write %s: cannot resolve the symbolic link: %s", path.c_str(),
                         std::strerror(errno));
    }
    file->destination_ = resolved;
    std::free(resolved);
  } else if (!exists && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    return ErrorStatus("cannot write %s: a symbolic link to a file that does not exist",
                       path.c_str());
  }
  if (exists && !S_ISREG(st.st_mode)) {
    if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
      return ErrorStatus("cannot write %s: it is %s (give the name of a file to write)",
                         path.c_str(), KindOf(st.st_mode));
    }
    // A device or FIFO is written to, never replaced (opening a FIFO waits for its reader).
    int fd = -1;
    do {
      fd = ::open(file->destination_.c_str(), O_WRONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return ErrorStatus("cannot write %s: %s", path.c_str(), std::strerror(errno));
    file->fd_ = fd;
    file->write_path_ = file->destination_;
    return file;
  }
  if (exists && st.st_size > 0 && !replace.force) {
    const std::string what = ForeignContent(file->destination_, replace);
    if (!what.empty()) {
      return ErrorStatus(
          "will not replace %s: it holds %s that lumos-model did not write (give another name, "
          "or --force to replace it)",
          path.c_str(), what.c_str());
    }
  }
  RemoveStaleTemporaries(file->destination_);
  file->replaces_ = exists;
  const std::string stem = TemporaryStem(file->destination_);
  for (int attempt = 0; attempt < 100 && file->fd_ < 0; ++attempt) {
    std::string temporary = stem + "." + RandomTag() + ".tmp";
    CleanupSignalsBlocked held;
    const int fd = ::open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      return ErrorStatus("cannot write %s: cannot create %s: %s", path.c_str(), temporary.c_str(),
                         std::strerror(errno));
    }
    file->fd_ = fd;
    file->temporary_ = g_files->Add(temporary);
    file->write_path_ = std::move(temporary);
  }
  if (file->fd_ < 0) {
    return ErrorStatus("cannot write %s: no unused temporary name next to it", path.c_str());
  }
  if (exists) {
    // The replacement keeps the owner (where permitted) and the mode of what it replaces;
    // owner first, as a change of owner clears set-id bits.
    if (::fchown(file->fd_, st.st_uid, st.st_gid) != 0) {
      // Not permitted for another user's file: the new file is the caller's.
    }
    ::fchmod(file->fd_, st.st_mode & 07777);
  }
  return file;
}

OutputFile::~OutputFile() {
  if (!committed_) Discard();
}

void OutputFile::Discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (temporary_ != nullptr) {
    ::unlink(write_path_.c_str());
    g_files->Remove(temporary_);
    temporary_ = nullptr;
  }
}

Status OutputFile::Reword(const Status& status) const {
  if (status.ok() || write_path_ == path_) return status;
  std::string message = status.message();
  for (size_t at = message.find(write_path_); at != std::string::npos;
       at = message.find(write_path_, at + path_.size())) {
    message.replace(at, write_path_.size(), path_);
  }
  return Status::Error(std::move(message));
}

Status OutputFile::Write(std::string_view bytes) {
  if (fd_ < 0) return ErrorStatus("writing %s: the file is closed", path_.c_str());
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return ErrorStatus("writing %s: %s", path_.c_str(), std::strerror(n < 0 ? errno : ENOSPC));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status OutputFile::Finish() {
  if (finished_) return Status::Ok();
  if (fd_ < 0) return ErrorStatus("writing %s: the output was discarded", path_.c_str());
  Status status;
  // Durable before the rename puts it in place of an older file.
  if (!direct() && ::fsync(fd_) != 0) {
    status = ErrorStatus("writing %s: %s", path_.c_str(), std::strerror(errno));
  }
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0 && status.ok()) {
    status = ErrorStatus("writing %s: %s", path_.c_str(), std::strerror(errno));
  }
  if (!status.ok()) {
    Discard();
    return status;
  }
  finished_ = true;
  return Status::Ok();
}

Status OutputFile::Rename() {
  if (direct()) return Status::Ok();
  if (::rename(write_path_.c_str(), destination_.c_str()) != 0) {
    Status status = ErrorStatus("cannot put %s in place (rename from %s): %s", path_.c_str(),
                                write_path_.c_str(), std::strerror(errno));
    Discard();
    return status;
  }
  g_files->Remove(temporary_);
  temporary_ = nullptr;
  return Status::Ok();
}

Status OutputFile::Commit() {
  LUMOS_RETURN_IF_ERROR(Finish());
  CleanupSignalsBlocked held;
  LUMOS_RETURN_IF_ERROR(Rename());
  committed_ = true;
  return Status::Ok();
}

OutputSet::~OutputSet() {
  files_.clear();  // Removes the temporary files of uncommitted outputs.
  if (created_directory_ != nullptr) {
    if (!committed_) ::rmdir(directory_.c_str());
    g_directories->Remove(created_directory_);
  }
}

Status OutputSet::UseDirectory(const std::string& directory) {
  InstallCleanupHandlers();
  struct stat st {};
  if (::stat(directory.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return ErrorStatus("%s exists and is not a directory", directory.c_str());
    }
    return Status::Ok();
  }
  if (errno != ENOENT) {
    return ErrorStatus("cannot use directory %s: %s", directory.c_str(), std::strerror(errno));
  }
  CleanupSignalsBlocked held;
  if (::mkdir(directory.c_str(), 0777) != 0) {
    return ErrorStatus("cannot create directory %s: %s", directory.c_str(), std::strerror(errno));
  }
  directory_ = directory;
  created_directory_ = g_directories->Add(directory);
  return Status::Ok();
}

StatusOr<OutputFile*> OutputSet::Add(const std::string& path, const ReplacePolicy& replace) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> file, OutputFile::Create(path, replace));
  files_.push_back(std::move(file));
  return files_.back().get();
}

Status OutputSet::Commit() {
  for (const std::unique_ptr<OutputFile>& file : files_) LUMOS_RETURN_IF_ERROR(file->Finish());
  CleanupSignalsBlocked held;
  for (size_t i = 0; i < files_.size(); ++i) {
    Status renamed = files_[i]->Rename();
    if (renamed.ok()) {
      files_[i]->committed_ = true;
      continue;
    }
    if (i == 0) return renamed;
    // The renames before this one cannot be taken back: say which outputs are in place.
    committed_ = true;  // The directory holds them: keep it.
    std::string in_place;
    constexpr size_t kNamed = 10;
    for (size_t j = 0; j < i && j < kNamed; ++j) {
      in_place += (j == 0 ? "" : ", ") + files_[j]->path_;
      in_place += files_[j]->replaces_ ? " (replaced)" : " (new)";
    }
    if (i > kNamed) in_place += ", and " + std::to_string(i - kNamed) + " more";
    return ErrorStatus("%s; %zu of %zu outputs were already in place: %s",
                       renamed.message().c_str(), i, files_.size(), in_place.c_str());
  }
  committed_ = true;
  return Status::Ok();
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace lumos::modeler::io
