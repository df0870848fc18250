// Design: the strings interned in the current frame (InternedString packets), by iid. Each
// string lives in its own allocation, so the string_views handed out (event names in
// FrameEvents) stay valid until Clear(), whatever is defined after them. An iid is defined
// at most once per frame. Memory follows the strings defined, not the iids named: writers
// number a frame's strings 1, 2, 3..., which stay in a vector indexed by iid; an iid far beyond
// the strings defined so far (one hostile packet naming iid 2^24 asked for 400 MB) goes to a
// map instead.
// Threading: one table per reader.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace lumos::modeler {

class InternTable {
 public:
  static constexpr uint64_t kMaxIid = 1u << 24;

  void Clear();
  // Fails for iid 0, iids above kMaxIid and iids defined before in this frame.
  Status Set(uint64_t iid, std::string_view value);
  // The string for iid, or "" when iid is 0 or was never defined in this frame.
  std::string_view Get(uint64_t iid) const {
    // A writer's strings: one load. The map only holds anything after a hostile iid.
    if (iid < views_.size() && (!views_[iid].empty() || sparse_.empty())) return views_[iid];
    return GetSparse(iid);
  }
  // The iid of a view returned by Get() (0 for any other view, including ""). Builds a
  // reverse index on first use in a frame; meant for re-encoding, not for hot loops.
  uint64_t IidOf(std::string_view view) const;

  // The vector grows to an iid only while iid <= 2 * defined + kDenseSlack.
  static constexpr uint64_t kDenseSlack = 1024;

 private:
  std::string_view GetSparse(uint64_t iid) const {
    if (sparse_.empty()) return {};
    auto it = sparse_.find(iid);
    return it == sparse_.end() ? std::string_view() : std::string_view(*it->second);
  }

  std::vector<std::unique_ptr<std::string>> strings_;
  std::vector<std::string_view> views_;  // Of strings_, by iid ("" where undefined): Get() is
                                         // one load on the decoder's hot path.
  std::unordered_map<uint64_t, std::unique_ptr<std::string>> sparse_;  // Beyond the vector.
  uint64_t defined_ = 0;                                               // Strings in both.
  mutable std::unordered_map<const char*, uint64_t> iid_by_data_;
  mutable bool reverse_built_ = false;
};

}  // namespace lumos::modeler
