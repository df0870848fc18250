// Design: the per-thread rings of the capture hot path (STYLE.md 5.3, 5.4) and the registry the
// writer thread drains them through.
//
// One arena is mmap'd at start (LUMOS_ARENA_BYTES, MAP_NORESERVE: untouched pages cost nothing)
// and carved into per-thread slices on a thread's first record: a control block (ThreadRing) and
// its ring of LUMOS_RING_BYTES. Registration is lock-free (two CASes) and happens once per
// thread; later pushes find the ring through a thread-local pointer. When the arena cannot hold
// another ring, the thread gets a control block without slots and only counts drops; when not
// even that fits, it shares one ring-less entry (thread id 0) with the other late threads.
// A full ring drops the record and bumps the thread's drop counter; nothing blocks or grows.
//
// Rings are never freed or reused: a thread that exits leaves its ring in the registry, where the
// writer drains what it left. Reuse (and the thread-exit hook it needs) is not worth it yet: the
// arena bounds the cost, and training processes create few threads.
//
// Lifetime: the agent keeps its ThreadRings forever (NoDestructor): callbacks may run on other
// threads until the process is gone. Tests destroy theirs once no thread pushes any more.
// Threading: Push*/CurrentThreadRing from any thread (each on its own ring); DrainAll,
// CollectDrops, ForEachRing from one consumer (writer) thread at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "agent/core/record.h"
#include "agent/core/ring_buffer.h"
#include "base/status.h"

namespace lumos::agent {

// The hot path's entry check (STYLE.md 5.2): one relaxed load. Relaxed is safe because the flag
// publishes no data: ring memory is ordered by the rings' own acquire/release, and it stays valid
// forever. A callback that sees a stale value records one event after a stop or misses one after
// a start, which the capture window's edges tolerate anyway.
class EnabledFlag {
 public:
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void Set(bool enabled) { enabled_.store(enabled, std::memory_order_relaxed); }

 private:
  std::atomic<bool> enabled_{false};
};

// Drops of one ring since the last CollectDrops(), for a LossRecord (LOSS_SOURCE_RING_FULL).
struct RingDropReport {
  uint32_t thread_id = 0;  // 0: the entry shared by threads that got no control block.
  bool has_ring = false;   // False: the arena was exhausted when the thread registered.
  uint64_t count = 0;
  int64_t first_drop_ns = 0;  // start_ns of the first and last record dropped (see the .cc).
  int64_t last_drop_ns = 0;
};

// How a ring asks the consumer to drain it: `wake(context)` from the producing thread (the
// agent's eventfd write: one syscall per half ring, never per record). Set before any ring
// exists; null: rings are drained by the consumer's timer only.
struct DrainWake {
  void (*wake)(void* context) = nullptr;
  void* context = nullptr;
};

class ThreadRing {
 public:
  ThreadRing(uint32_t thread_id, Record* slots, uint64_t capacity, const DrainWake* wake = nullptr)
      : wake_(wake),
        wake_level_(RecordRing::IsValidCapacity(capacity) ? capacity / 2 : UINT64_MAX),
        ring_(slots, capacity),
        thread_id_(thread_id) {}
  ThreadRing(const ThreadRing&) = delete;
  ThreadRing& operator=(const ThreadRing&) = delete;

  // Producer (the owning thread): pushes the event or counts it as dropped. Never blocks.
  // The capacity check keeps the shared ring-less entry from touching its ring's producer
  // state, which would be a race between the threads sharing it.
  // A ring filled to half asks its consumer to drain it (DrainWake): once, until the consumer
  // has drained it, so a fast producer costs the job one wake-up per half ring, not a timer's
  // worth of drops.
  bool Push(const Record& record) {
    if (ring_.capacity() != 0 && ring_.TryPush(record)) {
      if (ring_.FilledTo(wake_level_)) RequestDrain();
      return true;
    }
    CountDrop(record.start_ns);
    return false;
  }
  bool Push(const Record& head, const Record& extension) {
    if (ring_.capacity() != 0 && ring_.TryPush(head, extension)) {
      if (ring_.FilledTo(wake_level_)) RequestDrain();
      return true;
    }
    CountDrop(head.start_ns);
    return false;
  }

  uint32_t thread_id() const { return thread_id_; }
  uint64_t capacity() const { return ring_.capacity(); }
  // Events dropped since registration.
  uint64_t drops() const { return drops_.load(std::memory_order_relaxed); }
  // Consumer side.
  RecordRing& ring() { return ring_; }

 private:
  friend class ThreadRings;
  void CountDrop(int64_t record_ns);
  bool TakeDropReport(RingDropReport* report);
  // The first push past the wake level since the last drain wakes the consumer.
  void RequestDrain() {
    if (wake_ == nullptr || wake_->wake == nullptr ||
        drain_requested_.load(std::memory_order_relaxed) ||
        drain_requested_.exchange(true, std::memory_order_relaxed)) {
      return;
    }
    wake_->wake(wake_->context);
  }

  // Read by the producer on every push: before the ring, on the line of its constants, never on
  // one the consumer writes.
  const DrainWake* const wake_;
  const uint64_t wake_level_;
  RecordRing ring_;
  const uint32_t thread_id_;
  ThreadRing* next_ = nullptr;  // Registry link; set before publication, immutable after.
  // Drop accounting, on its own line so drops never slow down the ring's producer line.
  alignas(64) std::atomic<uint64_t> drops_{0};
  std::atomic<int64_t> first_drop_ns_{0};
  std::atomic<int64_t> last_drop_ns_{0};
  std::atomic<uint64_t> acked_drops_{0};  // Stored only by the consumer (TakeDropReport).
  // Set by the producer when it asked for a drain, cleared by the consumer after draining it
  // (only then written: the line stays shared while nobody asks).
  std::atomic<bool> drain_requested_{false};
};

namespace internal {
// The calling thread's ring in the ThreadRings instance with `generation` (unique per instance,
// so a cached pointer is never used with an instance it does not belong to).
struct ThreadRingCache {
  uint64_t generation = 0;
  ThreadRing* ring = nullptr;
};
// initial-exec: a fixed offset from the thread pointer, no __tls_get_addr call on the hot path.
// When the agent is dlopen'd (CUDA_INJECTION64_PATH) these 16 bytes come from glibc's static TLS
// surplus. Constant-initialised and trivially destructible: no TLS init or exit hooks.
inline thread_local ThreadRingCache t_ring_cache __attribute__((tls_model("initial-exec")));
}  // namespace internal

class ThreadRings {
 public:
  // Maps the arena. ring_bytes: a power of two >= 2 records; arena_bytes >= one control block.
  static StatusOr<std::unique_ptr<ThreadRings>> Create(uint64_t arena_bytes, uint64_t ring_bytes);
  ~ThreadRings();
  ThreadRings(const ThreadRings&) = delete;
  ThreadRings& operator=(const ThreadRings&) = delete;

  // Hot path: the calling thread's ring, registered on first use. Never null.
  ThreadRing* CurrentThreadRing() {
    internal::ThreadRingCache& cache = internal::t_ring_cache;
    if (cache.generation == generation_) return cache.ring;
    return RegisterCurrentThread();
  }
  bool Push(const Record& record) { return CurrentThreadRing()->Push(record); }
  bool Push(const Record& head, const Record& extension) {
    return CurrentThreadRing()->Push(head, extension);
  }

  // Consumer: calls fn(ThreadRing&) for every registered ring, then the shared ring-less entry.
  template <typename Fn>
  void ForEachRing(Fn&& fn) {
    // Acquire: pairs with the release CAS in RegisterCurrentThread, so a ring seen here is fully
    // constructed (and so is every ring reached through its immutable next_ link).
    for (ThreadRing* ring = rings_.load(std::memory_order_acquire); ring != nullptr;
         ring = ring->next_) {
      fn(*ring);
    }
    fn(shared_);
  }
  // Consumer: drains up to max_events_per_ring events from every ring, calling
  // consume(const ThreadRing&, const Record& head, const Record* extension). Returns the events.
  template <typename Consume>
  uint64_t DrainAll(Consume&& consume, size_t max_events_per_ring) {
    uint64_t events = 0;
    ForEachRing([&](ThreadRing& ring) {
      events += ring.ring().Drain(
          [&](const Record& head, const Record* extension) { consume(ring, head, extension); },
          max_events_per_ring);
      // After the drain: a push past the wake level from now on asks again.
      if (ring.drain_requested_.load(std::memory_order_relaxed)) {
        ring.drain_requested_.store(false, std::memory_order_relaxed);
      }
    });
    return events;
  }
  // Before any thread pushes: how a ring filled to half wakes the consumer.
  void SetDrainWake(DrainWake wake) { drain_wake_ = wake; }
  // Consumer: the rings with new drops since the previous call.
  std::vector<RingDropReport> CollectDrops();

  uint64_t arena_bytes() const { return arena_bytes_; }
  uint64_t ring_bytes() const { return ring_bytes_; }
  uint64_t ring_capacity() const { return ring_bytes_ / sizeof(Record); }
  // Arena bytes handed out so far (control blocks and rings).
  uint64_t used_bytes() const { return used_.load(std::memory_order_relaxed); }
  // Threads that registered: with a ring, with a control block only, sharing the last entry.
  uint64_t threads_with_ring() const { return with_ring_.load(std::memory_order_relaxed); }
  uint64_t threads_without_ring() const { return without_ring_.load(std::memory_order_relaxed); }
  uint64_t threads_shared() const { return shared_threads_.load(std::memory_order_relaxed); }
  // Arena bytes per thread: a control block (rounded to a page, so a ring starts page-aligned)
  // plus its ring.
  static constexpr uint64_t kControlBytes = 4096;
  static_assert(sizeof(ThreadRing) <= kControlBytes);

 private:
  ThreadRings(uint8_t* arena, uint64_t arena_bytes, uint64_t ring_bytes);
  ThreadRing* RegisterCurrentThread();

  uint8_t* const arena_;
  const uint64_t arena_bytes_;
  const uint64_t ring_bytes_;
  const uint64_t generation_;
  std::atomic<uint64_t> used_{0};            // Arena bytes handed out (CAS).
  std::atomic<ThreadRing*> rings_{nullptr};  // Registry: newest first (CAS push).
  std::atomic<uint64_t> with_ring_{0};       // Statistics only (relaxed).
  std::atomic<uint64_t> without_ring_{0};
  std::atomic<uint64_t> shared_threads_{0};
  DrainWake drain_wake_;              // Read by every ring's producer; set before any.
  ThreadRing shared_{0, nullptr, 0};  // Threads beyond the arena; drops via atomic RMW only.
};

}  // namespace lumos::agent
