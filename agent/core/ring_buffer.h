// Design: a single-producer single-consumer ring of Records over caller-provided memory (a slice
// of the agent's arena). The producer is one capture thread, the consumer the writer thread.
// TryPush never blocks, allocates or makes a syscall: a full ring returns false and the caller
// counts the drop (STYLE.md 5.4). An event of two records (head + extension) is pushed whole or
// not at all and drained whole.
//
// Indices are free-running 64-bit counters (they never wrap in practice: 2^64 records); a slot is
// index & (capacity - 1). head_ (next slot to write) is stored only by the producer, tail_ (next
// slot to read) only by the consumer; each sits on its own cache line, next to the state its
// owner touches, so the two threads share a line only when the producer finds its cached tail
// stale (the ring looks full) and when the consumer reads head_ once per Drain.
// Threading: exactly one producer thread and one consumer thread at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/core/record.h"

namespace lumos::agent {

class RecordRing {
 public:
  // A ring without slots: every push fails (threads the arena cannot serve).
  RecordRing() = default;
  // `slots`: `capacity` records, 64-byte aligned, owned by the caller and outliving the ring.
  // `capacity` must be a power of two >= 2; anything else gives a ring without slots.
  RecordRing(Record* slots, uint64_t capacity)
      : slots_(capacity == 0 ? nullptr : slots),
        capacity_(IsValidCapacity(capacity) ? capacity : 0),
        mask_(capacity_ == 0 ? 0 : capacity_ - 1) {}
  RecordRing(const RecordRing&) = delete;
  RecordRing& operator=(const RecordRing&) = delete;

  static constexpr bool IsValidCapacity(uint64_t capacity) {
    return capacity == 0 || (capacity >= 2 && (capacity & (capacity - 1)) == 0);
  }

  // Producer. Copies `record` into the ring (its kRecordFlagExtended bit cleared: a single record
  // is a whole event). False when full.
  bool TryPush(const Record& record) {
    // Relaxed: head_ is stored only by this thread, so it reads its own latest value.
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (!HasRoom(head, 1)) return false;
    Record& slot = slots_[head & mask_];
    slot = record;
    slot.flags &= static_cast<uint8_t>(~kRecordFlagExtended);
    // Release: the slot's bytes are visible to a consumer whose acquire load sees head + 1.
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Producer. Pushes a two-record event: `head` (flagged kRecordFlagExtended) and `extension`
  // (kind set to kExtension), both or neither. False when fewer than two slots are free.
  bool TryPush(const Record& head_record, const Record& extension) {
    const uint64_t head = head_.load(std::memory_order_relaxed);  // As above.
    if (!HasRoom(head, 2)) return false;
    Record& first = slots_[head & mask_];
    first = head_record;
    first.flags |= kRecordFlagExtended;
    Record& second = slots_[(head + 1) & mask_];
    second = extension;
    second.kind = RecordKind::kExtension;
    // Release: one store publishes both slots, so the consumer never sees half an event.
    head_.store(head + 2, std::memory_order_release);
    return true;
  }

  // Consumer. Calls consume(const Record& head, const Record* extension_or_null) for up to
  // `max_events` events in push order and frees their slots. The references are valid only during
  // the call. Returns the number of events consumed.
  template <typename Consume>
  size_t Drain(Consume&& consume, size_t max_events) {
    // Relaxed: tail_ is stored only by this (the consumer) thread.
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    // Acquire: pairs with the producer's release store, so every slot below `head` is fully
    // written before we read it.
    const uint64_t head = head_.load(std::memory_order_acquire);
    size_t events = 0;
    while (tail != head && events < max_events) {
      const Record& first = slots_[tail & mask_];
      const Record* extension = nullptr;
      uint64_t used = 1;
      // The flag is only set by TryPush(head, extension), which published both slots at once;
      // the distance check keeps a corrupted flag from reading an unpublished slot.
      if ((first.flags & kRecordFlagExtended) != 0 && head - tail >= 2) {
        extension = &slots_[(tail + 1) & mask_];
        used = 2;
      }
      consume(first, extension);
      tail += used;
      // Release: our reads of these slots happen before the producer's acquire load that sees
      // the new tail and lets it overwrite them. Per event, so space frees as early as possible.
      tail_.store(tail, std::memory_order_release);
      ++events;
    }
    return events;
  }

  uint64_t capacity() const { return capacity_; }
  // Producer: holds the ring at least `level` records? Re-reads tail_ only when the cached copy
  // says so (a stale copy overstates the fill), so below the level it costs one compare.
  bool FilledTo(uint64_t level) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - cached_tail_ < level) return false;
    cached_tail_ = tail_.load(std::memory_order_acquire);
    return head - cached_tail_ >= level;
  }
  // Records waiting to be drained; exact only when neither side is running.
  uint64_t SizeApprox() const {
    // Acquire on both: a statistic, but never a negative difference from a torn view.
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    return head_.load(std::memory_order_acquire) - tail;
  }

 private:
  // Producer: room for `count` more records? Re-reads tail_ only when the cached copy says no.
  bool HasRoom(uint64_t head, uint64_t count) {
    if (head - cached_tail_ + count <= capacity_) return true;
    // Acquire: pairs with the consumer's release store of tail_, so its reads of the slots we
    // are about to overwrite have completed.
    cached_tail_ = tail_.load(std::memory_order_acquire);
    return head - cached_tail_ + count <= capacity_;
  }

  Record* const slots_ = nullptr;
  const uint64_t capacity_ = 0;
  const uint64_t mask_ = 0;
  // Producer's cache line.
  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;  // Producer-only copy of tail_; stale means "less room", never more.
  // Consumer's cache line.
  alignas(64) std::atomic<uint64_t> tail_{0};
};

}  // namespace lumos::agent
