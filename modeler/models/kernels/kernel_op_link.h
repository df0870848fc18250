// Design: which framework op launched a kernel. A profiler's op ranges on one host thread nest
// (an aten::linear holds its aten::addmm); the op of a launch is the innermost range on the
// launching thread that contains the launch call. NestedRanges holds one thread's ranges
// sorted by start (longest first among equal starts) with each range's parent, so a lookup is
// a binary search and a walk up the parents (the nesting depth, not the range count).
// Ranges that overlap without nesting (damaged traces) are treated as siblings.
// Threading: built by one thread, then const.
#pragma once

#include <cstdint>
#include <vector>

namespace lumos::modeler::models {

class NestedRanges {
 public:
  void Add(int64_t start_ns, int64_t end_ns, uint32_t id);
  // Sorts and links parents; call once after the last Add.
  void Build();
  // The id of the innermost range containing [start_ns, end_ns]; -1: none.
  int64_t Innermost(int64_t start_ns, int64_t end_ns) const;
  bool empty() const { return ranges_.empty(); }

 private:
  struct Range {
    int64_t start, end;
    uint32_t id;
    int32_t parent;
  };
  std::vector<Range> ranges_;
};

}  // namespace lumos::modeler::models
