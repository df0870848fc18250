// Field mapping of the Kineto converter on a small hand-written trace holding every category
// it maps, with fractional µs relative to baseTimeNanoseconds (the newest Kineto format).
#include "modeler/import/kineto_converter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "tests/modeler/import/import_test_util.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::kineto {
namespace {

using ::lumos::testing::TempDir;
using testing::ReadBack;
using testing::ReadPacket;
using testing::ReadTrace;

constexpr int64_t kBase = 1700000000000000000;

constexpr const char kTinyTrace[] = R"JSON({
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096, "computeMajor": 9,
     "computeMinor": 0, "numSms": 132, "warpSize": 32}],
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2, "nccl_version": "2.21.5"},
  "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": [
  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
   "tid": "PyTorch Profiler", "ts": 1.0, "dur": 200.0},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 100, "tid": 101,
   "ts": 10.0, "dur": 100.5, "args": {"External id": 1}},
  {"ph": "X", "cat": "python_function", "name": "model.py(10): forward", "pid": 100,
   "tid": 101, "ts": 10.5, "dur": 50.0, "args": {"Python id": 3}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 101, "ts": 11.25,
   "dur": 5.125, "args": {"External id": 2, "Sequence number": 33, "Fwd thread id": 102}},
  {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 100, "tid": 101, "ts": 11.0,
   "dur": 40.0, "args": {"External id": 9}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 101,
   "ts": 12.001, "dur": 3.5, "args": {"External id": 2, "cbid": 211, "correlation": 500}},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 100, "tid": 103,
   "ts": 13.0, "dur": 1.0, "args": {"cbid": 307, "correlation": 501}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 100, "tid": 101,
   "ts": 14.0, "dur": 1.0, "args": {"cbid": 147, "correlation": 505}},
  {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm", "pid": 0, "tid": 7, "ts": 20.123,
   "dur": 4.5, "args": {"External id": 2, "queued": 0, "device": 0, "context": 1,
   "stream": 7, "correlation": 500, "registers per thread": 168, "shared memory": 232448,
   "grid": [132, 2, 1], "block": [384, 1, 1], "est. achieved occupancy %": 12}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0,
   "tid": 7, "ts": 30.0, "dur": 2.0, "args": {"External id": 4, "device": 0, "context": 1,
   "stream": 7, "correlation": 502, "bytes": 4096}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy PtoP (Device -> Device)", "pid": 0,
   "tid": 7, "ts": 31.0, "dur": 2.0, "args": {"fromDevice": 0, "inDevice": 0, "toDevice": 1,
   "stream": 7, "correlation": 503, "bytes": 8192}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 33.0,
   "dur": 1.0, "args": {"device": 0, "context": 1, "stream": 7, "correlation": 504,
   "bytes": 64}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 24,
   "ts": 40.0, "dur": 1.0, "args": {"External id": 5, "cuda_sync_kind": "Stream Wait Event",
   "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 499,
   "wait_on_cuda_event_id": 9, "stream": 24, "correlation": 505, "device": 0, "context": 1}},
  {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": -1, "ts": 41.0,
   "dur": 2.0, "args": {"cuda_sync_kind": "Context Sync", "stream": -1, "correlation": 506,
   "device": 0, "context": 1}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "## forward ##", "pid": 0, "tid": 7,
   "ts": 20.0, "dur": 30.0, "args": {"External id": 6}},
  {"ph": "X", "cat": "kernel",
   "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
   "pid": 0, "tid": 24, "ts": 70.0, "dur": 10.0, "args": {"device": 0, "stream": 24,
   "correlation": 512, "grid": [16, 1, 1], "block": [512, 1, 1],
   "Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024,
   "Group size": 2, "dtype": "BFloat16", "Process Group Name": "0",
   "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "kernel",
   "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 84, "ts": 45.0, "dur": 3.0, "args": {"device": 0, "stream": 84,
   "correlation": 511, "grid": [2, 1, 1], "block": [256, 1, 1]}},
  {"ph": "X", "cat": "kernel",
   "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
   "pid": 0, "tid": 24, "ts": 50.0, "dur": 10.0, "args": {"device": 0, "stream": 24,
   "correlation": 510, "grid": [16, 1, 1], "block": [512, 1, 1],
   "Collective name": "allreduce", "In msg nelems": 100, "Group size": 2, "dtype": "BFloat16",
   "Process Group Name": "0", "Process Group Description": "default_pg",
   "Process Group Ranks": "[0, 1]"}},
  {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3"}},
  {"ph": "M", "name": "thread_name", "pid": 100, "tid": 101,
   "args": {"name": "thread 101 (pt_main_thread)"}},
  {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
  {"ph": "s", "id": 500, "pid": 100, "tid": 101, "ts": 12.0, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 500, "pid": 0, "tid": 7, "ts": 20.0, "cat": "ac2g", "name": "ac2g",
   "bp": "e"},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 100,
   "tid": 101, "ts": 15.0, "args": {"Bytes": 512}},
  {"ph": "X", "cat": "cpu_op", "name": "bad time", "pid": 100, "tid": 101, "ts": "soon",
   "dur": 1},
  {"ph": "X", "cat": "kernel", "name": "no duration", "pid": 0, "tid": 7, "ts": 5.0}
  ]
})JSON";

class KinetoConverterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    io::PaddedText text;
    text.Append(kTinyTrace, sizeof(kTinyTrace) - 1);
    ConvertOptions options;
    options.job_id = "tiny-job";
    options.source_path = "tiny.json";
    Status status = ConvertKinetoText(text, "tiny.json", dir_.File("t.pb.zst"), options, &stats_);
    ASSERT_TRUE(status.ok()) << status.message();
    back_ = ReadTrace(dir_.File("t.pb.zst"));
  }
  const ReadPacket& One(const std::string& kind, const std::string& name = "") {
    static const ReadPacket kNone;
    for (const ReadPacket* p : back_.Of(kind)) {
      if (name.empty() || p->name == name) return *p;
    }
    ADD_FAILURE() << "no " << kind << " " << name;
    return kNone;
  }

  TempDir dir_;
  ConvertStats stats_;
  ReadBack back_;
};

TEST_F(KinetoConverterTest, FillsTheHeader) {
  const pb::TraceHeader& h = back_.header;
  EXPECT_EQ(h.producer(), pb::PRODUCER_KINETO_IMPORT);
  EXPECT_EQ(h.job_id(), "tiny-job");
  EXPECT_EQ(h.source_path(), "tiny.json");
  EXPECT_EQ(h.pid(), 100u);
  ASSERT_TRUE(h.has_rank() && h.has_world_size());
  EXPECT_EQ(h.rank(), 1);
  EXPECT_EQ(h.world_size(), 2);
  EXPECT_EQ(h.nccl_version(), "2.21.5");
  ASSERT_EQ(h.devices_size(), 1);
  EXPECT_EQ(h.devices(0).name(), "NVIDIA H200");
  EXPECT_EQ(h.devices(0).sm_count(), 132u);
  EXPECT_EQ(h.devices(0).memory_bytes(), 150754820096u);
  EXPECT_EQ(h.devices(0).compute_major(), 9u);
  EXPECT_EQ(h.default_clock_id(), pb::CLOCK_ID_KINETO);
  ASSERT_EQ(h.clock_domains_size(), 1);
  EXPECT_EQ(h.clock_domains(0).clock_id(), pb::CLOCK_ID_KINETO);
  EXPECT_EQ(h.clock_domains(0).resolution_ns(), 1u);  // Fractional µs.
  EXPECT_EQ(h.start_time_ns(), static_cast<uint64_t>(kBase + 1000));
  EXPECT_GT(h.schema_major(), 0u);
}

TEST_F(KinetoConverterTest, MapsGpuActivity) {
  const ReadPacket& k = One("kernel", "sm90_xmma_gemm");
  EXPECT_EQ(k.start_ns, kBase + 20123);  // 20.123 µs, exact to the ns.
  EXPECT_EQ(k.packet.kernel().duration_ns(), 4500u);
  EXPECT_EQ(k.packet.kernel().correlation_id(), 500u);
  EXPECT_EQ(k.packet.kernel().external_id(), 2u);
  EXPECT_EQ(k.packet.kernel().stream_id(), 7u);
  EXPECT_EQ(k.packet.kernel().context_id(), 1u);
  EXPECT_EQ(k.packet.kernel().grid_x(), 132u);
  EXPECT_EQ(k.packet.kernel().grid_y(), 2u);
  EXPECT_EQ(k.packet.kernel().grid_z(), 1u);
  EXPECT_EQ(k.packet.kernel().block_x(), 384u);
  EXPECT_EQ(k.packet.kernel().registers_per_thread(), 168u);
  EXPECT_EQ(k.packet.kernel().static_shared_memory_bytes() +
                k.packet.kernel().dynamic_shared_memory_bytes(),
            232448u);

  auto copies = back_.Of("memcpy");
  ASSERT_EQ(copies.size(), 2u);
  const pb::MemcpyEvent& h2d = copies[0]->packet.memcpy();
  EXPECT_EQ(h2d.copy_kind(), pb::COPY_KIND_HTOD);
  EXPECT_EQ(h2d.src_kind(), pb::MEMORY_KIND_PINNED);
  EXPECT_EQ(h2d.dst_kind(), pb::MEMORY_KIND_DEVICE);
  EXPECT_EQ(h2d.bytes(), 4096u);
  EXPECT_EQ(h2d.correlation_id(), 502u);
  EXPECT_EQ(h2d.external_id(), 4u);
  const pb::MemcpyEvent& p2p = copies[1]->packet.memcpy();
  EXPECT_EQ(p2p.copy_kind(), pb::COPY_KIND_PTOP);
  EXPECT_EQ(p2p.src_device_id(), 0u);
  EXPECT_EQ(p2p.dst_device_id(), 1u);
  EXPECT_EQ(p2p.bytes(), 8192u);

  const pb::MemsetEvent& set = One("memset").packet.memset();
  EXPECT_EQ(set.bytes(), 64u);
  EXPECT_EQ(set.memory_kind(), pb::MEMORY_KIND_DEVICE);
  EXPECT_EQ(set.stream_id(), 7u);
  EXPECT_EQ(set.correlation_id(), 504u);
}

TEST_F(KinetoConverterTest, MapsApiCallsAndSyncs) {
  const ReadPacket& launch = One("api_call", "cudaLaunchKernel");
  EXPECT_EQ(launch.start_ns, kBase + 12001);
  EXPECT_EQ(launch.packet.api_call().duration_ns(), 3500u);
  EXPECT_EQ(launch.packet.api_call().kind(), pb::API_KIND_LAUNCH_KERNEL);
  EXPECT_EQ(launch.packet.api_call().domain(), pb::API_DOMAIN_RUNTIME);
  EXPECT_EQ(launch.packet.api_call().cbid(), 211u);
  EXPECT_EQ(launch.packet.api_call().correlation_id(), 500u);
  EXPECT_EQ(launch.packet.api_call().external_id(), 2u);
  EXPECT_EQ(launch.packet.api_call().thread_id(), 101u);
  const pb::ApiCall& driver = One("api_call", "cuLaunchKernelEx").packet.api_call();
  EXPECT_EQ(driver.domain(), pb::API_DOMAIN_DRIVER);
  EXPECT_EQ(driver.kind(), pb::API_KIND_LAUNCH_KERNEL);
  EXPECT_EQ(driver.thread_id(), 103u);
  EXPECT_EQ(One("api_call", "cudaStreamWaitEvent").packet.api_call().kind(),
            pb::API_KIND_STREAM_WAIT_EVENT);

  auto syncs = back_.Of("sync");
  ASSERT_EQ(syncs.size(), 2u);
  const pb::SyncEvent& wait = syncs[0]->packet.sync();
  EXPECT_EQ(wait.sync_type(), pb::SYNC_TYPE_STREAM_WAIT_EVENT);
  EXPECT_EQ(wait.stream_id(), 24u);
  EXPECT_EQ(wait.wait_on_stream_id(), 7u);
  EXPECT_EQ(wait.event_record_correlation_id(), 499u);
  EXPECT_EQ(wait.event_id(), 9u);
  EXPECT_EQ(wait.correlation_id(), 505u);
  EXPECT_EQ(wait.external_id(), 5u);
  EXPECT_EQ(wait.context_id(), 1u);
  const pb::SyncEvent& context = syncs[1]->packet.sync();
  EXPECT_EQ(context.sync_type(), pb::SYNC_TYPE_CONTEXT_SYNCHRONIZE);
  EXPECT_EQ(context.stream_id(), 0u);  // -1 in Kineto: unknown.
  EXPECT_EQ(context.duration_ns(), 2000u);
}

TEST_F(KinetoConverterTest, MapsHostRangesAndThreads) {
  const pb::HostRange& step = One("host_range", "ProfilerStep#7").packet.host_range();
  EXPECT_EQ(step.category(), pb::HOST_RANGE_CATEGORY_STEP);
  ASSERT_TRUE(step.has_step_number());
  EXPECT_EQ(step.step_number(), 7);
  EXPECT_EQ(step.duration_ns(), 100500u);
  const pb::HostRange& op = One("host_range", "aten::mm").packet.host_range();
  EXPECT_EQ(op.category(), pb::HOST_RANGE_CATEGORY_CPU_OP);
  EXPECT_EQ(op.external_id(), 2u);
  EXPECT_EQ(op.sequence_number(), 33u);
  EXPECT_EQ(op.forward_thread_id(), 102u);
  EXPECT_EQ(op.thread_id(), 101u);
  EXPECT_EQ(op.duration_ns(), 5125u);
  EXPECT_EQ(One("host_range", "forward").packet.host_range().category(),
            pb::HOST_RANGE_CATEGORY_USER_ANNOTATION);
  EXPECT_EQ(One("host_range", "model.py(10): forward").packet.host_range().category(),
            pb::HOST_RANGE_CATEGORY_PYTHON);
  const pb::HostRange& gpu = One("host_range", "## forward ##").packet.host_range();
  EXPECT_EQ(gpu.category(), pb::HOST_RANGE_CATEGORY_GPU_ANNOTATION);
  EXPECT_EQ(gpu.stream_id(), 7u);
  EXPECT_EQ(gpu.thread_id(), 0u);

  auto threads = back_.Of("thread");  // Host threads only: "stream 7" is not one.
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0]->packet.thread().thread_id(), 101u);
  EXPECT_EQ(threads[0]->packet.thread().pid(), 100u);
  EXPECT_EQ(threads[0]->packet.thread().name(), "pt_main_thread");
}

TEST_F(KinetoConverterTest, DerivesCollectivesAndCommunicators) {
  auto collectives = back_.Of("collective");
  ASSERT_EQ(collectives.size(), 3u);
  // Time order: SendRecv (45 µs), then the two all-reduces (50, 70 µs).
  const pb::NcclCollective& send_recv = collectives[0]->packet.collective();
  EXPECT_EQ(send_recv.op(), pb::COLLECTIVE_OP_SEND_RECV);
  EXPECT_EQ(send_recv.algorithm(), pb::NCCL_ALGORITHM_RING);
  EXPECT_EQ(send_recv.protocol(), pb::NCCL_PROTOCOL_SIMPLE);
  EXPECT_EQ(send_recv.data_type(), pb::DATA_TYPE_UNSPECIFIED);  // int8_t says nothing here.
  EXPECT_EQ(send_recv.reduce_op(), pb::REDUCE_OP_UNSPECIFIED);
  EXPECT_EQ(send_recv.seq_number(), 0u);
  EXPECT_EQ(send_recv.stream_id(), 84u);
  const pb::NcclCollective& first = collectives[1]->packet.collective();
  const pb::NcclCollective& second = collectives[2]->packet.collective();
  EXPECT_EQ(collectives[1]->start_ns, kBase + 50000);
  EXPECT_EQ(first.op(), pb::COLLECTIVE_OP_ALL_REDUCE);
  EXPECT_EQ(first.data_type(), pb::DATA_TYPE_BFLOAT16);
  EXPECT_EQ(first.reduce_op(), pb::REDUCE_OP_SUM);
  EXPECT_EQ(first.algorithm(), pb::NCCL_ALGORITHM_RING);
  EXPECT_EQ(first.protocol(), pb::NCCL_PROTOCOL_LL);
  EXPECT_EQ(first.count(), 100u);
  EXPECT_EQ(first.bytes(), 200u);
  EXPECT_EQ(first.channels(), 16u);
  EXPECT_EQ(first.comm_size(), 2u);
  EXPECT_EQ(first.correlation_id(), 510u);
  EXPECT_EQ(first.gpu_duration_ns(), 10000u);
  EXPECT_EQ(first.gpu_start_offset_ns(), 0);
  EXPECT_FALSE(first.has_host_time());
  EXPECT_EQ(first.seq_number(), 0u);
  EXPECT_EQ(second.seq_number(), 1u);
  EXPECT_EQ(second.bytes(), 2048u);
  EXPECT_EQ(first.comm_id(), second.comm_id());
  EXPECT_NE(first.comm_id(), send_recv.comm_id());

  auto comms = back_.Of("communicator");
  ASSERT_EQ(comms.size(), 2u);
  for (const ReadPacket* c : comms) {
    const pb::Communicator& comm = c->packet.communicator();
    EXPECT_EQ(c->start_ns, kBase + 1000);
    if (comm.comm_id() == first.comm_id()) {
      EXPECT_EQ(comm.name(), "default_pg");
      EXPECT_EQ(comm.rank(), 1);
      EXPECT_EQ(comm.comm_size(), 2u);
      ASSERT_EQ(comm.global_ranks_size(), 2);
      EXPECT_EQ(comm.global_ranks(1), 1);
    } else {
      EXPECT_EQ(comm.comm_id(), send_recv.comm_id());
      EXPECT_EQ(comm.name(), "stream 84");
      EXPECT_EQ(comm.rank(), 1);  // Assumed to be the default group.
    }
  }
}

TEST_F(KinetoConverterTest, CountsSkippedEventsAndSpansTheTrace) {
  auto losses = back_.Of("loss");
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_EQ(losses[0]->packet.loss().source(), pb::LOSS_SOURCE_IMPORT_SKIPPED);
  EXPECT_EQ(losses[0]->packet.loss().count(), 2u);
  EXPECT_NE(losses[0]->packet.loss().detail().find("traceEvents["), std::string::npos);
  EXPECT_EQ(stats_.skipped, 2u);

  auto windows = back_.Of("capture_window");
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0]->start_ns, kBase + 1000);  // The profiler span, 1 .. 201 µs.
  EXPECT_EQ(windows[0]->packet.capture_window().duration_ns(), 200000u);
  EXPECT_EQ(windows[0]->packet.capture_window().trigger(), pb::WINDOW_TRIGGER_IMPORTED);

  // The importer writes events in start order; frames group them by kind.
  std::map<int, int64_t> previous;
  for (const ReadPacket& p : back_.packets) {
    if (!p.packet.has_start_delta_ns()) continue;
    auto [it, first] = previous.emplace(p.packet.data_case(), p.start_ns);
    EXPECT_GE(p.start_ns, it->second);
    it->second = p.start_ns;
  }
  EXPECT_EQ(back_.Count("kernel"), 4u);
  EXPECT_EQ(back_.Count("api_call"), 3u);
  EXPECT_EQ(back_.Count("host_range"), 5u);
  EXPECT_EQ(stats_.kernels, 4u);
  EXPECT_EQ(stats_.collectives, 3u);
}

TEST(KinetoConverterTimeTest, IntegerMicrosecondsConvertExactly) {
  TempDir dir;
  // Epoch µs beyond 2^53 ns: a double would round these; integers must not.
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1694128201435418,
     "dur": 52},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 4458676522709.059,
     "dur": 2636.669}]})";
  io::PaddedText text;
  text.Append(json.data(), json.size());
  ConvertStats stats;
  ASSERT_TRUE(ConvertKinetoText(text, "t.json", dir.File("t.pb.zst"), {}, &stats).ok());
  ReadBack back = ReadTrace(dir.File("t.pb.zst"));
  auto ranges = back.Of("host_range");
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0]->start_ns, 4458676522709059);
  EXPECT_EQ(ranges[0]->packet.host_range().duration_ns(), 2636669u);
  EXPECT_EQ(ranges[1]->start_ns, 1694128201435418000);
  EXPECT_EQ(ranges[1]->packet.host_range().duration_ns(), 52000u);
  EXPECT_FALSE(back.header.has_rank());
}

// Times far apart, each in range: their span is not (-5e18 to 5e18 ns). The window over them was
// end - start, a signed overflow; now one error and no output.
TEST(KinetoConverterTimeTest, ASpanBeyondTheRangeIsOneError) {
  TempDir dir;
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": -5000000000000000,
     "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 5000000000000000,
     "dur": 1}]})";
  io::PaddedText text;
  text.Append(json.data(), json.size());
  ConvertStats stats;
  const std::string out = dir.File("t.pb.zst");
  Status status = ConvertKinetoText(text, "t.json", out, {}, &stats);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("t.json: the events' times span more than the 64-bit range"),
            std::string::npos)
      << status.message();
  EXPECT_NE(access(out.c_str(), F_OK), 0);  // Nothing written.
}

}  // namespace
}  // namespace lumos::modeler::kineto
