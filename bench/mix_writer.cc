#include "bench/mix_writer.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>

namespace lumos::bench {

StatusOr<schema::WriterStats> WriteTrace(const std::string& path, const schema::HeaderInfo& header,
                                         const std::vector<MixEvent>& events,
                                         const schema::WriterOptions& options) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<schema::TraceFileWriter> writer,
                         schema::TraceFileWriter::Create(path, header, options));
  for (const MixEvent& e : events) AddEvent(writer.get(), e);
  int64_t end_ns = events.empty() ? 0 : StartNs(events.back());
  LUMOS_RETURN_IF_ERROR(writer->Close(static_cast<uint64_t>(end_ns)));
  return writer->stats();
}

std::string ScratchPath(const std::string& tag) {
  const char* dir = std::getenv("TMPDIR");
  std::string base = dir != nullptr && dir[0] != '\0' ? dir : "/tmp";
  return base + "/lumos_bench_" + std::to_string(::getpid()) + "_" + tag + ".pb.zst";
}

}  // namespace lumos::bench
