#include "agent/cupti/activity_buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lumos::agent::cupti {

StatusOr<std::unique_ptr<ActivityBufferPool>> ActivityBufferPool::Create(uint64_t buffer_bytes,
                                                                         uint32_t count) {
  if (buffer_bytes == 0 || buffer_bytes % 8 != 0 || count == 0) {
    return Status::Error("CUPTI buffer pool: bad size " + std::to_string(buffer_bytes) + " x " +
                         std::to_string(count));
  }
  const uint64_t total = buffer_bytes * count;
  void* memory = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) {
    return Status::Error("CUPTI buffer pool: mmap of " + std::to_string(total) +
                         " bytes failed: " + std::strerror(errno));
  }
  return std::unique_ptr<ActivityBufferPool>(
      new ActivityBufferPool(static_cast<uint8_t*>(memory), buffer_bytes, count));
}

ActivityBufferPool::ActivityBufferPool(uint8_t* memory, uint64_t buffer_bytes, uint32_t count)
    : memory_(memory),
      buffer_bytes_(buffer_bytes),
      count_(count),
      slots_(new Slot[count]),
      free_bits_(new std::atomic<uint64_t>[(count + 63) / 64]),
      words_((count + 63) / 64) {
  for (uint32_t word = 0; word < words_; ++word) {
    const uint32_t bits = std::min<uint32_t>(64, count - word * 64);
    free_bits_[word].store(bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1,
                           std::memory_order_relaxed);
  }
  ready_.reserve(count);
}

ActivityBufferPool::~ActivityBufferPool() { munmap(memory_, buffer_bytes_ * count_); }

uint8_t* ActivityBufferPool::Acquire() {
  for (uint32_t word = 0; word < words_; ++word) {
    uint64_t bits = free_bits_[word].load(std::memory_order_relaxed);
    while (bits != 0) {
      const int bit = __builtin_ctzll(bits);
      // Acquire: pairs with Release()'s fetch_or, so the consumer is done with the buffer.
      if (free_bits_[word].compare_exchange_weak(bits, bits & ~(uint64_t{1} << bit),
                                                 std::memory_order_acquire,
                                                 std::memory_order_relaxed)) {
        const uint32_t index = word * 64 + static_cast<uint32_t>(bit);
        slots_[index].state.store(kWithCupti, std::memory_order_relaxed);
        return BufferAt(index);
      }
    }
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

bool ActivityBufferPool::Complete(uint8_t* buffer, size_t valid_bytes) {
  if (buffer < memory_ || buffer >= memory_ + buffer_bytes_ * count_) return false;
  const uint64_t offset = static_cast<uint64_t>(buffer - memory_);
  if (offset % buffer_bytes_ != 0) return false;
  const auto index = static_cast<uint32_t>(offset / buffer_bytes_);
  Slot& slot = slots_[index];
  if (slot.state.load(std::memory_order_relaxed) != kWithCupti) return false;
  slot.valid_bytes = std::min<uint64_t>(valid_bytes, buffer_bytes_);
  slot.completed_seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  // Release: the consumer that sees kCompleted sees the sizes and CUPTI's records.
  slot.state.store(kCompleted, std::memory_order_release);
  return true;
}

std::vector<uint32_t>& ActivityBufferPool::CollectCompleted() {
  ready_.clear();
  for (uint32_t index = 0; index < count_; ++index) {
    if (slots_[index].state.load(std::memory_order_acquire) == kCompleted) ready_.push_back(index);
  }
  std::sort(ready_.begin(), ready_.end(), [this](uint32_t a, uint32_t b) {
    return slots_[a].completed_seq < slots_[b].completed_seq;
  });
  return ready_;
}

void ActivityBufferPool::Release(uint32_t index) {
  slots_[index].state.store(kFree, std::memory_order_relaxed);
  // Release: the next Acquire of this buffer sees every read of it done.
  free_bits_[index / 64].fetch_or(uint64_t{1} << (index % 64), std::memory_order_release);
}

uint32_t ActivityBufferPool::free_buffers() const {
  uint32_t free = 0;
  for (uint32_t word = 0; word < words_; ++word) {
    free += static_cast<uint32_t>(__builtin_popcountll(free_bits_[word].load()));
  }
  return free;
}

}  // namespace lumos::agent::cupti
