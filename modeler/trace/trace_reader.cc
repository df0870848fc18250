#include "modeler/trace/trace_reader.h"

#include <google/protobuf/arena.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "base/input_file.h"
#include "modeler/trace/column_decoder.h"
#include "modeler/trace/event_packets.h"
#include "modeler/trace/incremental_ids.h"
#include "modeler/trace/packet_util.h"
#include "schema/format.h"
#include "schema/varint.h"
#include "schema/writer/trace_events.h"

namespace lumos::modeler {
namespace {

using schema::ReadVarint;

constexpr uint32_t kZstdFrameMagic = 0xFD2FB528;

uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

bool IsSkippableMagic(uint32_t magic) {
  return (magic & 0xFFFFFFF0u) == schema::kSkippableFrameMagic;
}

// Reads [offset, offset + size) of the file; returns the bytes actually read.
StatusOr<size_t> ReadAt(int fd, const std::string& path, uint64_t offset, uint8_t* out,
                        size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return ErrorStatus("%s: read error at byte offset %" PRIu64 ": %s", path.c_str(),
                         static_cast<uint64_t>(offset + done), std::strerror(errno));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

// Sliding window over the file that yields whole zstd frames.
class FrameSource {
 public:
  FrameSource(int fd, const std::string& path, uint64_t file_bytes)
      : fd_(fd), path_(path), file_bytes_(file_bytes) {}

  enum class Next { kFrame, kEnd, kDamaged };

  // On kFrame: *frame/*size/*offset describe the frame. On kDamaged: *why says what is wrong
  // at *offset.
  Next NextFrame(const uint8_t** frame, size_t* size, uint64_t* offset, std::string* why) {
    for (;;) {
      *offset = window_offset_ + pos_;
      size_t avail = window_.size() - pos_;
      bool eof = window_offset_ + window_.size() >= file_bytes_;
      if (avail == 0 && eof) return Next::kEnd;
      // Frame headers need at least 4 bytes before zstd can tell anything.
      size_t n = avail >= 4 ? ZSTD_findFrameCompressedSize(window_.data() + pos_, avail) : 0;
      if (avail < 4 || ZSTD_isError(n)) {
        bool incomplete = avail < 4 || ZSTD_getErrorCode(n) == ZSTD_error_srcSize_wrong;
        if (incomplete && !eof) {
          if (!Fill(why)) return Next::kDamaged;
          continue;
        }
        if (incomplete) {
          *why = "truncated frame (the file ends " + std::to_string(avail) +
                 " bytes into it; the writer was probably killed)";
        } else {
          uint32_t magic = Le32(window_.data() + pos_);
          *why = magic == kZstdFrameMagic || IsSkippableMagic(magic)
                     ? std::string("corrupted frame: ") + ZSTD_getErrorName(n)
                     : "corrupted data: no zstd frame starts here";
        }
        return Next::kDamaged;
      }
      *frame = window_.data() + pos_;
      *size = n;
      pos_ += n;
      return Next::kFrame;
    }
  }

  // After damage at the current position: moves to the next place a zstd frame's magic number
  // starts (at least one byte on), reading on as needed. False when none is left in the file (or
  // it cannot be read): the rest of the file is lost.
  bool Resync() {
    static constexpr uint8_t kMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};  // kZstdFrameMagic, LE.
    if (pos_ < window_.size()) ++pos_;
    for (;;) {
      const uint8_t* begin = window_.data() + pos_;
      const uint8_t* end = window_.data() + window_.size();
      const uint8_t* found = std::search(begin, end, kMagic, kMagic + 4);
      if (found != end) {
        pos_ += static_cast<size_t>(found - begin);
        return true;
      }
      // Keep the last 3 bytes: a magic number may straddle the window's end.
      pos_ = window_.size() >= 3 ? std::max(pos_, window_.size() - 3) : pos_;
      if (window_offset_ + window_.size() >= file_bytes_) return false;
      std::string ignored;
      const size_t before = window_.size() - pos_;
      if (!Fill(&ignored) || window_.size() <= before) return false;
    }
  }

 private:
  // Drops consumed bytes and reads more; grows the window for frames larger than it.
  bool Fill(std::string* why) {
    window_.erase(window_.begin(), window_.begin() + static_cast<ptrdiff_t>(pos_));
    window_offset_ += pos_;
    pos_ = 0;
    constexpr size_t kMaxWindow = TraceReader::kMaxFrameBytes + kChunkBytes;
    if (window_.size() >= kMaxWindow) {
      *why = "frame larger than " + std::to_string(TraceReader::kMaxFrameBytes >> 20) +
             " MiB compressed: corrupted size fields";
      return false;
    }
    size_t want = std::min(std::max<size_t>(kChunkBytes, window_.size() * 2), kMaxWindow);
    size_t old = window_.size();
    // Never read (or zero-fill) past the end of the file: small files stay cheap.
    uint64_t left = file_bytes_ > window_offset_ + old ? file_bytes_ - window_offset_ - old : 0;
    want = static_cast<size_t>(std::min<uint64_t>(want, old + std::max<uint64_t>(left, 1)));
    window_.resize(want);
    auto n = ReadAt(fd_, path_, window_offset_ + old, window_.data() + old, want - old);
    if (!n.ok()) {
      *why = n.status().message();
      window_.resize(old);
      return false;
    }
    window_.resize(old + *n);
    if (*n == 0) file_bytes_ = window_offset_ + old;  // The file shrank under us.
    return true;
  }

  static constexpr size_t kChunkBytes = 4 << 20;
  int fd_;
  const std::string& path_;
  uint64_t file_bytes_;
  EventList<uint8_t> window_;  // Not zeroed on growth: only read bytes are used.
  uint64_t window_offset_ = 0;
  size_t pos_ = 0;
};

// A TracePacket holding a schema-2 *Columns message: which field, and its body.
struct ColumnsSpan {
  uint32_t field = 0;  // 0: not a column packet.
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// Looks at the top-level fields of a TracePacket for a *Columns field; cheap, no parsing.
ColumnsSpan FindColumns(const uint8_t* p, size_t size) {
  const uint8_t* end = p + size;
  while (p < end) {
    uint64_t tag = 0, value = 0;
    if (!ReadVarint(&p, end, &tag)) return {};
    switch (tag & 7) {
      case 0:
        if (!ReadVarint(&p, end, &value)) return {};
        break;
      case 1:
      case 5: {
        size_t n = (tag & 7) == 1 ? 8 : 4;
        if (static_cast<size_t>(end - p) < n) return {};
        p += n;
        break;
      }
      case 2: {
        if (!ReadVarint(&p, end, &value) || value > static_cast<uint64_t>(end - p)) return {};
        // Compared before narrowing: a tag beyond 32 bits is no column field (libprotobuf
        // rejects the packet).
        uint64_t field = tag >> 3;
        if (field <= UINT32_MAX && ColumnDecoder::IsColumnsField(static_cast<uint32_t>(field))) {
          return ColumnsSpan{static_cast<uint32_t>(field), p, static_cast<size_t>(value)};
        }
        p += value;
        break;
      }
      default:
        return {};  // libprotobuf will report it (or parse a group; see Read()).
    }
  }
  return {};
}

// ReadPackets on a column packet: each event as the row packet schema 1 would have written.
template <typename Event>
Status DeliverKind(const EventList<Event>& list, const InternTable& strings, int64_t base_ns,
                   pb::TracePacket* packet, PacketContext* context,
                   const PacketCallback& callback) {
  for (const Event& e : list) {
    EventToPacket(
        e, strings,
        static_cast<int64_t>(static_cast<uint64_t>(e.start_ns) - static_cast<uint64_t>(base_ns)),
        packet);
    context->start_ns = e.start_ns;
    LUMOS_RETURN_IF_ERROR(callback(*packet, *context));
  }
  return Status::Ok();
}

Status DeliverAsPackets(const FrameEvents& events, const InternTable& strings, int64_t base_ns,
                        pb::TracePacket* packet, PacketContext* context,
                        const PacketCallback& callback) {
  LUMOS_RETURN_IF_ERROR(DeliverKind(events.kernels, strings, base_ns, packet, context, callback));
  LUMOS_RETURN_IF_ERROR(DeliverKind(events.api_calls, strings, base_ns, packet, context, callback));
  LUMOS_RETURN_IF_ERROR(DeliverKind(events.memcpys, strings, base_ns, packet, context, callback));
  LUMOS_RETURN_IF_ERROR(DeliverKind(events.memsets, strings, base_ns, packet, context, callback));
  LUMOS_RETURN_IF_ERROR(DeliverKind(events.syncs, strings, base_ns, packet, context, callback));
  LUMOS_RETURN_IF_ERROR(
      DeliverKind(events.cuda_events, strings, base_ns, packet, context, callback));
  LUMOS_RETURN_IF_ERROR(DeliverKind(events.nvtx, strings, base_ns, packet, context, callback));
  LUMOS_RETURN_IF_ERROR(
      DeliverKind(events.host_ranges, strings, base_ns, packet, context, callback));
  LUMOS_RETURN_IF_ERROR(
      DeliverKind(events.collectives, strings, base_ns, packet, context, callback));
  return DeliverKind(events.gemm_calls, strings, base_ns, packet, context, callback);
}

std::string Where(const std::string& path, uint64_t offset) {
  return path + ": byte offset " + std::to_string(offset);
}

}  // namespace

TraceReader::TraceReader(std::string path, int fd, uint64_t file_bytes)
    : path_(std::move(path)), fd_(fd), file_bytes_(file_bytes) {}

TraceReader::~TraceReader() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  // A FIFO, a directory or a device is refused before anything is read (a FIFO with no writer
  // would otherwise block open(2) forever).
  LUMOS_ASSIGN_OR_RETURN(InputFile file, OpenInputFile(path));
  const int fd = file.fd;
  std::unique_ptr<TraceReader> reader(new TraceReader(path, fd, file.size_bytes));
  if (file.size_bytes == 0) return ErrorStatus("%s: byte offset 0: file is empty", path.c_str());

  uint8_t preamble[schema::kPreambleBytes] = {};
  LUMOS_ASSIGN_OR_RETURN(size_t got, ReadAt(fd, path, 0, preamble, sizeof(preamble)));
  uint32_t magic = got >= 4 ? Le32(preamble) : 0;
  bool lumos = got == sizeof(preamble) && magic == schema::kSkippableFrameMagic &&
               Le32(preamble + 4) == schema::kPreambleContentBytes &&
               std::memcmp(preamble + 8, schema::kFileMagic, sizeof(schema::kFileMagic)) == 0;
  if (!lumos) {
    std::string hint;
    if (got >= 2 && preamble[0] == 0x1F && preamble[1] == 0x8B) {
      hint =
          " (it is gzip data; a PyTorch profiler trace converts with `lumos-model import kineto`)";
    } else if (got >= 1 && (preamble[0] == '{' || preamble[0] == '[')) {
      hint =
          " (it looks like JSON; a PyTorch profiler trace converts with `lumos-model import "
          "kineto`)";
    } else if (magic == kZstdFrameMagic) {
      hint = " (a zstd stream without the Lumos preamble)";
    } else if (got < sizeof(preamble) && magic == schema::kSkippableFrameMagic) {
      hint = " (the preamble is cut short)";
    }
    return Status::Error(Where(path, 0) + ": not a Lumos trace: bad magic" + hint);
  }
  uint32_t major = Le32(preamble + 16);
  if (major < schema::kOldestReadableMajor || major > schema::kSchemaMajor) {
    return ErrorStatus(
        "%s: byte offset 16: schema major version %u is not supported by this "
        "reader (it reads majors %u to %u)%s",
        path.c_str(), major, schema::kOldestReadableMajor, schema::kSchemaMajor,
        major > schema::kSchemaMajor ? "; upgrade lumos-model" : "");
  }
  reader->schema_major_ = major;

  // The first packet must be the header.
  bool saw_header = false;
  Status first_error;
  ReadResult result;
  Status stopped = reader->ReadPackets(
      [&](const pb::TracePacket& packet, const PacketContext&) -> Status {
        if (packet.has_frame()) return Status::Ok();
        if (!packet.has_header()) {
          first_error = Status::Error("the first packet is not a TraceHeader");
        } else {
          reader->header_ = packet.header();
          saw_header = true;
        }
        return Status::Error("stop");
      },
      &result);
  (void)stopped;
  if (!saw_header) {
    std::string why = !first_error.ok()     ? first_error.message()
                      : !result.damage.ok() ? result.damage.message()
                                            : "no TraceHeader packet";
    return Status::Error(path + ": cannot read the header: " + why);
  }
  if (reader->header_.schema_major() != major) {
    return ErrorStatus("%s: the header says schema major %u, the preamble %u", path.c_str(),
                       reader->header_.schema_major(), major);
  }
  return reader;
}

Status TraceReader::ReadPackets(const PacketCallback& callback, ReadResult* result) {
  return Read(&callback, nullptr, result);
}

Status TraceReader::ReadFrames(const FrameCallback& callback, ReadResult* result) {
  return Read(nullptr, &callback, result);
}

// One walk for both ways of reading: `packets` or `frames` is set.
Status TraceReader::Read(const PacketCallback* packets, const FrameCallback* frames,
                         ReadResult* result) {
  *result = ReadResult();
  result->file_bytes = file_bytes_;
  FrameSource source(fd_, path_, file_bytes_);
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (dctx == nullptr) return Status::Error("cannot create a zstd context");
  // zstd's window (streaming only) never needs to exceed a frame's content.
  static_assert(TraceReader::kMaxFrameContentBytes == uint64_t{1} << 26);
  ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, 26);
  EventList<uint8_t> content;  // Not zeroed on growth: only decompressed bytes are used.
  google::protobuf::Arena arena;
  InternTable strings;
  ColumnDecoder columns;
  FrameEvents events;  // ReadFrames: the frame; ReadPackets: one column packet's events.
  pb::TracePacket* synthesized = nullptr;  // ReadPackets: a column event as a row packet.
  PacketContext context;
  context.strings = &strings;
  Status status;
  // Damage is noted and skipped: frames are independent (each restarts its interned strings,
  // ids and time base), so every intact frame before and after a damaged one is read. Damage
  // found while looking for the next frame after a damaged one is the same damaged place.
  bool resyncing = false;
  bool after_trailer = false;  // Stopped at data after the trailer: nothing was skipped.
  auto note = [&](uint64_t at, const std::string& what) {
    if (resyncing) return;
    resyncing = true;
    ++result->damaged_places;
    if (result->damage_notes.size() < ReadResult::kMaxDamageNotes) {
      result->damage_notes.push_back(Where(path_, at) + ": " + what);
    }
  };

  for (uint64_t frame_index = 0;;) {
    if (result->has_trailer && result->bytes_read < file_bytes_) {
      // A cleanly closed file ends with its trailer's frame: what follows was appended by
      // something else, and is not read (it could be anything, e.g. a decompression bomb).
      if (!resyncing) note(result->bytes_read, "data after the trailer");
      after_trailer = true;
      break;
    }
    const uint8_t* frame = nullptr;
    size_t frame_size = 0;
    uint64_t offset = 0;
    std::string why;
    FrameSource::Next next = source.NextFrame(&frame, &frame_size, &offset, &why);
    if (next == FrameSource::Next::kEnd) break;
    if (next == FrameSource::Next::kDamaged) {
      note(offset, why);
      if (!source.Resync()) break;
      continue;
    }
    if (IsSkippableMagic(Le32(frame))) {  // The preamble, or padding from a future writer.
      result->bytes_read = offset + frame_size;
      continue;
    }

    // Decompress the whole frame, never into more than the format allows
    // (schema::kMaxFrameContentBytes): a frame that declares more is refused before anything
    // is allocated, one that declares nothing stops growing at the limit.
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    const unsigned long long declared = ZSTD_getFrameContentSize(frame, frame_size);
    const bool known = declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR;
    if (known && declared > kMaxFrameContentBytes) {
      note(offset, "frame " + std::to_string(frame_index) + " declares " +
                       std::to_string(declared) +
                       " bytes of content, more than a frame may hold (" +
                       std::to_string(kMaxFrameContentBytes >> 20) + " MiB)");
      ++frame_index;
      result->bytes_read = offset + frame_size;
      continue;
    }
    // The buffer grows exactly (reserve, no doubling past the need) and is not zeroed.
    auto grow = [&content](size_t size) {
      if (content.size() >= size) return;
      content.reserve(size);
      content.resize(size);
    };
    size_t remaining = 0;
    size_t produced = 0;
    if (known) {
      // The usual case (the writer declares every frame's size): one shot straight into
      // `content`, without zstd's window buffer. zstd checks that the content matches the
      // declared size.
      grow(static_cast<size_t>(declared) + 1);
      remaining = ZSTD_decompressDCtx(dctx, content.data(), content.size(), frame, frame_size);
      if (!ZSTD_isError(remaining)) {
        produced = remaining;
        remaining = 0;
      }
    } else {
      // No declared size (never from our writers): first count the content through a 1 MiB
      // scratch buffer (`content`, overwritten), stopping past the limit, then decompress it
      // again into exactly that much. A frame that expands past the limit costs the scratch
      // and zstd's window, not the limit; a sound one costs a second decompression.
      grow(size_t{1} << 20);
      ZSTD_inBuffer in{frame, frame_size, 0};
      uint64_t total = 0;
      for (;;) {
        ZSTD_outBuffer out{content.data(), content.size(), 0};
        const size_t in_before = in.pos;
        remaining = ZSTD_decompressStream(dctx, &out, &in);
        total += out.pos;
        if (ZSTD_isError(remaining) || remaining == 0 || total > kMaxFrameContentBytes) break;
        if (in.pos == in_before && out.pos == 0) break;  // Needs input there is not.
      }
      if (!ZSTD_isError(remaining) && total > kMaxFrameContentBytes) {
        why = "decompresses to more than a frame may hold (" +
              std::to_string(kMaxFrameContentBytes >> 20) + " MiB)";
      } else if (!ZSTD_isError(remaining) && remaining != 0) {
        why = "frame ends early";
      } else if (!ZSTD_isError(remaining)) {
        grow(static_cast<size_t>(total) + 1);
        ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
        remaining = ZSTD_decompressDCtx(dctx, content.data(), content.size(), frame, frame_size);
        if (!ZSTD_isError(remaining)) {
          produced = remaining;
          remaining = 0;
        }
      }
    }
    if (ZSTD_isError(remaining) || !why.empty()) {
      if (why.empty()) why = std::string("corrupted frame: ") + ZSTD_getErrorName(remaining);
      note(offset, "frame " + std::to_string(frame_index) + ": " + why);
      ++frame_index;
      result->bytes_read = offset + frame_size;
      continue;
    }

    // Split into packets: Trace.packet entries (unknown Trace fields are skipped).
    arena.Reset();
    auto* packet = google::protobuf::Arena::CreateMessage<pb::TracePacket>(&arena);
    synthesized = google::protobuf::Arena::CreateMessage<pb::TracePacket>(&arena);
    strings.Clear();
    events.Clear();
    events.frame_index = frame_index;
    events.frame_offset = offset;
    context.frame_index = frame_index;
    context.frame_offset = offset;
    bool frame_has_time = false;
    int64_t last_ns = 0, base_ns = 0;
    uint64_t frame_packets = 0;        // As counted in result->packets (see kMaxFramePackets).
    uint64_t frame_column_events = 0;  // See kMaxFrameColumnEvents.
    IncrementalIds ids;
    const uint8_t* p = content.data();
    const uint8_t* end = content.data() + produced;
    uint64_t packet_index = 0;
    while (p < end && why.empty()) {
      if (result->has_trailer) {  // The trailer is the last packet a writer writes.
        why = "data after the trailer (in its frame)";
        break;
      }
      uint64_t tag = 0, length = 0;
      if (!ReadVarint(&p, end, &tag)) {
        why = "malformed packet tag";
        break;
      }
      if (tag >> 3 == 0) {  // No field has number 0 (a frame of zeros would skip as such).
        why = "malformed field in Trace (field number 0)";
        break;
      }
      uint32_t wire_type = tag & 7;
      if (tag >> 3 != 1 || wire_type != 2) {  // Not Trace.packet: skip it.
        uint64_t ignored = 0;
        if (wire_type == 0 && ReadVarint(&p, end, &ignored)) continue;
        if (wire_type == 1 && end - p >= 8) {
          p += 8;
          continue;
        }
        if (wire_type == 5 && end - p >= 4) {
          p += 4;
          continue;
        }
        if (wire_type == 2 && ReadVarint(&p, end, &length) &&
            length <= static_cast<uint64_t>(end - p)) {
          p += length;
          continue;
        }
        why = "malformed field in Trace (tag " + std::to_string(tag) + ")";
        break;
      }
      if (!ReadVarint(&p, end, &length) || length > static_cast<uint64_t>(end - p)) {
        why = "packet " + std::to_string(packet_index) + " runs past the end of its frame";
        break;
      }
      const uint8_t* body_start = p;
      p += length;
      ++result->stored_packets;

      // Schema 2 column packets: decoded by hand.
      ColumnsSpan span = FindColumns(body_start, length);
      if (span.field != 0) {
        if (packet_index == 0) {
          why = "the frame does not start with a FramePacket";
          break;
        }
        size_t before = events.column_events();
        if (packets != nullptr) events.Clear();
        Status decoded = columns.Decode(
            span.field, span.data, span.size, base_ns,
            std::min(kMaxFramePackets - frame_packets, kMaxFrameColumnEvents - frame_column_events),
            strings, &events);
        if (!decoded.ok()) {
          why = "packet " + std::to_string(packet_index) + ": " + decoded.message();
          break;
        }
        ++packet_index;
        uint64_t added = events.column_events() - (packets != nullptr ? 0 : before);
        frame_packets += added;
        frame_column_events += added;
        result->packets += added;
        result->events += added;
        if (packets != nullptr) {
          status = DeliverAsPackets(events, strings, base_ns, synthesized, &context, *packets);
          if (!status.ok()) break;
        }
        continue;
      }

      if (frame_packets == kMaxFramePackets) {
        why = "frame holds more than " + std::to_string(kMaxFramePackets) + " packets";
        break;
      }
      auto* row = frames != nullptr
                      ? google::protobuf::Arena::CreateMessage<pb::TracePacket>(&arena)
                      : packet;
      if (!row->ParseFromArray(body_start, static_cast<int>(length))) {
        why = "packet " + std::to_string(packet_index) + " does not parse as a TracePacket";
        break;
      }
      if ((row->data_case() >= pb::TracePacket::kKernelColumns &&
           row->data_case() <= pb::TracePacket::kCollectiveColumns) ||
          row->data_case() == pb::TracePacket::kGemmCallColumns) {
        // A column packet FindColumns could not walk: a group field (wire types 3/4, which
        // libprotobuf skips and no writer sends) before the columns. As a row its events would
        // reach ReadFrames' caller as an undecoded RowPacket and ReadPackets' caller as one
        // *Columns packet instead of one row per event.
        why = "packet " + std::to_string(packet_index) +
              ": column packet with a group field (not decoded)";
        break;
      }
      ids.Restore(row);
      if (row->has_frame()) {
        if (packet_index != 0) {
          why = "FramePacket in the middle of a frame";
          break;
        }
        base_ns = static_cast<int64_t>(row->frame().base_time_ns());
      } else if (row->has_interned()) {
        Status set = strings.Set(row->interned().iid(), row->interned().value());
        if (!set.ok()) {
          why = set.message();
          break;
        }
      } else if (row->has_trailer()) {
        result->has_trailer = true;
        result->trailer = row->trailer();
      }
      if (row->has_start_delta_ns()) {
        // Wrapping arithmetic: deltas may cross the int64 range on hostile input.
        int64_t from = frame_has_time ? last_ns : base_ns;
        last_ns = static_cast<int64_t>(static_cast<uint64_t>(from) +
                                       static_cast<uint64_t>(row->start_delta_ns()));
        frame_has_time = true;
        context.start_ns = last_ns;
        const uint64_t duration_ns = EventDurationNs(*row);
        if (!schema::EndsInTimeRange(last_ns, duration_ns)) {  // As ColumnDecoder refuses it.
          why = "packet " + std::to_string(packet_index) +
                ": the event ends beyond the 64-bit time range (start " + std::to_string(last_ns) +
                " ns, duration " + std::to_string(duration_ns) + " ns)";
          break;
        }
        ++result->events;
      } else {
        context.start_ns = 0;
      }
      ++packet_index;
      ++frame_packets;
      ++result->packets;
      if (packets != nullptr) {
        status = (*packets)(*row, context);
        if (!status.ok()) break;
      } else if (!row->has_frame() && !row->has_interned() &&
                 !AppendEventFromPacket(*row, context.start_ns, strings, &events)) {
        events.rows.push_back(RowPacket{row, context.start_ns});
      }
    }
    if (status.ok() && frames != nullptr) status = (*frames)(events);
    if (!status.ok()) break;
    if (!why.empty()) {
      // What preceded the damage in this frame was delivered.
      note(offset, "frame " + std::to_string(frame_index) + ": " + why);
    } else {
      resyncing = false;
      ++result->frames;
    }
    ++frame_index;
    result->bytes_read = offset + frame_size;
  }
  ZSTD_freeDCtx(dctx);
  if (result->damaged_places > 0) {
    std::string text = result->damage_notes.front();
    if (result->damaged_places > 1) {
      text += " (and " + std::to_string(result->damaged_places - 1) + " more damaged place" +
              (result->damaged_places > 2 ? "s" : "") + ")";
    }
    if (after_trailer && result->damaged_places == 1) {
      result->only_after_trailer = true;
      result->damage = Status::Error(text);
      return status;
    }
    text += "; skipped: " + std::to_string(result->frames) + " intact frame" +
            (result->frames == 1 ? "" : "s") + " read";
    if (result->has_trailer && result->trailer.events_written() > result->events) {
      text += ", " + std::to_string(result->trailer.events_written() - result->events) +
              " of the " + std::to_string(result->trailer.events_written()) +
              " events its trailer counts lost";
    } else if (!result->has_trailer) {
      text += ", no trailer (how many events were lost is unknown)";
    }
    result->damage = Status::Error(text);
  }
  return status;
}

bool TraceMadeBy(const std::string& path, pb::Producer producer) {
  StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
  return reader.ok() && (*reader)->header().producer() == producer;
}

StatusOr<std::vector<pb::TracePacket>> ReadAllPackets(const std::string& path, ReadResult* result) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path));
  std::vector<pb::TracePacket> packets;
  ReadResult local;
  LUMOS_RETURN_IF_ERROR(reader->ReadPackets(
      [&](const pb::TracePacket& packet, const PacketContext&) {
        packets.push_back(packet);
        return Status::Ok();
      },
      result != nullptr ? result : &local));
  return packets;
}

}  // namespace lumos::modeler
