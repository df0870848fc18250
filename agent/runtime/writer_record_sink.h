// Design: the RecordSink the writer thread hands a RecordSource (record_source.h) when it
// drains: records go into the same RecordEncoder as the rings' records, losses straight into
// the file as LossRecords. Header-only so benchmarks drive sources exactly as the runtime does.
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
  void Add(const Record& head, const Record* extension) override { encoder_->Add(head, extension); }
  void AddLoss(schema::LossSource source, uint64_t count, int64_t time_ns,
               std::string_view detail) override {
    writer_->Add(schema::LossEvent{time_ns, 0, source, count, 0, detail});
  }
  StringTable& strings() override { return *strings_; }

 private:
  RecordEncoder* encoder_;
  schema::TraceFileWriter* writer_;
  StringTable* strings_;
};

}  // namespace lumos::agent
