// Design: a flat hash map from a non-zero 64-bit id (a correlation id) to a node index, for the
// graph builder's joins. Open addressing with linear probing in one array: no allocation per
// entry. std::unordered_map allocated a node per insert, and its inserts and frees were ~10% of
// loading a 512-rank job (perf).
// Key 0 is never stored: it marks an empty slot (correlation id 0 means "none" in the traces).
// Threading: none; one builder owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lumos::modeler {

class IdMap {
 public:
  static constexpr uint32_t kMissing = UINT32_MAX;

  // Room for `count` entries without growing.
  void Reserve(size_t count) {
    size_t capacity = 16;
    while (capacity < (count + 1) * 2) capacity *= 2;  // Put's load limit: a half.
    if (capacity > slots_.size()) Rehash(capacity);
  }

  // The value of `key`, or kMissing (also for key 0).
  uint32_t Find(uint64_t key) const {
    if (key == 0 || slots_.empty()) return kMissing;
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == 0) return kMissing;
    }
  }

  // Inserts key -> value unless the key is there already (like emplace). Key 0 is ignored.
  void Add(uint64_t key, uint32_t value) { Put(key, value, /*replace=*/false); }
  // Inserts or replaces (like operator[]). Key 0 is ignored.
  void Set(uint64_t key, uint32_t value) { Put(key, value, /*replace=*/true); }

  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = 0;
  };

  size_t Home(uint64_t key) const {
    // Fibonacci hashing: ids that differ in low bits (consecutive correlation ids) spread.
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }

  void Put(uint64_t key, uint32_t value, bool replace) {
    if (key == 0) return;
    if ((size_ + 1) * 2 > slots_.size()) Rehash(slots_.empty() ? 16 : slots_.size() * 2);
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) {
        if (replace) slots_[i].value = value;
        return;
      }
      if (slots_[i].key == 0) {
        slots_[i] = {key, value};
        ++size_;
        return;
      }
    }
  }

  void Rehash(size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != 0) Put(s.key, s.value, false);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace lumos::modeler
