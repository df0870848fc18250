// Design: the fixed pool of CUPTI activity buffers (STYLE.md 5.5), mapped once at start:
// LUMOS_CUPTI_BUFFERS buffers of LUMOS_CUPTI_BUFFER_BYTES each, in one anonymous mapping
// (MAP_NORESERVE: a buffer costs memory only once CUPTI has written into it).
//   Acquire (CUPTI's bufferRequested, possibly on an application thread inside a CUDA call):
//     takes a free buffer from a bitmap with one CAS; never allocates, locks or blocks. With
//     none free it returns null, which makes CUPTI drop records (it counts them, we read that
//     count as CUPTI_DROPPED), and counts a refused request (BUFFER_POOL_EMPTY).
//   Complete (bufferCompleted, on CUPTI's thread or in cuptiActivityFlushAll's caller): marks the
//     buffer completed with its valid byte count and a completion sequence number.
//   DrainCompleted (the writer thread): hands every completed buffer over in completion order
//     and returns it to the free bitmap.
// Buffers stay with the writer until its next pass (LUMOS_FLUSH_INTERVAL_MS), so the pool must
// hold what the GPU produces in that time; the defaults (16 x 8 MiB, ~1.4 M kernel records) do.
// Threading: Acquire/Complete from any thread; DrainCompleted from one consumer at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"

namespace lumos::agent::cupti {

class ActivityBufferPool {
 public:
  // buffer_bytes: a multiple of 8 (CUPTI's record alignment), count >= 1.
  static StatusOr<std::unique_ptr<ActivityBufferPool>> Create(uint64_t buffer_bytes,
                                                              uint32_t count);
  ~ActivityBufferPool();
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;

  // A free buffer of buffer_bytes(), or null (the request is counted as refused).
  uint8_t* Acquire();
  // Queues a buffer for DrainCompleted. False (and nothing queued) for a pointer not from
  // Acquire, or one not handed out.
  bool Complete(uint8_t* buffer, size_t valid_bytes);
  // Calls fn(const uint8_t* buffer, size_t valid_bytes) for each completed buffer, oldest
  // completion first, then frees it. Returns how many.
  template <typename Fn>
  size_t DrainCompleted(Fn&& fn) {
    std::vector<uint32_t>& ready = CollectCompleted();
    for (uint32_t index : ready) {
      fn(BufferAt(index), static_cast<size_t>(slots_[index].valid_bytes));
      Release(index);
    }
    return ready.size();
  }
  // Requests refused since the last call.
  uint64_t TakeRefusedRequests() { return refused_.exchange(0, std::memory_order_relaxed); }

  uint64_t buffer_bytes() const { return buffer_bytes_; }
  uint32_t count() const { return count_; }
  uint32_t free_buffers() const;

 private:
  enum State : uint32_t { kFree = 0, kWithCupti = 1, kCompleted = 2 };
  struct Slot {
    std::atomic<uint32_t> state{kFree};
    uint64_t valid_bytes = 0;    // Written before state = kCompleted (release).
    uint64_t completed_seq = 0;  // Likewise.
  };
  ActivityBufferPool(uint8_t* memory, uint64_t buffer_bytes, uint32_t count);
  uint8_t* BufferAt(uint32_t index) const { return memory_ + uint64_t{index} * buffer_bytes_; }
  std::vector<uint32_t>& CollectCompleted();
  void Release(uint32_t index);

  uint8_t* const memory_;
  const uint64_t buffer_bytes_;
  const uint32_t count_;
  std::unique_ptr<Slot[]> slots_;
  // Bit i set: buffer i is free. Words are claimed by CAS (no ABA: a bit means one buffer).
  std::unique_ptr<std::atomic<uint64_t>[]> free_bits_;
  const uint32_t words_;
  std::atomic<uint64_t> next_seq_{0};
  std::atomic<uint64_t> refused_{0};  // Relaxed: a counter, it orders nothing.
  std::vector<uint32_t> ready_;       // Consumer scratch, reused (capacity = count).
};

}  // namespace lumos::agent::cupti
