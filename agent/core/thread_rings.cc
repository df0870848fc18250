#include "agent/core/thread_rings.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace lumos::agent {
namespace {

// Generation 0 means "no ring cached" in a fresh thread's ThreadRingCache.
std::atomic<uint64_t> g_next_generation{1};

uint32_t CurrentThreadId() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

}  // namespace

// Drop accounting. The producer counts; the consumer reports the count since its last report
// together with the start times of the first and last record dropped in between.
// - The producer resets first_drop_ns_ when its count equals the last acknowledged count, i.e.
//   on the first drop after a report. The acknowledgement it reads may be stale; then the reset
//   is skipped and the report's first time is older than needed: a wider interval, never a
//   narrower one.
// - Release on the count's increment / acquire on the consumer's load: a consumer that sees a
//   count also sees the times stored before it.
// - The shared ring-less entry has several producers: the count is an atomic RMW, so it stays
//   exact; the times are whichever thread stored last (approximate, and said so in the report).
void ThreadRing::CountDrop(int64_t record_ns) {
  // Relaxed: drops_ only changes through this thread (or RMWs on the shared entry), and the
  // acknowledged count is a hint (above).
  if (drops_.load(std::memory_order_relaxed) == acked_drops_.load(std::memory_order_relaxed)) {
    first_drop_ns_.store(record_ns, std::memory_order_relaxed);
  }
  last_drop_ns_.store(record_ns, std::memory_order_relaxed);
  drops_.fetch_add(1, std::memory_order_release);
}

bool ThreadRing::TakeDropReport(RingDropReport* report) {
  const uint64_t total = drops_.load(std::memory_order_acquire);
  // Relaxed: acked_drops_ is stored only by this (the consumer) thread.
  const uint64_t acked = acked_drops_.load(std::memory_order_relaxed);
  if (total == acked) return false;
  report->thread_id = thread_id_;
  report->has_ring = ring_.capacity() != 0;
  report->count = total - acked;
  report->first_drop_ns = first_drop_ns_.load(std::memory_order_relaxed);
  report->last_drop_ns = last_drop_ns_.load(std::memory_order_relaxed);
  if (report->last_drop_ns < report->first_drop_ns) report->last_drop_ns = report->first_drop_ns;
  // Relaxed: the producer only uses it as a hint for resetting first_drop_ns_.
  acked_drops_.store(total, std::memory_order_relaxed);
  return true;
}

StatusOr<std::unique_ptr<ThreadRings>> ThreadRings::Create(uint64_t arena_bytes,
                                                           uint64_t ring_bytes) {
  if (ring_bytes % sizeof(Record) != 0 ||
      !RecordRing::IsValidCapacity(ring_bytes / sizeof(Record)) || ring_bytes == 0) {
    return ErrorStatus("ring size %llu bytes is not a power of two of at least %zu bytes",
                       static_cast<unsigned long long>(ring_bytes), 2 * sizeof(Record));
  }
  if (arena_bytes < kControlBytes) {
    return ErrorStatus("arena of %llu bytes cannot hold a single thread's control block",
                       static_cast<unsigned long long>(arena_bytes));
  }
  // MAP_NORESERVE: a large arena reserves address space only; pages are committed when a
  // thread registers and pre-faults its ring.
  void* arena = mmap(nullptr, arena_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (arena == MAP_FAILED) {
    return ErrorStatus("mmap of the %llu-byte ring arena failed: %s",
                       static_cast<unsigned long long>(arena_bytes), std::strerror(errno));
  }
  return std::unique_ptr<ThreadRings>(
      new ThreadRings(static_cast<uint8_t*>(arena), arena_bytes, ring_bytes));
}

ThreadRings::ThreadRings(uint8_t* arena, uint64_t arena_bytes, uint64_t ring_bytes)
    : arena_(arena),
      arena_bytes_(arena_bytes),
      ring_bytes_(ring_bytes),
      generation_(g_next_generation.fetch_add(1, std::memory_order_relaxed)) {}

ThreadRings::~ThreadRings() {
  // Control blocks are trivially destructible apart from atomics; unmapping ends them.
  munmap(arena_, arena_bytes_);
}

ThreadRing* ThreadRings::RegisterCurrentThread() {
  const uint64_t full = kControlBytes + ring_bytes_;
  // Relaxed CAS: it only hands out disjoint byte ranges; the ring built in a range is published
  // by the release CAS on rings_ below.
  uint64_t offset = used_.load(std::memory_order_relaxed);
  uint64_t take = 0;
  do {
    const uint64_t left = arena_bytes_ - offset;
    take = left >= full ? full : (left >= kControlBytes ? kControlBytes : 0);
    if (take == 0) break;
  } while (!used_.compare_exchange_weak(offset, offset + take, std::memory_order_relaxed));

  ThreadRing* ring = &shared_;
  if (take == 0) {
    shared_threads_.fetch_add(1, std::memory_order_relaxed);
  } else {
    uint8_t* base = arena_ + offset;
    Record* slots = nullptr;
    uint64_t capacity = 0;
    if (take == full) {
      slots = reinterpret_cast<Record*>(base + kControlBytes);
      capacity = ring_capacity();
      // Pre-fault the ring now (once per thread) so the hot path never takes a page fault.
      const long page = sysconf(_SC_PAGESIZE);
      const uint64_t step = page > 0 ? static_cast<uint64_t>(page) : 4096;
      for (uint64_t i = 0; i < ring_bytes_; i += step) {
        reinterpret_cast<volatile uint8_t*>(slots)[i] = 0;
      }
      with_ring_.fetch_add(1, std::memory_order_relaxed);
    } else {
      without_ring_.fetch_add(1, std::memory_order_relaxed);
    }
    ring = new (base) ThreadRing(CurrentThreadId(), slots, capacity, &drain_wake_);
    ThreadRing* head = rings_.load(std::memory_order_relaxed);
    do {
      ring->next_ = head;
      // Release: a consumer that loads this pointer (acquire) sees the constructed ring.
    } while (!rings_.compare_exchange_weak(head, ring, std::memory_order_release,
                                           std::memory_order_relaxed));
  }
  internal::t_ring_cache = {generation_, ring};
  return ring;
}

std::vector<RingDropReport> ThreadRings::CollectDrops() {
  std::vector<RingDropReport> reports;
  ForEachRing([&](ThreadRing& ring) {
    RingDropReport report;
    if (ring.TakeDropReport(&report)) reports.push_back(report);
  });
  return reports;
}

}  // namespace lumos::agent
