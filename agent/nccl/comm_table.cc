#include "agent/nccl/comm_table.h"

namespace lumos::agent {
namespace {
constexpr uintptr_t kEmpty = 0;
constexpr uintptr_t kTombstone = 1;
}  // namespace

uint32_t CommTable::Home(uintptr_t key) {
  // Pointers are aligned: mix the bits before taking the index.
  uint64_t mixed = static_cast<uint64_t>(key) * 0x9e3779b97f4a7c15ull;
  return static_cast<uint32_t>(mixed >> 40) % kNcclCommTableSize;
}

CommEntry* CommTable::Find(const void* comm) {
  const auto key = reinterpret_cast<uintptr_t>(comm);
  if (key == kEmpty || key == kTombstone) return nullptr;
  uint32_t index = Home(key);
  for (uint32_t probe = 0; probe < kNcclCommTableSize; ++probe) {
    CommEntry& entry = entries_[index];
    // Acquire: pairs with Insert's release of the key, so the entry's fields are visible.
    const uintptr_t current = entry.key.load(std::memory_order_acquire);
    if (current == key) return &entry;
    if (current == kEmpty) return nullptr;
    index = (index + 1) % kNcclCommTableSize;
  }
  return nullptr;
}

CommEntry* CommTable::Insert(const void* comm, uint64_t comm_id, int32_t rank, uint32_t comm_size,
                             uint32_t device_id, PluginRoute plugin_route) {
  const auto key = reinterpret_cast<uintptr_t>(comm);
  if (key == kEmpty || key == kTombstone) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  uint32_t index = Home(key);
  CommEntry* free_entry = nullptr;
  for (uint32_t probe = 0; probe < kNcclCommTableSize; ++probe) {
    CommEntry& entry = entries_[index];
    const uintptr_t current = entry.key.load(std::memory_order_relaxed);
    if (current == key) {  // NCCL reused the address of a communicator we missed destroying.
      free_entry = &entry;
      break;
    }
    if (current == kTombstone && free_entry == nullptr) free_entry = &entry;
    if (current == kEmpty) {
      if (free_entry == nullptr) free_entry = &entry;
      break;
    }
    index = (index + 1) % kNcclCommTableSize;
  }
  if (free_entry == nullptr) return nullptr;
  free_entry->comm_id.store(comm_id, std::memory_order_relaxed);
  free_entry->record_pending.store(false, std::memory_order_relaxed);
  free_entry->parent_comm_id = 0;
  free_entry->name_id = 0;
  free_entry->rank = rank;
  free_entry->comm_size = comm_size;
  free_entry->device_id = device_id;
  free_entry->plugin_route = plugin_route;
  for (auto& counter : free_entry->seq) counter.store(0, std::memory_order_relaxed);
  free_entry->splits.store(0, std::memory_order_relaxed);
  free_entry->key.store(key, std::memory_order_release);
  return free_entry;
}

void CommTable::Remove(const void* comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (CommEntry* entry = Find(comm)) entry->key.store(kTombstone, std::memory_order_release);
}

}  // namespace lumos::agent
