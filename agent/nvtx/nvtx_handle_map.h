// Design: NVTX domain and registered-string handles while the agent chains to another NVTX
// injection (nvtx_chain.h). The application holds ONE handle per domain or string, but two
// tools want their own: the chained library dereferences the handles it made, the agent keys
// its records by string-table id. So the application gets the chained library's handle and this
// map turns it into the agent's id. When the chained library made none (it did not hook the
// create call, yet or at all, or returned null) the agent hands out a handle of its own: the
// address of a map entry, which no other library can return, so the two kinds never collide
// and own handles are never passed on to the chained library.
// Threading: Add* on the registration path (a lock; domain creation and string registration
// are rare). Find on the hot path: lock-free, allocation-free, at most kCapacity probes
// (usually one). An entry is published by its key (release) after its id; Find loads the key
// with acquire, so a found key always comes with its id.
// Full map: Add* fails; the caller counts the loss and the range goes unnamed / default-domain.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <type_traits>

namespace lumos::agent {

template <size_t kCapacity>
class NvtxHandleMap {
  static_assert(kCapacity > 0 && (kCapacity & (kCapacity - 1)) == 0, "a power of two");

 public:
  struct Found {
    bool known = false;  // False: not a handle made through this map (or null).
    bool own = false;    // The agent's own handle (never passed on to the chained library).
    uint32_t id = 0;     // The agent's string-table id.
  };

  // The chained library's handle for `id`. A handle already present keeps its first id (the
  // same name interns to the same id anyway). False for a null handle or a full map.
  bool AddForeign(const void* handle, uint32_t id) {
    const uintptr_t key = reinterpret_cast<uintptr_t>(handle);
    if (key == 0) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    if (used_ == kCapacity) return Find(handle).known;
    for (size_t probe = 0, index = Home(key); probe < kCapacity;
         ++probe, index = (index + 1) & (kCapacity - 1)) {
      const uintptr_t present = entries_[index].key.load(std::memory_order_relaxed);
      if (present == key) return true;
      if (present != 0) continue;
      Publish(index, key, id);
      return true;
    }
    return false;
  }

  // A new handle of the agent's own for `id`; null when the map is full.
  const void* AddOwn(uint32_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (used_ == kCapacity) return nullptr;
    for (size_t index = 0; index < kCapacity; ++index) {
      if (entries_[index].key.load(std::memory_order_relaxed) != 0) continue;
      Publish(index, reinterpret_cast<uintptr_t>(&entries_[index]), id);
      return &entries_[index];
    }
    return nullptr;
  }

  Found Find(const void* handle) const {
    const uintptr_t key = reinterpret_cast<uintptr_t>(handle);
    if (key == 0) return {};
    const uintptr_t begin = reinterpret_cast<uintptr_t>(&entries_[0]);
    if (key >= begin && key < begin + sizeof(entries_) && (key - begin) % sizeof(Entry) == 0) {
      const Entry& entry = entries_[(key - begin) / sizeof(Entry)];
      if (entry.key.load(std::memory_order_acquire) != key) return {};
      return {true, true, entry.id.load(std::memory_order_relaxed)};
    }
    for (size_t probe = 0, index = Home(key); probe < kCapacity;
         ++probe, index = (index + 1) & (kCapacity - 1)) {
      const uintptr_t present = entries_[index].key.load(std::memory_order_acquire);
      if (present == key) return {true, false, entries_[index].id.load(std::memory_order_relaxed)};
      if (present == 0) break;  // Linear probing: a foreign key sits before the first hole.
    }
    return {};
  }

 private:
  struct Entry {
    std::atomic<uintptr_t> key{0};  // 0 = free; else the handle (own: this entry's address).
    std::atomic<uint32_t> id{0};
  };

  static size_t Home(uintptr_t key) {
    // Fibonacci hashing: handles are often aligned pointers or small counters.
    return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ULL) >> 32) &
           (kCapacity - 1);
  }

  void Publish(size_t index, uintptr_t key, uint32_t id) {
    entries_[index].id.store(id, std::memory_order_relaxed);
    entries_[index].key.store(key, std::memory_order_release);  // Pairs with Find's acquire.
    ++used_;
  }

  Entry entries_[kCapacity];
  std::mutex mutex_;  // Serializes Add*: one writer picks and fills a free entry at a time.
  size_t used_ = 0;   // Under mutex_.
};

}  // namespace lumos::agent
