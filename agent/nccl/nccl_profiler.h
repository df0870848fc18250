// Design: the agent as an NCCL profiler plugin (NCCL_PROFILER_PLUGIN; docs/capture-notes.md §5).
// NCCL dlopens the plugin RTLD_NOW|RTLD_LOCAL at communicator init and looks up the data
// symbol ncclProfiler_v5 (NCCL 2.28; 2.27 takes ncclProfiler_v4). Both are exported here and
// share one implementation; the .so that is LD_PRELOADed is the same object NCCL's dlopen
// returns, so there is one agent state whichever routes are combined.
//
// init (per communicator): starts the agent, writes a Communicator record (comm id = NCCL's
// commHash, equal on all ranks; rank; nranks; name) and asks for Coll, P2p and KernelCh events,
// plus GroupApi, CollApi and P2pApi in v5 (they carry the user's stream and the API call's host
// times). With the nccl_plugin channel off (or the agent off) init asks for no events at all.
//
// Events: one record per collective or point-to-point operation, built from
//   CollApi/P2pApi (v5): host start/end of the user's call, stream, calling thread, and the
//     reduce op when a wrapper published the call (t_nccl_call, nccl_channel.h; the API start
//     also marks the call seen, so the wrapper does not record it too);
//   Coll/P2p: seq number (NCCL's, per communicator and function; P2p has none, so ours, per
//     communicator and direction), op, count, datatype, root/peer, algorithm, protocol,
//     channels;
//   KernelCh: GPU start/stop of each channel (GPU globaltimer; see below).
// NCCL stops a Coll/P2p when it is *enqueued*, not when it ran: its KernelCh events come later,
// from NCCL's proxy thread. So an operation's record is written only when all its parts are
// done: its own stop, one KernelCh stop per channel it announced (nChannels), and, when it has a
// CollApi/P2pApi parent that had not stopped yet, that parent's stop. One state word per
// operation (generation, own stop pending, parts outstanding) counts them without locks; every
// part is a CAS that checks the generation, and whoever takes the word to 0 pushes the record
// into its own thread's ring. In v4 (no API events) the host times are the Coll's start
// (enqueue; the wrapper's call start when one runs on this thread) and stop.
// CollApi events that never get a Coll child (one-rank communicators: NCCL 2.28 runs them
// through ncclLaunchOneRank; empty collectives, which NCCL drops) are settled when their
// GroupApi stops (GroupApi handles are tokens, not slots; those API events of the group open on
// a thread are remembered per thread): on a one-rank communicator the API event becomes the
// record (seq numbers ours, per communicator and op, as NCCL gives none), otherwise its slot is
// freed. Other API events wait for their child, whenever NCCL starts it.
// Sweep: the agent's writer pulls from this plugin (a RecordSource) on every drain. It writes
// an operation whose own stop came and that saw no event for kStaleNs (1 s) with what it has
// (NCCL 2.28 p2p can announce more channels than it reports KernelCh events for, NVIDIA/nccl
// #2056), settles API events left without a child for 10 s (their GroupApi stopped on another
// thread), and at the final drain writes every stopped operation still waiting (a job that
// exits without ncclCommDestroy).
// GPU times: the KernelCh timers are the GPU's %globaltimer, ns that the driver sets from the
// host's CLOCK_REALTIME (it can be off by microseconds and drifts between resyncs). We record
// gpu_duration_ns = last channel stop - first channel start (one clock, exact) and
// gpu_start_offset_ns = first channel start converted to CLOCK_MONOTONIC with the
// realtime-monotonic offset read when the record is written, minus the host start. An offset
// outside [-1 s, +10 min] means the timer is not realtime-based; it is then left 0 (unknown).
//
// Handles: events live in a fixed pool of kNcclEventPoolSize slots claimed by CAS (no
// allocation, lock or syscall per event). A handle is (generation << 32 | slot + 1), so a stale
// handle never reaches a reused slot. Pool exhausted: the event gets a null handle (NCCL then
// skips its stop and its KernelCh children) and is counted as loss. A CollApi/P2pApi without a
// slot still marks the wrapper's call seen: NCCL starts its Coll/P2p all the same (it checks
// only the activation mask), and that event, with no API parent, takes the call's host start,
// stream and reduce op from the wrapper (t_nccl_call), so the call is recorded once or counted
// lost, never also by the wrapper. KernelCh events take no slot: their handle is the parent's
// with the top bit set.
//
// Communicators beyond kNcclMaxContexts are counted and get a null context (NCCL then starts
// their events with it, and they are ignored; the wrappers record their calls); the activation
// mask, which NCCL shares between all its communicators, stays what the others asked for.
// finalize writes whatever operations of the communicator are still waiting and frees its
// slots, each only after winning the CAS on its state or link word with the generation it
// read (the sweep may claim, free and hand the same slot to another communicator meanwhile). init
// never lets an exception reach NCCL (one warning; the plugin then records nothing).
//
// Known limits: an API event with more than one Coll/P2p child links only the first (NCCL 2.28
// makes one task per call); a GroupApi stopped on another thread than its API events (non-
// blocking communicators) leaves those to the sweep, and a Coll that starts after its group's
// stop is recorded without the API's host times; a KernelCh event that races the sweep of its
// operation (idle 1 s) can touch the GPU times of the slot's next operation; ProxyOp/ProxyStep/
// NetPlugin events are not asked for; the device id is not known to the plugin (the wrappers'
// Communicator record has it).
// Threading: NCCL calls from its user threads and its proxy thread; everything here is
// lock-free. Exported functions never throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "agent/nccl/nccl_profiler_abi.h"

namespace lumos::agent {

inline constexpr uint32_t kNcclEventPoolSize = 4096;
inline constexpr uint32_t kNcclMaxContexts = 256;

namespace internal {
// Tests only: use the first `capacity` (1..kNcclEventPoolSize) slots, to reach exhaustion.
void SetNcclEventPoolCapacityForTest(uint32_t capacity);
// Tests only: `hook` runs inside finalize between its read of an API slot of the communicator
// and its claim of that slot (null: none), so a test can sequence a racing claim by hand.
void SetNcclFinalizeScanHookForTest(void (*hook)());
// Tests only: `hook` runs when a Coll/P2p links to its API parent, after reading the parent's
// fields and before the CAS that links them (null: none).
void SetNcclLinkHookForTest(void (*hook)());
// Footprint reports (bench/): the static event pool and context table, as they sit in memory.
std::span<const std::byte> NcclEventPoolMemory();
std::span<const std::byte> NcclContextTableMemory();
}  // namespace internal

}  // namespace lumos::agent

extern "C" {
extern lumos::agent::nccl_abi::ProfilerV5 ncclProfiler_v5;
extern lumos::agent::nccl_abi::ProfilerV4 ncclProfiler_v4;
}
