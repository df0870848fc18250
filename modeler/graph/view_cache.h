// Design: a small direct-mapped cache keyed by a string view's address, for work done per name
// that the same name would only repeat. Within one trace frame every view of an interned string
// shares its pointer (the reader's InternTable), and while a rank's graph is built its events
// view the job's NamePool, so the address stands for the text: interning into the pool and
// keep_range (job.cc), NCCL kernel classification (rank_builder.cc) run once per distinct
// name. Direct-mapped rather than a hash map: a lookup is a shift, a mask and a compare (hash
// maps here cost ~2% of loading a 512-rank job, side by side). A collision only recomputes.
// Lifetime: valid only while the viewed strings stay put: Clear() between frames (addresses
// are reused), one cache per rank in the builder.
// Threading: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace lumos::modeler {

template <typename Value>
class ViewCache {
 public:
  // The cached value for `view`, computing it with make(view) when absent.
  template <typename Make>
  const Value& Get(std::string_view view, const Make& make) {
    Slot& slot = slots_[(reinterpret_cast<uintptr_t>(view.data()) >> 3) & (kSlots - 1)];
    if (slot.data != view.data() || slot.size != view.size() || !slot.used) {
      slot = {view.data(), view.size(), true, make(view)};
    }
    return slot.value;
  }
  void Clear() {
    for (Slot& slot : slots_) slot.used = false;
  }

 private:
  static constexpr size_t kSlots = 1024;
  struct Slot {
    const char* data = nullptr;
    size_t size = 0;
    bool used = false;
    Value value{};
  };
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
};

}  // namespace lumos::modeler
