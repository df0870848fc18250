#include "schema/writer/trace_file_writer.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/logging.h"
#include "schema/format.h"

namespace lumos::schema {
namespace {

void PutLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// A write past RLIMIT_FSIZE raises SIGXFSZ in the writing thread, which kills the process by
// default. Create() runs in its caller's thread (for the agent, one of the job's, at start-up):
// while it writes, the signal is blocked there and one its writes raised is taken back, so a
// limit lowered meanwhile costs the trace (the write fails with EFBIG), never the job. A
// SIGXFSZ that was pending already is left alone.
class FileSizeSignalBlocked {
 public:
  FileSizeSignalBlocked() {
    sigemptyset(&file_size_signal_);
    sigaddset(&file_size_signal_, SIGXFSZ);
    blocked_ = pthread_sigmask(SIG_BLOCK, &file_size_signal_, &previous_) == 0;
    sigset_t pending;
    was_pending_ = sigpending(&pending) != 0 || sigismember(&pending, SIGXFSZ) == 1;
  }
  ~FileSizeSignalBlocked() {
    if (!blocked_) return;
    sigset_t pending;
    if (sigismember(&previous_, SIGXFSZ) == 0 && !was_pending_ && sigpending(&pending) == 0 &&
        sigismember(&pending, SIGXFSZ) == 1) {
      const timespec no_wait{0, 0};
      sigtimedwait(&file_size_signal_, nullptr, &no_wait);
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  FileSizeSignalBlocked(const FileSizeSignalBlocked&) = delete;
  FileSizeSignalBlocked& operator=(const FileSizeSignalBlocked&) = delete;

 private:
  sigset_t file_size_signal_{};
  sigset_t previous_{};
  bool blocked_ = false;
  bool was_pending_ = false;
};

}  // namespace

TraceFileWriter::TraceFileWriter(std::string path, int fd, const WriterOptions& options)
    : path_(std::move(path)), fd_(fd), options_(options) {}

TraceFileWriter::~TraceFileWriter() {
  if (!closed_) Close(0).IgnoreError();
  if (cctx_ != nullptr) ZSTD_freeCCtx(cctx_);
}

StatusOr<std::unique_ptr<TraceFileWriter>> TraceFileWriter::Create(const std::string& path,
                                                                   const HeaderInfo& header,
                                                                   const WriterOptions& options) {
  // Checked before the file exists: with no room for a trace (`ulimit -f 0` in a sandbox whose
  // job writes only to pipes), there is no file and no write that could raise SIGXFSZ.
  rlimit file_size{};
  if (getrlimit(RLIMIT_FSIZE, &file_size) == 0 && file_size.rlim_cur != RLIM_INFINITY &&
      file_size.rlim_cur < kMinFileBytes) {
    return ErrorStatus(
        "no trace: RLIMIT_FSIZE (ulimit -f) of %llu bytes is below the %llu a "
        "trace needs at least",
        static_cast<unsigned long long>(file_size.rlim_cur),
        static_cast<unsigned long long>(kMinFileBytes));
  }
  FileSizeSignalBlocked file_size_signal_blocked;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrorStatus("cannot create %s: %s", path.c_str(), std::strerror(errno));
  std::unique_ptr<TraceFileWriter> writer(new TraceFileWriter(path, fd, options));
  // A file without its header frame would read as a process that recorded nothing: a failure
  // from here on removes it (a regular file only: never a device such as /dev/full).
  auto fail = [&writer](Status status) -> StatusOr<std::unique_ptr<TraceFileWriter>> {
    struct stat st {};
    const bool regular = fstat(writer->fd_, &st) == 0 && S_ISREG(st.st_mode);
    ::close(writer->fd_);
    writer->fd_ = -1;
    writer->closed_ = true;  // The destructor writes no trailer.
    if (regular) unlink(writer->path_.c_str());
    return status;
  };
  writer->cctx_ = ZSTD_createCCtx();
  if (writer->cctx_ == nullptr) return fail(ErrorStatus("cannot create a zstd context"));
  ZSTD_CCtx_setParameter(writer->cctx_, ZSTD_c_compressionLevel, options.zstd_level);
  // The checksum lets the reader tell a corrupted frame from a valid one.
  ZSTD_CCtx_setParameter(writer->cctx_, ZSTD_c_checksumFlag, 1);

  uint8_t preamble[schema::kPreambleBytes];
  PutLe32(preamble, schema::kSkippableFrameMagic);
  PutLe32(preamble + 4, schema::kPreambleContentBytes);
  std::memcpy(preamble + 8, schema::kFileMagic, sizeof(schema::kFileMagic));
  PutLe32(preamble + 16, schema::kSchemaMajor);
  PutLe32(preamble + 20, schema::kSchemaMinor);
  if (Status written = writer->WriteAll(preamble, sizeof(preamble)); !written.ok()) {
    return fail(std::move(written));
  }
  writer->stats_.bytes_written = sizeof(preamble);

  // The header gets a frame of its own, so even a process killed at once leaves it behind.
  writer->encoder_.AddHeader(header);
  if (options.header_in_own_frame) {
    if (Status flushed = writer->FlushFrame(); !flushed.ok()) return fail(std::move(flushed));
  }
  return writer;
}

Status TraceFileWriter::WriteAll(const uint8_t* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd_, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error = n < 0 ? errno : ENOSPC;
      // Cut the partial frame off so the file stays a sequence of whole frames.
      if (ftruncate(fd_, static_cast<off_t>(stats_.bytes_written)) == 0) {
        lseek(fd_, static_cast<off_t>(stats_.bytes_written), SEEK_SET);
      }
      return ErrorStatus("writing %s at byte %llu: %s", path_.c_str(),
                         static_cast<unsigned long long>(stats_.bytes_written),
                         std::strerror(error));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status TraceFileWriter::Flush() {
  Status status = FlushFrame();
  if (!status.ok() && first_failure_.ok()) first_failure_ = status;
  // One line per writer, whichever flush fails first: a full disk must not flood the job's
  // stderr, and a time-triggered flush must not fail silently either.
  if (!status.ok() && !warned_ && options_.log_failures) {
    warned_ = true;
    LUMOS_LOG(Warn, "%s (further failures are counted in the trace, not logged)",
              status.message().c_str());
  }
  return status;
}

uint64_t TraceFileWriter::FileByteLimit(const char** why) const {
  uint64_t limit = 0;
  *why = "";
  if (!closing_ && options_.max_file_bytes != 0) {
    limit = options_.max_file_bytes;
    *why = "max_file_bytes";
  }
  rlimit file_size{};
  if (getrlimit(RLIMIT_FSIZE, &file_size) == 0 && file_size.rlim_cur != RLIM_INFINITY) {
    const auto hard = static_cast<uint64_t>(file_size.rlim_cur);
    // Room for the final frame; with a tiny limit, half of it.
    const uint64_t for_events = hard > 2 * kTrailerRoomBytes ? hard - kTrailerRoomBytes : hard / 2;
    const uint64_t rlimit_bound = closing_ ? hard : for_events;
    if (limit == 0 || rlimit_bound < limit) {
      limit = rlimit_bound;
      *why = "RLIMIT_FSIZE (ulimit -f)";
    }
  }
  return limit;
}

Status TraceFileWriter::FlushFrame() {
  if (fd_ < 0 || (encoder_.empty() && unreported_write_loss_ == 0 && carried_losses_.empty())) {
    return Status::Ok();
  }
  if (limit_reached_) {
    // Counted now, reported once in the final frame (see Close).
    const uint64_t lost = EventsLostWithFrame(events_in_frame_);
    stats_.events_lost += lost;
    lost_to_limit_ += lost;
    events_in_frame_ = 0;
    CarryLossesOfFailedFrame();
    encoder_.TakeFrame(&frame_);
    return Status::Error(path_ + " reached its size limit");
  }
  ReportWriteLossInPendingFrame();
  uint64_t events = events_in_frame_;
  uint64_t packets = encoder_.TakeFrame(&frame_);
  events_in_frame_ = 0;
  write_loss_in_pending_frame_ = false;

  size_t bound = ZSTD_compressBound(frame_.size());
  compressed_.Clear();
  compressed_.EnsureRoom(bound);
  size_t n = ZSTD_compress2(cctx_, compressed_.data(), bound, frame_.data(), frame_.size());
  const char* limit_name = "";
  const uint64_t limit = FileByteLimit(&limit_name);
  Status status;
  if (ZSTD_isError(n)) {
    status = ErrorStatus("zstd: %s", ZSTD_getErrorName(n));
  } else if (limit != 0 && stats_.bytes_written + n > limit) {
    if (closing_) {
      status = ErrorStatus("%s: the final frame does not fit under %s", path_.c_str(), limit_name);
    } else {
      limit_reached_ = true;
      limit_name_ = limit_name;
      stats_.events_lost += EventsLostWithFrame(events);
      lost_to_limit_ += EventsLostWithFrame(events);
      CarryLossesOfFailedFrame();
      return ErrorStatus(
          "%s reached its size limit of %llu bytes (%s); later events are counted, not written",
          path_.c_str(), static_cast<unsigned long long>(limit), limit_name);
    }
  } else {
    status = WriteAll(compressed_.data(), n);
  }
  if (!status.ok()) {
    stats_.events_lost += EventsLostWithFrame(events);
    unreported_write_loss_ += EventsLostWithFrame(events);
    CarryLossesOfFailedFrame();
    return status;
  }
  losses_in_frame_.clear();
  loss_count_written_ += loss_count_in_frame_;
  loss_count_in_frame_ = 0;
  unreported_write_loss_ = 0;
  stats_.bytes_written += n;
  stats_.uncompressed_bytes += frame_.size();
  stats_.frames_written += 1;
  stats_.packets_written += packets;
  stats_.events += events;
  return Status::Ok();
}

uint64_t TraceFileWriter::EventsLostWithFrame(uint64_t events) const {
  return events - std::min<uint64_t>(events, losses_in_frame_.size());
}

// Loss is data: events of frames that failed to reach the disk are reported in the next frame
// that does; the count stays unreported until a write succeeds. LossRecords that were in those
// frames go into it as well, as events of that frame (they were never counted as lost).
void TraceFileWriter::ReportWriteLossInPendingFrame() {
  for (KeptLoss& loss : carried_losses_) {
    encoder_.Add(LossEvent{loss.start_ns, 0, loss.source, loss.count, loss.thread_id, loss.detail});
    ++events_in_frame_;
    loss_count_in_frame_ += loss.count;
    losses_in_frame_.push_back(std::move(loss));
  }
  carried_losses_.clear();
  if (unreported_write_loss_ == 0 || write_loss_in_pending_frame_) return;
  encoder_.Add(LossEvent{last_event_ns_, 0, LossSource::kWriteFailed, unreported_write_loss_, 0,
                         "frames that could not be written"});
  loss_count_in_frame_ += unreported_write_loss_;
  write_loss_in_pending_frame_ = true;
}

void TraceFileWriter::CarryLossesOfFailedFrame() {
  for (KeptLoss& loss : losses_in_frame_) {
    auto same =
        std::find_if(carried_losses_.begin(), carried_losses_.end(), [&](const KeptLoss& k) {
          return k.source == loss.source && k.thread_id == loss.thread_id &&
                 k.detail == loss.detail;
        });
    if (same != carried_losses_.end()) {
      same->count += loss.count;
    } else {
      carried_losses_.push_back(std::move(loss));
    }
  }
  losses_in_frame_.clear();
  loss_count_in_frame_ = 0;  // Counted again where the carried records are written.
}

Status TraceFileWriter::MaybeFlush(uint64_t now_ns) {
  if (last_flush_ns_ == 0 || now_ns < last_flush_ns_) last_flush_ns_ = now_ns;
  if (encoder_.empty() || now_ns - last_flush_ns_ < options_.flush_interval_ns) {
    return Status::Ok();
  }
  last_flush_ns_ = now_ns;
  return Flush();
}

Status TraceFileWriter::CloseComplete(uint64_t end_time_ns) {
  Status closed = Close(end_time_ns);
  if (stats_.events_lost == 0) return closed;
  if (lost_to_limit_ != 0) {
    return ErrorStatus("writing %s: the file does not fit under %s (%llu events left out)",
                       path_.c_str(), limit_name_, static_cast<unsigned long long>(lost_to_limit_));
  }
  if (!first_failure_.ok()) return first_failure_;
  if (!closed.ok()) return closed;
  return ErrorStatus("writing %s: %llu events could not be written", path_.c_str(),
                     static_cast<unsigned long long>(stats_.events_lost));
}

Status TraceFileWriter::Close(uint64_t end_time_ns, const TrailerInfo& extra) {
  if (closed_) return Status::Ok();
  closed_ = true;
  Status status;
  // Normally the trailer shares the last frame with the pending events (a frame less per
  // file). After a failed write or at the size limit, the pending events go first and the
  // trailer alone follows in a small frame, which still fits where a big one did not.
  if (limit_reached_ || stats_.events_lost != 0) {
    status = FlushFrame();
    if (limit_reached_) status = Status::Ok();  // Expected: the trailer says what was lost.
    limit_reached_ = false;
  }
  // The trailer always goes out, even past max_file_bytes (it is what says the file is whole),
  // but never past RLIMIT_FSIZE (see FileByteLimit).
  closing_ = true;
  if (lost_to_limit_ != 0) {
    encoder_.Add(LossEvent{last_event_ns_, 0, LossSource::kFileLimit, lost_to_limit_, 0,
                           "file size limit reached"});
    loss_count_in_frame_ += lost_to_limit_;
  }
  ReportWriteLossInPendingFrame();
  uint64_t packets_before = stats_.packets_written + 1 /*FramePacket*/ + encoder_.pending_packets();
  encoder_.AddTrailer(packets_before, stats_.frames_written,
                      loss_count_written_ + loss_count_in_frame_, end_time_ns,
                      stats_.events + events_in_frame_, extra);
  Status trailer = FlushFrame();
  closing_ = false;
  if (::close(fd_) != 0 && status.ok()) {
    status = ErrorStatus("closing %s: %s", path_.c_str(), std::strerror(errno));
  }
  fd_ = -1;
  return status.ok() ? trailer : status;
}

}  // namespace lumos::schema
