// Design: constants of the Lumos file format shared by the writer (agent, no protobuf) and the
// reader (modeler). The file starts with a zstd skippable frame carrying kFileMagic and the
// schema version, so `zstd -dc` ignores it and the decompressed file stays one `Trace` message.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lumos::schema {

// Bump kSchemaMajor only for changes old readers cannot read; bump kSchemaMinor for additions.
inline constexpr uint32_t kSchemaMajor = 2;
inline constexpr uint32_t kSchemaMinor = 4;
// Readers read every major from this one to kSchemaMajor (1.x: one row packet per event).
inline constexpr uint32_t kOldestReadableMajor = 1;

// zstd skippable frame: 4-byte magic (0x184D2A50..5F), 4-byte little-endian content size.
inline constexpr uint32_t kSkippableFrameMagic = 0x184D2A50;
// Content of that frame: "LUMOSPB\0", u32 schema_major, u32 schema_minor (little endian).
inline constexpr char kFileMagic[8] = {'L', 'U', 'M', 'O', 'S', 'P', 'B', '\0'};
inline constexpr size_t kPreambleContentBytes = 16;
inline constexpr size_t kPreambleBytes = 8 + kPreambleContentBytes;

// Packets in one frame, counting each entry of a column packet as one: readers reject frames
// with more (a few KB of zstd can decompress to millions of one-byte column entries, and each
// becomes a ~140-byte struct in the reader). Writers flush a frame by kMaxFrameEventsWritten
// at the latest, which leaves room for an interned string per event; readers also reject a
// frame whose column packets hold more events than that.
inline constexpr uint64_t kMaxFramePackets = uint64_t{1} << 22;
inline constexpr uint64_t kMaxFrameEventsWritten = kMaxFramePackets / 4;

// Decompressed bytes of one frame: readers reject a frame that declares or decompresses to more,
// before allocating for it (a 30 KB zstd frame of zeros declares 1 GB). Writers stay far below:
// they flush a frame once frame_bytes (1 MiB in the agent, the importer and synth) of packets
// wait, so a frame holds at most that plus one event's strings.
inline constexpr uint64_t kMaxFrameContentBytes = uint64_t{64} << 20;

// Trace.packet is field 1, length-delimited: every packet starts with this tag byte.
inline constexpr uint8_t kTracePacketTag = (1 << 3) | 2;

// TracePacket field numbers, for the hand-written encoder (must match trace.proto; a test
// checks them against the generated descriptors).
namespace packet_field {
inline constexpr uint32_t kStartDeltaNs = 1;
inline constexpr uint32_t kKernel = 2;
inline constexpr uint32_t kApiCall = 3;
inline constexpr uint32_t kMemcpy = 4;
inline constexpr uint32_t kMemset = 5;
inline constexpr uint32_t kSync = 6;
inline constexpr uint32_t kCudaEvent = 7;
inline constexpr uint32_t kNvtx = 8;
inline constexpr uint32_t kHostRange = 9;
inline constexpr uint32_t kCollective = 10;
inline constexpr uint32_t kInterned = 11;
inline constexpr uint32_t kFrame = 12;
inline constexpr uint32_t kClockSnapshot = 13;
inline constexpr uint32_t kLoss = 14;
inline constexpr uint32_t kClockId = 16;
inline constexpr uint32_t kHeader = 17;
inline constexpr uint32_t kCommunicator = 18;
inline constexpr uint32_t kCaptureWindow = 19;
inline constexpr uint32_t kThread = 20;
inline constexpr uint32_t kTrailer = 21;
// Schema 2 column packets: kKernelColumns - kKernel == kCollectiveColumns - kCollective.
inline constexpr uint32_t kKernelColumns = 22;
inline constexpr uint32_t kApiCallColumns = 23;
inline constexpr uint32_t kMemcpyColumns = 24;
inline constexpr uint32_t kMemsetColumns = 25;
inline constexpr uint32_t kSyncColumns = 26;
inline constexpr uint32_t kCudaEventColumns = 27;
inline constexpr uint32_t kNvtxColumns = 28;
inline constexpr uint32_t kHostRangeColumns = 29;
inline constexpr uint32_t kCollectiveColumns = 30;
inline constexpr uint32_t kColumnsOffset = kKernelColumns - kKernel;
// Schema 2.2: GEMM calls, columns (written) and their row form (the field definition).
inline constexpr uint32_t kGemmCallColumns = 31;
inline constexpr uint32_t kGemmCall = 32;
}  // namespace packet_field

// Fields every *Columns message shares (column N is field N of the row message).
namespace column_field {
inline constexpr uint32_t kCount = 40;
inline constexpr uint32_t kStartDeltaNs = 41;
}  // namespace column_field

}  // namespace lumos::schema
