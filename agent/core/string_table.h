// Design: the strings that records refer to by u32 id (kernel, API and NVTX domain names,
// registered NVTX strings). Intern() is for registration time and the writer thread, never for
// a capture callback: it locks and allocates. Lookup() is lock-free and wait-free, so the writer
// thread resolves a name per record without contending with threads that register strings.
// Ids start at 1 (0 = "no name") and are never reused; strings live as long as the table.
// Threading: Intern() from any thread (serialised by a mutex); Lookup() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace lumos::agent {

class StringTable {
 public:
  static constexpr uint32_t kChunkBits = 12;  // 4096 ids per chunk.
  static constexpr uint32_t kMaxChunks = 1024;
  static constexpr uint32_t kMaxIds = kMaxChunks << kChunkBits;  // Id 0 is never handed out.

  StringTable() = default;
  ~StringTable();
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  // The id of `text`: the same text always gets the same id. 0 when the table is full
  // (kMaxIds - 1 strings), so a name degrades to "unknown" instead of failing.
  uint32_t Intern(std::string_view text);
  // The text of `id`; empty for 0 and for ids this table did not hand out.
  std::string_view Lookup(uint32_t id) const;
  // Strings interned so far.
  uint32_t size() const { return size_.load(std::memory_order_relaxed); }

 private:
  using Slot = std::atomic<const std::string*>;

  std::mutex mutex_;  // Serialises Intern(): the map, the storage and chunk allocation.
  std::deque<std::string> storage_;  // A deque never moves its elements: pointers stay valid.
  std::unordered_map<std::string_view, uint32_t> ids_;  // Keys view into storage_.
  // chunks_[id >> kChunkBits][id & mask] points at the string of `id`. Chunks are allocated
  // on demand and published with release stores that Lookup() pairs with acquire loads.
  std::atomic<Slot*> chunks_[kMaxChunks] = {};
  std::atomic<uint32_t> size_{0};
};

}  // namespace lumos::agent
