// Design: the fixed-size record that per-thread rings carry from capture callbacks to the writer
// thread (STYLE.md 5.3). A record is one cache line (64 bytes, 64-aligned): a push writes one
// line that no other thread writes, and a ring is a power-of-two array of records.
//
// Layout: a 24-byte header (kind, flags, device, thread, start/end) and a 40-byte payload, a
// union of per-kind structs. Fields that do not fit go into an optional second record, the
// *extension* (kind kExtension), which RecordRing::TryPush(head, extension) publishes atomically
// with its head: rare or producer-specific fields (graph ids, cluster dims, external ids, NVTX
// start/end range ids) and the second half of a collective. A missing extension reads as "not
// known" (zeros; for collectives: no root/peer, bytes = count * element size).
//
// Names: kernel, API and domain names are u32 ids into a StringTable, interned off the hot path
// (kernel names on the writer thread, API names per callback id at start, NVTX registered strings
// at registration). NVTX messages arrive on the hot path as arbitrary C strings, and interning
// there would allocate and lock, so they are copied inline. 24 bytes is what the payload has left
// after the NVTX attributes (domain, color, category, depth, kind), and it holds the common range
// names ("forward", "backward", "optimizer", "decoder.layers.23", "self_attention"). Longer text
// is cut at 24 bytes on a UTF-8 character boundary and flagged kRecordFlagNameTruncated (the
// writer appends "..."); long names that must stay whole should be registered strings.
//
// Widths: correlation ids are 32-bit (CUPTI's are); stream, event, graph and comm handles 64-bit;
// device ids 16-bit; enums one byte each (every schema enum has < 256 values).
// Times: integer ns in the producer's clock (CUPTI or monotonic); the writer's clock snapshots
// relate the domains. end_ns == start_ns for instants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace lumos::agent {

enum class RecordKind : uint8_t {
  kInvalid = 0,  // Zero-filled memory is never a valid record.
  kApiCall = 1,
  kKernel = 2,
  kMemcpy = 3,
  kMemset = 4,
  kSync = 5,
  kCudaEventRecord = 6,
  kNvtxRange = 7,
  kCollective = 8,
  kExtension = 9,      // The second record of an event; never a head.
  kCommunicator = 10,  // Rare: one per NCCL communicator this rank joins.
  kGemmCall = 11,      // A cuBLAS / cuBLASLt GEMM call (agent/cublas).
};
inline constexpr int kRecordKindCount = 12;

// Header flag bits.
inline constexpr uint8_t kRecordFlagExtended = 1 << 0;         // Set by the ring: extension next.
inline constexpr uint8_t kRecordFlagNameIsId = 1 << 1;         // NVTX: name.string_id is used.
inline constexpr uint8_t kRecordFlagNameTruncated = 1 << 2;    // NVTX: inline text was cut.
inline constexpr uint8_t kRecordFlagHasHostTime = 1 << 3;      // Collective: start/end are host's.
inline constexpr uint8_t kRecordFlagDeviceTimestamp = 1 << 4;  // CUDA event: start is the GPU's.

inline constexpr size_t kInlineNameBytes = 24;

struct ApiCallPayload {
  uint64_t stream_id;  // Launch / record / wait / sync / async copy stream.
  uint64_t event_id;   // Record / wait / event-sync: the CUDA event.
  uint64_t graph_id;   // Graph launches: the graph exec.
  uint32_t correlation_id;
  uint32_t name_id;  // StringTable id of "cudaLaunchKernel"; 0 = unknown.
  int32_t return_code;
  uint16_t cbid;     // CUPTI callback ids are < 2^16.
  uint8_t api_kind;  // schema::ApiKind
  uint8_t domain;    // schema::ApiDomain
};
struct ApiCallExtension {
  uint64_t external_id;
};

struct KernelPayload {
  uint64_t stream_id;
  uint32_t correlation_id;
  uint32_t name_id;
  uint32_t grid_x;
  uint16_t grid_y, grid_z;  // CUDA caps gridDim.y and .z at 65535.
  uint16_t block_x, block_y, block_z;
  uint16_t registers_per_thread;
  uint32_t static_shared_memory_bytes;
  uint32_t dynamic_shared_memory_bytes;
};
struct KernelExtension {
  uint64_t graph_id;
  uint64_t graph_node_id;
  uint64_t external_id;
  uint32_t context_id;
  uint16_t cluster_x, cluster_y, cluster_z;
  uint8_t launch_type;  // schema::LaunchType
  uint8_t reserved;
};

struct MemcpyPayload {
  uint64_t stream_id;
  uint64_t bytes;
  uint64_t graph_node_id;
  uint32_t correlation_id;
  uint32_t context_id;
  uint16_t src_device_id, dst_device_id;
  uint8_t copy_kind;  // schema::CopyKind
  uint8_t src_kind;   // schema::MemoryKind
  uint8_t dst_kind;   // schema::MemoryKind
  uint8_t reserved;
};
struct MemsetPayload {
  uint64_t stream_id;
  uint64_t bytes;
  uint64_t graph_node_id;
  uint32_t correlation_id;
  uint32_t context_id;
  uint32_t value;
  uint8_t memory_kind;  // schema::MemoryKind
  uint8_t reserved[3];
};
// Memcpy, memset and CUDA-event-record extensions.
struct ExternalIdExtension {
  uint64_t external_id;
};

struct SyncPayload {
  uint64_t stream_id;
  uint64_t event_id;
  uint64_t cuda_event_sync_id;
  uint32_t correlation_id;
  uint32_t context_id;
  uint32_t event_record_correlation_id;
  uint8_t sync_type;  // schema::SyncType
  uint8_t reserved[3];
};
struct SyncExtension {
  uint64_t wait_on_stream_id;
  uint64_t external_id;
};

struct CudaEventRecordPayload {
  uint64_t event_id;
  uint64_t stream_id;
  uint64_t cuda_event_sync_id;
  uint32_t correlation_id;
  uint32_t context_id;
};

struct NvtxPayload {
  union Name {
    char text[kInlineNameBytes];  // Not NUL-terminated; name_length bytes are used.
    uint32_t string_id;           // With kRecordFlagNameIsId.
  } name;
  uint32_t domain_id;  // StringTable id of the domain's name; 0 = the default domain.
  uint32_t color_argb;
  uint32_t category;
  uint16_t depth;       // PUSH_POP nesting depth, 0 = outermost.
  uint8_t nvtx_kind;    // schema::NvtxKind
  uint8_t name_length;  // Inline text bytes, <= kInlineNameBytes.
};
struct NvtxExtension {
  uint64_t range_id;       // START_END.
  uint32_t end_thread_id;  // START_END: the thread that ended the range, when different.
  uint32_t reserved;
};

struct CollectivePayload {
  uint64_t comm_id;
  uint64_t seq_number;
  uint64_t count;
  uint64_t stream_id;
  uint8_t op;         // schema::CollectiveOp
  uint8_t data_type;  // schema::DataType
  uint8_t reduce_op;  // schema::ReduceOp
  uint8_t algorithm;  // schema::NcclAlgorithm
  uint8_t protocol;   // schema::NcclProtocol
  uint8_t reserved;
  uint16_t channels;
};
struct CollectiveExtension {
  uint64_t bytes;
  int64_t gpu_start_offset_ns;
  uint64_t gpu_duration_ns;
  int32_t root_rank;  // -1: not a rooted op.
  int32_t peer_rank;  // -1: not point-to-point.
  uint32_t correlation_id;
  uint32_t comm_size;
};

// An NCCL communicator (creation time in start_ns = end_ns, CUDA device in the header's device_id).
// Rare (once per communicator), so the name is interned at creation.
struct CommunicatorPayload {
  uint64_t comm_id;         // Equal on all ranks of the communicator.
  uint64_t parent_comm_id;  // ncclCommSplit: the parent; 0 otherwise.
  int32_t rank;             // Rank within the communicator.
  uint32_t comm_size;
  uint32_t name_id;  // StringTable id of the communicator's name; 0 = none.
  uint32_t reserved;
};

// A cuBLAS / cuBLASLt GEMM call (host start/end in the header, the calling thread's ring).
// Dimensions that do not fit 32 bits (the _64 entry points, cuBLASLt's u64 layouts) go into a
// GemmExtension as well; the head then holds UINT32_MAX for them.
struct GemmPayload {
  uint64_t stream_id;
  uint32_t m, n, k;
  uint32_t batch_count;
  int32_t return_code;  // cublasStatus_t.
  uint8_t api;          // schema::GemmApi
  uint8_t transa;       // schema::GemmTranspose
  uint8_t transb;
  uint8_t a_type;  // schema::DataType
  uint8_t b_type;
  uint8_t c_type;
  uint8_t d_type;
  uint8_t compute_type;  // schema::GemmComputeType
  uint8_t math_mode;     // schema::GemmMathMode
  uint8_t reserved[3];
};
struct GemmExtension {
  uint64_t m, n, k, batch_count;
};

union RecordPayload {
  uint8_t raw[40];  // First, so `Record record{}` zeroes all 40 bytes.
  ApiCallPayload api_call;
  ApiCallExtension api_call_ext;
  KernelPayload kernel;
  KernelExtension kernel_ext;
  MemcpyPayload memcpy;
  MemsetPayload memset;
  ExternalIdExtension external_ext;
  SyncPayload sync;
  SyncExtension sync_ext;
  CudaEventRecordPayload cuda_event;
  NvtxPayload nvtx;
  NvtxExtension nvtx_ext;
  CollectivePayload collective;
  CollectiveExtension collective_ext;
  CommunicatorPayload communicator;
  GemmPayload gemm;
  GemmExtension gemm_ext;
};

struct alignas(64) Record {
  RecordKind kind;
  uint8_t flags;       // kRecordFlag* bits.
  uint16_t device_id;  // GPU-side kinds and collectives: the CUDA device ordinal.
  uint32_t thread_id;  // Host-side kinds: the OS thread id (gettid); 0 for GPU activity.
  int64_t start_ns;
  int64_t end_ns;
  RecordPayload payload;
};

static_assert(sizeof(RecordPayload) == 40, "payload structs must not outgrow 40 bytes");
static_assert(sizeof(Record) == 64, "a record is one cache line");
static_assert(alignof(Record) == 64, "records must not straddle cache lines");
static_assert(offsetof(Record, payload) == 24, "the header has no padding");
static_assert(std::is_trivially_copyable_v<Record> && std::is_standard_layout_v<Record>,
              "records are copied as bytes between threads");

namespace internal {
// SetNvtxInlineName's rare path, for text longer than kInlineNameBytes: keeps the longest prefix
// of at most kInlineNameBytes that ends on a UTF-8 character boundary and flags it truncated.
// Out of line on purpose (record.cc): GCC 12 at -O3 does not fold strnlen() over a caller's
// string literal before its -Warray-bounds check, so with this path inlined it threads a "literal
// longer than 24 bytes" path and reports a memcpy past the literal that can never run. Out of
// line, no caller's literal reaches it; the common short names keep an inline copy.
void SetCutNvtxInlineName(Record* record, const char* text);
}  // namespace internal

// Hot path: copies a C string into an NVTX record inline, reading at most kInlineNameBytes + 1
// bytes of it. Text longer than kInlineNameBytes is cut on a UTF-8 character boundary and flagged.
inline void SetNvtxInlineName(Record* record, const char* text) {
  record->flags &= static_cast<uint8_t>(~(kRecordFlagNameIsId | kRecordFlagNameTruncated));
  const size_t length = text == nullptr ? 0 : strnlen(text, kInlineNameBytes + 1);
  if (length > kInlineNameBytes) {
    internal::SetCutNvtxInlineName(record, text);
    return;
  }
  NvtxPayload& nvtx = record->payload.nvtx;
  std::memcpy(nvtx.name.text, text == nullptr ? "" : text, length);
  nvtx.name_length = static_cast<uint8_t>(length);
}

// An NVTX name that is a StringTable id (registered strings, long names interned elsewhere).
inline void SetNvtxNameId(Record* record, uint32_t string_id) {
  record->flags &= static_cast<uint8_t>(~kRecordFlagNameTruncated);
  record->flags |= kRecordFlagNameIsId;
  record->payload.nvtx.name.string_id = string_id;
  record->payload.nvtx.name_length = 0;
}

// The inline text of an NVTX record (empty when the name is a string id).
inline std::string_view NvtxInlineName(const Record& record) {
  if (record.flags & kRecordFlagNameIsId) return {};
  const NvtxPayload& nvtx = record.payload.nvtx;
  size_t length = nvtx.name_length <= kInlineNameBytes ? nvtx.name_length : kInlineNameBytes;
  return std::string_view(nvtx.name.text, length);
}

// "api_call", "kernel", ... ("invalid" for unknown values).
const char* RecordKindName(RecordKind kind);

}  // namespace lumos::agent
