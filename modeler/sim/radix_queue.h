// Design: the simulator's ready queue, a monotone radix heap. The event loop pops nodes in
// order of earliest start, and every node it releases starts no earlier than the node being
// processed (delays are >= 0 except a few measured negative slacks, clamped here to the last
// popped time: they only reorder ties, the node still starts at its own time). That
// monotonicity lets a radix heap replace a binary heap: push is O(1) and a pop moves each item
// at most once per bucket level, with no comparisons between random items (the binary heap's
// sift-down was ~40% of the replay on a 512-rank job, perf).
// Buckets: 0 holds keys equal to the last popped key; bucket i holds keys that first differ from
// it in bit i-1. Pops within a time are last-in first-out: deterministic for a given sequence
// of pushes, which is all "same input, same output" needs.
// Threading: single-threaded.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace lumos::modeler {

class RadixQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // Keys below the last popped one are queued as if equal to it.
  void Push(int64_t time, uint32_t value) {
    const uint64_t key = std::max(Key(time), last_);
    buckets_[Bucket(key)].push_back({key, value});
    ++size_;
  }

  // The item with the smallest key (the caller passes the node's own time on).
  uint32_t Pop() {
    if (buckets_[0].empty()) {
      size_t i = 1;
      while (buckets_[i].empty()) ++i;
      uint64_t smallest = buckets_[i].front().first;
      for (const auto& item : buckets_[i]) smallest = std::min(smallest, item.first);
      last_ = smallest;
      std::vector<std::pair<uint64_t, uint32_t>> moving;
      moving.swap(buckets_[i]);
      for (const auto& item : moving) buckets_[Bucket(item.first)].push_back(item);
      moving.clear();
      moving.swap(buckets_[i]);  // Keep the bucket's capacity.
    }
    const uint32_t value = buckets_[0].back().second;
    buckets_[0].pop_back();
    --size_;
    return value;
  }

 private:
  // Signed times in unsigned order.
  static uint64_t Key(int64_t time) { return static_cast<uint64_t>(time) ^ (uint64_t{1} << 63); }
  size_t Bucket(uint64_t key) const {
    return key == last_ ? 0 : static_cast<size_t>(64 - std::countl_zero(key ^ last_));
  }

  std::vector<std::pair<uint64_t, uint32_t>> buckets_[65];
  uint64_t last_ = 0;
  size_t size_ = 0;
};

}  // namespace lumos::modeler
