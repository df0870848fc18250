#include "agent/core/string_table.h"

namespace lumos::agent {

StringTable::~StringTable() {
  for (std::atomic<Slot*>& chunk : chunks_) delete[] chunk.load(std::memory_order_relaxed);
}

uint32_t StringTable::Intern(std::string_view text) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  const uint32_t id = size_.load(std::memory_order_relaxed) + 1;
  if (id >= kMaxIds) return 0;
  std::atomic<Slot*>& chunk = chunks_[id >> kChunkBits];
  Slot* slots = chunk.load(std::memory_order_relaxed);  // Only Intern() stores, under mutex_.
  if (slots == nullptr) {
    slots = new Slot[size_t{1} << kChunkBits]();
    // Release: Lookup() that loads the chunk pointer sees its zero-initialised slots.
    chunk.store(slots, std::memory_order_release);
  }
  const std::string& stored = storage_.emplace_back(text);
  ids_.emplace(std::string_view(stored), id);
  // Release: Lookup() that loads this pointer (acquire) sees the string's bytes.
  slots[id & ((1u << kChunkBits) - 1)].store(&stored, std::memory_order_release);
  size_.store(id, std::memory_order_relaxed);  // Statistics only; ids are read via the slots.
  return id;
}

std::string_view StringTable::Lookup(uint32_t id) const {
  if (id == 0 || id >= kMaxIds) return {};
  // Acquire, twice: pairs with the release stores in Intern() (chunk, then slot).
  const Slot* slots = chunks_[id >> kChunkBits].load(std::memory_order_acquire);
  if (slots == nullptr) return {};
  const std::string* text = slots[id & ((1u << kChunkBits) - 1)].load(std::memory_order_acquire);
  return text == nullptr ? std::string_view() : std::string_view(*text);
}

}  // namespace lumos::agent
