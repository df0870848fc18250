// Design: writes one trace file: the Lumos preamble (a zstd skippable frame), then one zstd
// frame per flush, each holding whole packets only. Crash safety comes from the layout: a frame
// reaches the file with a single write sequence after it is complete, so a process killed at
// any instant leaves every earlier frame intact, and the reader reports the cut-off tail. A
// failed write (disk full) is truncated away and counted as a LossRecord, never propagated to
// the traced job; the first failed flush (by size, by time or explicit) logs one warning line,
// later ones are only counted. LossRecords in a frame that could not be written are carried
// into the next frame that is (their counts are data too), not counted as lost events. Frames flush
// by size (frame_bytes of uncompressed packets) and by time (MaybeFlush). The file stays below
// max_file_bytes and below the process's RLIMIT_FSIZE (read at each flush, less kTrailerRoomBytes
// kept for the trailer): a write past that limit would raise SIGXFSZ, which kills the process by
// default. Single-threaded: owned by the agent's writer thread (or a tool's main thread).
#pragma once

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "schema/format.h"
#include "schema/writer/packet_encoder.h"
#include "schema/writer/trace_events.h"
#include "schema/writer/wire_buffer.h"

namespace lumos::schema {

struct WriterOptions {
  uint64_t frame_bytes = 1 << 20;              // Flush when this many packet bytes wait.
  uint64_t flush_interval_ns = 1'000'000'000;  // MaybeFlush() flushes frames older than this.
  int zstd_level = 3;
  uint64_t max_file_bytes = 0;  // 0 = unlimited.
  // Writes the header at once in a frame of its own (crash safety for live capture). A
  // converter that writes a whole file in one go saves a frame and shares context with false.
  bool header_in_own_frame = true;
  // Logs the first failed flush (the agent: one warning line). A tool that reports failures
  // itself turns it off and ends with CloseComplete().
  bool log_failures = true;
};

struct WriterStats {
  uint64_t events = 0;           // Events accepted (timed packets).
  uint64_t packets_written = 0;  // Packets in frames that reached the file.
  uint64_t frames_written = 0;
  uint64_t bytes_written = 0;  // File size so far.
  uint64_t uncompressed_bytes = 0;
  uint64_t events_lost = 0;  // Events in frames that could not be written.
};

class TraceFileWriter {
 public:
  // Creates (truncates) `path`, writes the preamble and a first frame holding the header. On
  // failure leaves no file: a process file size limit below kMinFileBytes fails before the file
  // is created; SIGXFSZ is blocked in the calling thread meanwhile (see the .cc).
  static StatusOr<std::unique_ptr<TraceFileWriter>> Create(const std::string& path,
                                                           const HeaderInfo& header,
                                                           const WriterOptions& options);
  ~TraceFileWriter();
  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  // Room kept below RLIMIT_FSIZE for the final frame (trailer, loss records, clock snapshot).
  static constexpr uint64_t kTrailerRoomBytes = 16 << 10;
  // The smallest RLIMIT_FSIZE Create() accepts: the preamble, then room for the trailer above
  // the header frame.
  static constexpr uint64_t kMinFileBytes = schema::kPreambleBytes + kTrailerRoomBytes;

  template <typename Event>
  void Add(const Event& event) {
    AddEvent(event);
  }
  // Kept until its frame is written: carried into the next frame when that write fails.
  void Add(const LossEvent& loss) {
    losses_in_frame_.push_back(
        {loss.start_ns, loss.source, loss.count, loss.thread_id, std::string(loss.detail)});
    loss_count_in_frame_ += loss.count;
    AddEvent(loss);
  }
  void AddClockSnapshot(const ClockReading* readings, size_t count) {
    encoder_.AddClockSnapshot(readings, count);
  }
  void AddThread(const ThreadEvent& thread) { encoder_.Add(thread); }

  // Flushes the pending frame when it is older than flush_interval_ns (now_ns: any clock, as
  // long as the caller always uses the same one).
  Status MaybeFlush(uint64_t now_ns);
  // Compresses and writes the pending packets as one frame (no-op when none are pending). The
  // first failure of any flush logs one warning line.
  Status Flush();
  // Writes what is pending and a final frame with the trailer (file totals, plus `extra`), then
  // closes the file. Logs nothing: see warned().
  Status Close(uint64_t end_time_ns, const TrailerInfo& extra = {});

  // For a tool writing a whole file in one go: Close(), and an error unless every event reached
  // the file, saying why not (the first failed write, or the size limit that stopped it).
  Status CloseComplete(uint64_t end_time_ns);

  // Whether a failure was logged already (a caller reporting Close()'s error can stay silent).
  bool warned() const { return warned_; }
  const WriterStats& stats() const { return stats_; }
  const std::string& path() const { return path_; }

 private:
  template <typename Event>
  void AddEvent(const Event& event) {
    encoder_.Add(event);
    last_event_ns_ = event.start_ns;
    ++events_in_frame_;
    // By size, or by count (readers reject frames of more than schema::kMaxFramePackets).
    if (encoder_.pending_bytes() >= options_.frame_bytes ||
        events_in_frame_ >= schema::kMaxFrameEventsWritten) {
      Flush().IgnoreError();  // Warned once, counted in the trace.
    }
  }

  TraceFileWriter(std::string path, int fd, const WriterOptions& options);
  Status WriteAll(const uint8_t* data, size_t size);
  // Flush() without the warning (Create's header frame: the caller reports that failure).
  Status FlushFrame();
  // The largest file size the next frame may reach: events stop at max_file_bytes and at
  // RLIMIT_FSIZE less kTrailerRoomBytes; the final frame (closing_) only at RLIMIT_FSIZE.
  // 0 = none. `why` names the limit.
  uint64_t FileByteLimit(const char** why) const;
  void ReportWriteLossInPendingFrame();
  // The pending frame's LossRecords did not reach the file: keep them for the next frame.
  void CarryLossesOfFailedFrame();
  // Of a failed frame's `events`, those lost: all but its LossRecords, which are carried into
  // a later frame (CarryLossesOfFailedFrame) and written there, so neither lost nor counted
  // twice. Call before carrying them.
  uint64_t EventsLostWithFrame(uint64_t events) const;

  std::string path_;
  int fd_ = -1;
  WriterOptions options_;
  ZSTD_CCtx* cctx_ = nullptr;
  PacketEncoder encoder_;
  WireBuffer frame_;       // Uncompressed frame being compressed.
  WireBuffer compressed_;  // Its compressed form.
  uint64_t events_in_frame_ = 0;
  uint64_t last_flush_ns_ = 0;
  int64_t last_event_ns_ = 0;           // Time given to LossRecords the writer adds itself.
  uint64_t lost_to_limit_ = 0;          // Events dropped because max_file_bytes was reached.
  uint64_t unreported_write_loss_ = 0;  // Lost to failed writes, not yet in a LossRecord.
  bool write_loss_in_pending_frame_ = false;
  // A LossRecord kept beyond the caller's Add (LossEvent::detail is a view).
  struct KeptLoss {
    int64_t start_ns;
    LossSource source;
    uint64_t count;
    uint32_t thread_id;
    std::string detail;
  };
  std::vector<KeptLoss> losses_in_frame_;  // LossRecords in the pending frame.
  std::vector<KeptLoss> carried_losses_;   // From frames that failed, merged by source/detail.
  // Sums of LossRecord.count, for Trailer.events_dropped ("sum of all LossRecord.count"): of the
  // records in frames that reached the file, and of those in the pending frame (a failed frame's
  // are carried and counted again where they are written).
  uint64_t loss_count_written_ = 0;
  uint64_t loss_count_in_frame_ = 0;
  bool limit_reached_ = false;
  bool warned_ = false;
  Status first_failure_;         // Of any flush: what CloseComplete() reports.
  const char* limit_name_ = "";  // The limit that stopped the events (limit_reached_).
  bool closing_ = false;         // Close() writes the final frame: only RLIMIT_FSIZE limits it.
  bool closed_ = false;
  WriterStats stats_;
};

}  // namespace lumos::schema
