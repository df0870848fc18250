// Design: iteration boundaries from the repeating kernel stream, for jobs without an NVTX
// iteration marker (windowed modes, docs/fleet-capture.md "Iterations without a marker").
// Fed one 64-bit id per kernel launch (the launched function: the CUPTI runtime/driver launch
// callback's func / CUfunction), it finds the period P of the stream (in launches) and reports a
// boundary at the start of each repetition.
//   Candidates: for each launch, the distances back to the last kMaxOccurrences launches of the
//   same id (a direct-mapped table, kTableSlots ids) are candidate periods: a period P shows up
//   as the distance of any id launched at most kMaxOccurrences times an iteration. At most
//   kCandidates are tracked; a new one replaces the one with the shortest run.
//   Runs: per candidate p, how many launches in a row matched the launch p before (a ring of
//   the last max_period ids). p is confirmed when run >= p: the last 2p launches are the same
//   p launches twice (it repeated at least twice); and run >= kMinRun (short periods).
//   Lock: of the confirmed candidates, the one with the longest run (ties: the smaller p): for a
//   periodic stream that is its smallest period (a multiple 2P matched P launches less), and an
//   iteration's period beats a period inside it (a model's identical layers repeat too, but their
//   run ends with each forward pass, while the iteration's goes on). A repetition inside the
//   iteration can still lock while the iteration's own period has not repeated yet (its first
//   two iterations); once a lock moved away from a period, that period must beat the longest run
//   seen before (the layers' run never does), and a period that would take a broken lock must
//   beat the lock's run, or kSwitchPeriods of its own (what noise makes of a neighbouring
//   period, P - 1 or P + 1 for a while, never does). Boundaries: launches at index s + k * P, s the
//   start of the first of the two matching copies (a fixed phase of the repetition: not
//   necessarily the step's first kernel, so K boundaries apart is K whole iterations).
//   Noise (a kernel launched once, the allocator's, a launch lost): the lock's run breaks; its
//   boundaries go on at the old phase while its run rebuilds, then it re-locks with its
//   boundaries at the same kernel as before (one search of the last P launches). A lock whose
//   pattern had no run of min(P, kMinRun) for kStaleFactor periods is stale: no boundaries
//   until a lock holds again (the same period needs no more than run >= P for that). A period
//   that changes: the new one is confirmed and takes the lock.
// Cost: Feed() does one table lookup, kMaxOccurrences candidate checks and kCandidates ring
// compares (and, once per re-lock after noise, a search of the last P ids); no allocation, no
// system call, no lock (the ring and table are allocated at construction).
// Threading: none; one feeder at a time (the caller serializes launches from several threads,
// or drops the ones it cannot take: dropped launches are noise).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace lumos::agent::control {

class PeriodDetector {
 public:
  static constexpr size_t kCandidates = 16;
  static constexpr size_t kMaxOccurrences = 4;
  static constexpr size_t kTableSlots = 4096;
  static constexpr uint64_t kStaleFactor = 3;
  // A short period needs this many matching launches in a row too (a kernel launched twice in a
  // row is not an iteration).
  static constexpr uint64_t kMinRun = 16;
  // Another period takes a (broken) lock when its run is longer than the lock's was, or than
  // this many of its own periods (a period that really changed).
  static constexpr uint64_t kSwitchPeriods = 4;
  static constexpr uint32_t kDefaultMaxPeriod = 1 << 16;

  // max_period: the longest period found, in launches (a ring of that many ids, 8 bytes each).
  explicit PeriodDetector(uint32_t max_period = kDefaultMaxPeriod);
  PeriodDetector(const PeriodDetector&) = delete;
  PeriodDetector& operator=(const PeriodDetector&) = delete;

  // One kernel launch; true when it begins a repetition (an iteration boundary).
  bool Feed(uint64_t id);
  // Forgets everything fed so far (a new window's search); no allocation.
  void Reset();
  // The launches fed next do not follow the last ones (launches nobody fed came between: the
  // dormant time between two windows). Nothing is compared across the gap; the lock is kept
  // but gives no boundaries until its pattern holds again after the gap, and then at the kernel
  // its boundaries were at before. O(kCandidates), no allocation.
  void Resume();

  // The period locked onto, in launches; 0 while none is (or it broke for too long).
  uint32_t period() const { return stale_ ? 0 : period_; }
  // Boundaries reported so far, and launches fed.
  uint64_t boundaries() const { return boundaries_; }
  uint64_t launches() const { return position_; }
  // Boundaries reported since the lock last changed period (0 without a lock).
  uint64_t boundaries_in_lock() const { return period() != 0 ? boundaries_in_lock_ : 0; }
  uint32_t max_period() const { return max_period_; }

 private:
  struct Candidate {
    uint32_t period = 0;  // 0: a free slot.
    uint64_t run = 0;     // Launches in a row equal to the one `period` before.
  };
  struct Occurrences {
    uint64_t id = 0;
    uint64_t positions[kMaxOccurrences] = {};  // Position + 1 of its last launches; 0: none.
  };

  void AddCandidate(uint32_t period);
  uint64_t At(uint64_t position) const { return ring_[position & ring_mask_]; }

  const uint32_t max_period_;
  const uint64_t ring_mask_;
  std::unique_ptr<uint64_t[]> ring_;
  std::unique_ptr<Occurrences[]> table_;
  Candidate candidates_[kCandidates];
  uint64_t position_ = 0;    // Launches fed (the next one's index).
  uint64_t resumed_at_ = 0;  // The first launch after the last gap (Resume): none before counts.
  // The lock: period, the phase its boundaries fall on, when its run last held, and the
  // longest run of a period the lock moved away from (see the design above).
  uint32_t period_ = 0;
  uint64_t phase_ = 0;
  bool stale_ = false;  // The lock broke kStaleFactor periods ago: no boundaries.
  uint64_t lock_held_at_ = 0;
  uint64_t lock_run_ = 0;        // The longest run the lock's period has had since it locked.
  uint64_t lock_run_start_ = 0;  // Where the lock's current run began.
  uint64_t boundary_id_ = 0;     // The id of the last boundary's launch.
  uint64_t longest_left_run_ = 0;
  uint64_t boundaries_ = 0;
  uint64_t boundaries_in_lock_ = 0;
};

}  // namespace lumos::agent::control
