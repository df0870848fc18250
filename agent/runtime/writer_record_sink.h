// Design: the RecordSink the writer thread hands a RecordSource (record_source.h) when it
// drains: records go into the same RecordEncoder as the rings' records, losses straight into
// the file as LossRecords. In a capture window's file, records a source made before the window
// started (CUPTI activity buffers that filled while the agent was dormant, or whose records carry
// no time) are dropped and counted (SetNotBefore), so a window's file holds its window. A CUDA
// event record without a device timestamp has no time by design (activity_decoder.cc: its
// cudaEventRecord call has it) and is kept; the modeler keeps it only with its call.
// Header-only so benchmarks drive sources exactly as the runtime does.
// Threading: the writer thread only.
#pragma once

#include <cstdint>
#include <string_view>

#include "agent/core/record_encoding.h"
#include "agent/core/string_table.h"
#include "agent/runtime/record_source.h"
#include "schema/writer/trace_file_writer.h"

namespace lumos::agent {

class WriterRecordSink : public RecordSink {
 public:
  // All three must outlive the sink.
  WriterRecordSink(RecordEncoder* encoder, schema::TraceFileWriter* writer, StringTable* strings)
      : encoder_(encoder), writer_(writer), strings_(strings) {}
  void Add(const Record& head, const Record* extension) override {
    if (head.start_ns < not_before_ns_ &&
        !(head.kind == RecordKind::kCudaEventRecord && head.start_ns == 0)) {
      ++dropped_before_;
      return;
    }
    encoder_->Add(head, extension);
  }
  // Records starting before `ns` are dropped from now on (INT64_MIN: none).
  void SetNotBefore(int64_t ns) { not_before_ns_ = ns; }
  uint64_t dropped_before() const { return dropped_before_; }
  void AddLoss(schema::LossSource source, uint64_t count, int64_t time_ns,
               std::string_view detail) override {
    writer_->Add(schema::LossEvent{time_ns, 0, source, count, 0, detail});
  }
  StringTable& strings() override { return *strings_; }

 private:
  RecordEncoder* encoder_;
  schema::TraceFileWriter* writer_;
  StringTable* strings_;
  int64_t not_before_ns_ = INT64_MIN;
  uint64_t dropped_before_ = 0;
};

}  // namespace lumos::agent
