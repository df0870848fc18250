// Design: our own declaration of NCCL's profiler-plugin ABI, versions 5 (NCCL 2.28) and 4
// (NCCL 2.27). NCCL installs no header for it (it lives only in NCCL's source tree,
// ext-profiler/example/nccl/profiler_v{4,5}.h), so the layouts are re-declared here from the
// documented field order (docs/capture-notes.md §5). Field order, types and sizes must match
// NCCL's exactly: the plugin reads these structs straight out of NCCL's memory. Enum-typed
// parameters of NCCL's C API (event state, log level) are passed as int, which is the same ABI.
//   v5: init(ctx, commId, mask, commName, nNodes, nranks, rank, logfn); descriptor type is a
//       uint64_t; adds GroupApi/CollApi/P2pApi/KernelLaunch events and parentGroup fields.
//   v4: init(ctx, mask, commName, commHash, nNodes, nranks, rank, logfn); descriptor type is a
//       uint8_t; no *Api events.
// Handles (eHandle, parentObj) are opaque to NCCL: it stores them and hands them back.
#pragma once

#include <nccl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

namespace lumos::agent::nccl_abi {

// Event type bits (activation mask and descriptor type).
inline constexpr uint64_t kProfileGroup = 1 << 0;
inline constexpr uint64_t kProfileColl = 1 << 1;
inline constexpr uint64_t kProfileP2p = 1 << 2;
inline constexpr uint64_t kProfileProxyOp = 1 << 3;
inline constexpr uint64_t kProfileProxyStep = 1 << 4;
inline constexpr uint64_t kProfileProxyCtrl = 1 << 5;
inline constexpr uint64_t kProfileKernelCh = 1 << 6;
inline constexpr uint64_t kProfileNetPlugin = 1 << 7;
inline constexpr uint64_t kProfileGroupApi = 1 << 8;  // v5 only, as are the next three.
inline constexpr uint64_t kProfileCollApi = 1 << 9;
inline constexpr uint64_t kProfileP2pApi = 1 << 10;
inline constexpr uint64_t kProfileKernelLaunch = 1 << 11;

// ncclProfilerEventState_t value that carries a KernelCh's GPU stop timer (v4 and v5).
inline constexpr int kStateKernelChStop = 22;

// NCCL's logger (ncclDebugLogger_t): level, flags, file, line, printf format.
using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                             const char* format, ...);

struct EventDescrV5 {
  uint64_t type;  // One kProfile* bit.
  void* parent;   // Our handle of the parent event (or null).
  int rank;
  union {
    struct {
      int graph_captured;
      int group_depth;
    } group_api;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graph_captured;
    } coll_api;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graph_captured;
    } p2p_api;
    struct {
      void* stream;
    } kernel_launch;
    struct {
      uint64_t seq_number;
      const char* func;
      const void* send_buffer;
      void* recv_buffer;
      size_t count;
      int root;
      const char* datatype;
      uint8_t channels;
      uint8_t warps;
      const char* algorithm;
      const char* protocol;
      void* parent_group;
    } coll;
    struct {
      const char* func;
      void* buffer;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t channels;
      void* parent_group;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channel_id;
      int peer;
      int steps;
      int chunk_size;
      int is_send;
    } proxy_op;
    struct {
      int step;
    } proxy_step;
    struct {
      uint8_t channel_id;
      uint64_t timer;  // GPU globaltimer at the channel's start.
    } kernel_ch;
    struct {
      int64_t id;
      void* data;
    } net_plugin;
  };
};

struct EventDescrV4 {
  uint8_t type;
  void* parent;
  int rank;
  union {
    struct {
      uint64_t seq_number;
      const char* func;
      const void* send_buffer;
      void* recv_buffer;
      size_t count;
      int root;
      const char* datatype;
      uint8_t channels;
      uint8_t warps;
      const char* algorithm;
      const char* protocol;
    } coll;
    struct {
      const char* func;
      void* buffer;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t channels;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channel_id;
      int peer;
      int steps;
      int chunk_size;
      int is_send;
    } proxy_op;
    struct {
      int step;
    } proxy_step;
    struct {
      uint8_t channel_id;
      uint64_t timer;
    } kernel_ch;
    struct {
      int64_t id;
      void* data;
    } net_plugin;
  };
};

// ncclProfilerEventStateArgs_v4_t and _v5_t (identical).
union EventStateArgs {
  struct {
    size_t transferred_bytes;
  } proxy_step;
  struct {
    int appended_proxy_ops;
  } proxy_ctrl;
  struct {
    void* data;
  } net_plugin;
  struct {
    uint64_t timer;  // GPU globaltimer at the channel's stop.
  } kernel_ch;
};

struct ProfilerV5 {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t comm_id, int* activation_mask,
                       const char* comm_name, int nodes, int nranks, int rank, DebugLogger log);
  ncclResult_t (*start_event)(void* context, void** handle, EventDescrV5* descr);
  ncclResult_t (*stop_event)(void* handle);
  ncclResult_t (*record_event_state)(void* handle, int state, EventStateArgs* args);
  ncclResult_t (*finalize)(void* context);
};

struct ProfilerV4 {
  const char* name;
  ncclResult_t (*init)(void** context, int* activation_mask, const char* comm_name,
                       uint64_t comm_hash, int nodes, int nranks, int rank, DebugLogger log);
  ncclResult_t (*start_event)(void* context, void** handle, EventDescrV4* descr);
  ncclResult_t (*stop_event)(void* handle);
  ncclResult_t (*record_event_state)(void* handle, int state, EventStateArgs* args);
  ncclResult_t (*finalize)(void* context);
};

// Layout checks against the offsets NCCL's headers give on x86-64/aarch64 (LP64).
static_assert(offsetof(EventDescrV5, coll_api) == 24 && offsetof(EventDescrV4, coll) == 24);
static_assert(sizeof(EventDescrV5::coll) == 88 && sizeof(EventDescrV4::coll) == 80);
static_assert(sizeof(EventStateArgs) == 8);

}  // namespace lumos::agent::nccl_abi
