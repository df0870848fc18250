#include "agent/control/period_detector.h"

#include <algorithm>
#include <bit>

namespace lumos::agent::control {
namespace {

size_t Slot(uint64_t id) {
  // Fibonacci hashing: function pointers share their low bits (alignment) and high bits.
  return static_cast<size_t>((id * 0x9e3779b97f4a7c15ull) >> 52) &
         (PeriodDetector::kTableSlots - 1);
}
static_assert(PeriodDetector::kTableSlots == 4096, "Slot() takes the hash's top 12 bits");

}  // namespace

PeriodDetector::PeriodDetector(uint32_t max_period)
    : max_period_(std::max<uint32_t>(1, max_period)),
      ring_mask_(std::bit_ceil(uint64_t{max_period_} + 1) - 1),
      ring_(new uint64_t[ring_mask_ + 1]()),
      table_(new Occurrences[kTableSlots]()) {}

void PeriodDetector::Reset() {
  std::fill(table_.get(), table_.get() + kTableSlots, Occurrences{});
  std::fill(std::begin(candidates_), std::end(candidates_), Candidate{});
  position_ = 0;
  resumed_at_ = 0;
  period_ = 0;
  phase_ = 0;
  stale_ = false;
  lock_held_at_ = 0;
  lock_run_ = 0;
  lock_run_start_ = 0;
  boundary_id_ = 0;
  longest_left_run_ = 0;
  boundaries_ = 0;
  boundaries_in_lock_ = 0;
}

void PeriodDetector::AddCandidate(uint32_t period) {
  Candidate* replace = nullptr;
  for (Candidate& c : candidates_) {
    if (c.period == period) return;
    if (c.period == 0) {
      if (replace == nullptr || replace->period != 0) replace = &c;
      continue;
    }
    // The lock's candidate stays; of the others, the shortest run goes.
    if (c.period == period_) continue;
    if (replace == nullptr || (replace->period != 0 && c.run < replace->run)) replace = &c;
  }
  if (replace != nullptr) *replace = Candidate{period, 0};
}

void PeriodDetector::Resume() {
  resumed_at_ = position_;
  for (Candidate& c : candidates_) c.run = 0;
  // No boundaries until the lock holds again; boundaries_in_lock_ and boundary_id_ stay, so the
  // re-lock puts them at the same kernel as before (Feed: the same period after a break).
  if (period_ != 0) stale_ = true;
}

bool PeriodDetector::Feed(uint64_t id) {
  const uint64_t i = position_++;
  ring_[i & ring_mask_] = id;

  // New candidates: the distances back to this id's last launches.
  Occurrences& seen = table_[Slot(id)];
  if (seen.id != id) seen = Occurrences{id, {}};
  for (uint64_t launch : seen.positions) {
    if (launch == 0 || launch <= resumed_at_) break;  // None, or before the gap (newest first).
    const uint64_t distance = i - (launch - 1);
    if (distance <= max_period_) AddCandidate(static_cast<uint32_t>(distance));
  }
  for (size_t k = kMaxOccurrences - 1; k > 0; --k) seen.positions[k] = seen.positions[k - 1];
  seen.positions[0] = i + 1;

  // Runs, and the confirmed candidate with the longest one.
  const Candidate* best = nullptr;
  for (Candidate& c : candidates_) {
    if (c.period == 0) continue;
    c.run = c.period <= i - resumed_at_ && At(i - c.period) == id ? c.run + 1 : 0;
    // The lock's pattern still holds (a run rebuilding after noise): not stale.
    if (c.period == period_ && c.run >= std::min<uint64_t>(period_, kMinRun)) lock_held_at_ = i;
    // A period the lock moved away from must beat the longest run seen then, and one that would
    // take the lock from another the run that one had (at most kSwitchPeriods of its own).
    const bool eligible =
        c.run >= std::max<uint64_t>(c.period, kMinRun) &&
        (c.period == period_ ||
         (c.run > longest_left_run_ &&
          (period_ == 0 || c.run > std::min<uint64_t>(lock_run_, kSwitchPeriods * c.period))));
    if (eligible &&
        (best == nullptr || c.run > best->run || (c.run == best->run && c.period < best->period))) {
      best = &c;
    }
  }

  if (best != nullptr) {
    // The two matching copies began at i + 1 - run - period (>= 0: run counts launches that
    // had one `period` before them).
    const uint64_t run_start = i + 1 - best->run;
    if (best->period != period_) {
      if (period_ != 0) longest_left_run_ = std::max(longest_left_run_, lock_run_);
      lock_run_ = 0;
      period_ = best->period;
      boundaries_in_lock_ = 0;
      phase_ = (run_start - period_) % period_;
    } else if (run_start != lock_run_start_) {
      // The same period after a break (noise): its boundaries stay at the kernel they were at
      // (the latest launch of it), not at wherever the new run began. Once per break.
      phase_ = (run_start - period_) % period_;
      if (boundaries_in_lock_ > 0) {
        for (uint64_t j = i + 1; j-- > i + 1 - period_;) {
          if (At(j) == boundary_id_) {
            phase_ = j % period_;
            break;
          }
        }
      }
    }
    lock_run_start_ = run_start;
    lock_held_at_ = i;
    lock_run_ = std::max(lock_run_, best->run);
    stale_ = false;
  } else if (period_ != 0 && !stale_ && i - lock_held_at_ > kStaleFactor * period_) {
    // Broken for longer than noise takes to pass: no boundaries until a lock holds again. The
    // period stays the lock's (it may come back, as after a long disruption, without having
    // to beat its old run).
    stale_ = true;
    boundaries_in_lock_ = 0;
  }

  // A boundary: the first launch of a repetition, from the third copy on (the first two made
  // the lock).
  if (period_ == 0 || stale_ || i % period_ != phase_) return false;
  ++boundaries_;
  ++boundaries_in_lock_;
  // The kernel boundaries fall on, when this one is where the repetition has it (not noise).
  if (period_ <= i && At(i - period_) == id) boundary_id_ = id;
  return true;
}

}  // namespace lumos::agent::control
