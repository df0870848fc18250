#include "tests/testing/collective_job.h"

#include <deque>

#include "base/logging.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/testing/sample_trace.h"

namespace lumos::testing {
namespace {

const char* KernelOp(schema::CollectiveOp op) {
  switch (op) {
    case schema::CollectiveOp::kAllReduce:
      return "AllReduce";
    case schema::CollectiveOp::kAllGather:
      return "AllGather";
    case schema::CollectiveOp::kReduceScatter:
      return "ReduceScatter";
    case schema::CollectiveOp::kBroadcast:
      return "Broadcast";
    default:
      return "SendRecv";
  }
}

}  // namespace

std::vector<std::string> WriteCollectiveJob(const std::string& dir, const CollectiveJob& job) {
  constexpr uint64_t kComm = 0x5eed;
  constexpr uint64_t kStream = 7;
  constexpr uint32_t kThread = 1;
  std::vector<std::string> paths;
  std::deque<std::string> names;  // Alive until each writer has written them.
  for (int32_t rank = 0; rank < job.ranks; ++rank) {
    schema::HeaderInfo header = SampleHeader(rank, job.ranks);
    header.job_id = job.job_id;
    header.host_name = "node" + std::to_string(rank / job.ranks_per_host);
    header.has_local_rank = true;
    header.local_rank = rank % job.ranks_per_host;
    header.devices.clear();
    header.devices.push_back(
        {0, job.device, 132, 1980000, 2619000, 80ull << 30, "0000:18:00.0", 9, 0, "", 5120});
    const std::string path = dir + "/" + job.job_id + ".rank" + std::to_string(rank) + ".pb.zst";
    auto writer = schema::TraceFileWriter::Create(path, header, schema::WriterOptions());
    LUMOS_CHECK(writer.ok());
    schema::CommunicatorEvent comm;
    comm.start_ns = 1000;
    comm.comm_id = kComm;
    comm.rank = rank;
    comm.comm_size = static_cast<uint32_t>(job.ranks);
    (*writer)->Add(comm);
    int64_t end_ns = 0;
    for (size_t i = 0; i < job.collectives.size(); ++i) {
      const TracedCollective& c = job.collectives[i];
      // Rank r starts its kernel r x 300 ns after rank 0; all end together, `transfer_ns`
      // after the last start.
      const int64_t base = 1'000'000 * static_cast<int64_t>(i + 1);
      const int64_t last_start = base + 300 * (job.ranks - 1);
      const int64_t kernel_start = base + 300 * rank;
      end_ns = last_start + c.transfer_ns;
      const uint64_t correlation = 100 + i;
      schema::ApiCallEvent launch;
      launch.start_ns = kernel_start - 5000;
      launch.duration_ns = 3000;
      launch.thread_id = kThread;
      launch.correlation_id = correlation;
      launch.kind = schema::ApiKind::kLaunchKernel;
      launch.name = "cudaLaunchKernel";
      launch.stream_id = kStream;
      (*writer)->Add(launch);
      names.push_back(std::string("ncclDevKernel_") + KernelOp(c.op) + "_Sum_bf16_RING_LL" +
                      "(ncclDevKernelArgsStorage<4096ul>)");
      schema::KernelEvent kernel;
      kernel.start_ns = kernel_start;
      kernel.duration_ns = static_cast<uint64_t>(end_ns - kernel_start);
      kernel.correlation_id = correlation;
      kernel.stream_id = kStream;
      kernel.name = names.back();
      (*writer)->Add(kernel);
      schema::CollectiveEvent record;
      // From the call to the collective's end on the GPU, as the NCCL profiler plugin spans it:
      // the records of one operation end together on every rank (clock_alignment.h).
      record.start_ns = launch.start_ns;
      record.duration_ns = static_cast<uint64_t>(end_ns - launch.start_ns);
      record.comm_id = kComm;
      record.seq_number = i;
      record.op = c.op;
      record.count = c.bytes / schema::DataTypeBytes(c.data_type);
      record.data_type = c.data_type;
      record.bytes = c.bytes;
      record.stream_id = kStream;
      record.algorithm = c.algorithm;
      record.protocol = c.protocol;
      record.channels = c.channels;
      record.correlation_id = correlation;
      record.thread_id = kThread;
      record.comm_size = static_cast<uint32_t>(job.ranks);
      record.has_host_time = true;
      (*writer)->Add(record);
    }
    LUMOS_CHECK((*writer)->Close(static_cast<uint64_t>(end_ns + 1000)).ok());
    paths.push_back(path);
  }
  return paths;
}

}  // namespace lumos::testing
