// Design: a producer of records that are not pushed into a thread ring but pulled by the writer
// thread (the CUPTI activity channel: CUPTI hands over whole buffers, which are decoded on the
// writer thread). The agent keeps a fixed list of sources (kMaxRecordSources) and, on every
// drain, asks each one to hand what it has to a RecordSink; before the final drain it asks each
// to flush what its producer still holds (cuptiActivityFlushAll).
// Threading: Drain() and FlushBeforeFinalDrain() run on the writer thread (or the thread that
// finishes the trace), never concurrently with each other; a source registers once and lives
// forever (the agent never destroys one).
#pragma once

#include <cstdint>
#include <string_view>

#include "agent/core/record.h"
#include "schema/enums.h"

namespace lumos::agent {

class StringTable;

// Where a source's records and losses go: the trace writer (in the agent), a vector in tests.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // One event: a head record and its extension (nullptr when it has none).
  virtual void Add(const Record& head, const Record* extension) = 0;
  // One LossRecord; detail is copied before the call returns.
  virtual void AddLoss(schema::LossSource source, uint64_t count, int64_t time_ns,
                       std::string_view detail) = 0;
  // Names for records (kernel names): interned here, on the writer thread.
  virtual StringTable& strings() = 0;
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  virtual void Drain(RecordSink& sink) = 0;
  // Before the last drain: make the producer hand over what it still buffers.
  virtual void FlushBeforeFinalDrain() {}
};

inline constexpr int kMaxRecordSources = 4;

}  // namespace lumos::agent
