#include "tests/testing/every_packet_kind.h"

#include "base/logging.h"
#include "tests/testing/sample_trace.h"

namespace lumos::testing {

void WriteEveryPacketKind(const std::string& path) {
  using namespace ::lumos::schema;  // NOLINT: test data reads better unqualified.
  HeaderInfo header = SampleHeader(1, 2);
  header.job_id = "golden";
  header.nccl_version = "2.28.3";
  header.cuda_runtime_version = 13000;
  // Schema 2.3: an on-demand window, named in the header and repeated whole at the close.
  CaptureWindowEvent window{.start_ns = kEveryKindBaseNs,
                            .duration_ns = 100'000,
                            .window_index = 0,
                            .trigger = WindowTrigger::kOnDemand,
                            .first_iteration = 100,
                            .iteration_count = 0,
                            .iteration_marker = "ProfilerStep*",
                            .requested_by = "uid 0 pid 4242 (lumos-ctl)",
                            .request_id = 0xFEED,
                            .target = "iteration % 100 == 0",
                            .missed_target = "",
                            .start_realtime_ns = 1'764'633'600'000'000'000,
                            .requested_iterations = 1};
  header.has_capture_window = true;
  header.capture_window = window;
  auto writer = TraceFileWriter::Create(path, header, WriterOptions());
  LUMOS_CHECK(writer.ok());
  TraceFileWriter& w = **writer;
  const int64_t t = kEveryKindBaseNs;
  ClockReading clocks[] = {{schema::ClockId::kCupti, static_cast<uint64_t>(t)},
                           {schema::ClockId::kMonotonic, 5'000'000'000}};
  w.AddClockSnapshot(clocks, 2);
  w.AddThread({11, "main", 100});
  window.iteration_count = 1;
  w.Add(window);
  w.Add(NvtxEvent{t + 1'000, 50'000, 11, "step 0", "", NvtxKind::kPushPop});
  w.Add(HostRangeEvent{t + 1'500, 40'000, 11, "aten::mm", HostRangeCategory::kCpuOp, 7});
  w.Add(ApiCallEvent{t + 2'000, 3'000, 11, 1, ApiKind::kLaunchKernel, 211, "cudaLaunchKernel", 7, 0,
                     ApiDomain::kRuntime, 7});
  w.Add(KernelEvent{.start_ns = t + 6'000,
                    .duration_ns = 20'000,
                    .correlation_id = 1,
                    .stream_id = 7,
                    .name = "sm90_gemm",
                    .grid = {132, 1, 1},
                    .block = {384, 1, 1}});
  w.Add(ApiCallEvent{t + 5'500, 1'000, 11, 2, ApiKind::kEventRecord, 135, "cudaEventRecord", 7, 33,
                     ApiDomain::kRuntime});
  w.Add(CudaEventRecordEvent{t + 5'500, 2, 33, 7, 9001});
  w.Add(ApiCallEvent{t + 7'000, 1'000, 11, 3, ApiKind::kStreamWaitEvent, 147, "cudaStreamWaitEvent",
                     8, 33, ApiDomain::kRuntime});
  w.Add(SyncEvent{t + 7'000, 1'000, SyncType::kStreamWaitEvent, 3, 8, 33, 9001, 7, 2});
  w.Add(MemcpyEvent{t + 30'000, 4'000, 4, 8, 1 << 20, CopyKind::kDtoh, 0, MemoryKind::kDevice,
                    MemoryKind::kPinned});
  w.Add(MemsetEvent{t + 35'000, 1'000, 5, 8, 4096});
  w.Add(CollectiveEvent{t + 40'000,
                        2'000,
                        0xC0FFEE,
                        0,
                        CollectiveOp::kAllReduce,
                        1 << 20,
                        DataType::kBfloat16,
                        2 << 20,
                        -1,
                        -1,
                        9,
                        1'000,
                        30'000,
                        NcclAlgorithm::kRing,
                        NcclProtocol::kSimple,
                        16,
                        0,
                        ReduceOp::kSum,
                        6,
                        11,
                        2,
                        true});
  w.Add(CommunicatorEvent{t + 100, 0xC0FFEE, 1, 2, 0, "default_pg", {0, 1}});
  // Schema 2.2: the GEMM problem of the call that launched sm90_gemm (its span holds the
  // launch on thread 11).
  w.Add(GemmCallEvent{.start_ns = t + 1'800,
                      .duration_ns = 4'000,
                      .thread_id = 11,
                      .api = GemmApi::kCublasltMatmul,
                      .m = 4096,
                      .n = 1024,
                      .k = 8192,
                      .batch_count = 1,
                      .transa = GemmTranspose::kT,
                      .transb = GemmTranspose::kN,
                      .a_type = DataType::kBfloat16,
                      .b_type = DataType::kBfloat16,
                      .c_type = DataType::kBfloat16,
                      .d_type = DataType::kBfloat16,
                      .compute_type = GemmComputeType::kFloat32,
                      .stream_id = 7});
  // And an imported attention problem (flash attention forward, batch 2 x 16 heads, 8 key /
  // value heads, 1024 x 1024, head dimension 128, causal) naming a launch this file lacks.
  w.Add(GemmCallEvent{.start_ns = t + 60'000,
                      .duration_ns = 2'000,
                      .thread_id = 11,
                      .api = GemmApi::kFrameworkAttention,
                      .m = 1024,
                      .n = 1024,
                      .k = 128,
                      .batch_count = 32,
                      .a_type = DataType::kBfloat16,
                      .b_type = DataType::kBfloat16,
                      .c_type = DataType::kBfloat16,
                      .d_type = DataType::kBfloat16,
                      .name = "aten::_flash_attention_forward",
                      .external_id = 12,
                      .correlation_id = 99,
                      .heads = 16,
                      .kv_heads = 8,
                      .head_dim_v = 128,
                      .mask = AttentionMask::kCausal});
  w.Add(LossEvent{t + 90'000, 1'000, LossSource::kRingFull, 3, 11, "ring of thread 11 full"});
  // Schema 2.1: the rank the agent learned from the NCCL world communicator (the header's).
  // Schema 2.4: the device and versions the header could not name at start-up.
  TrailerInfo trailer{.has_rank = true, .has_world_size = true, .rank = 1, .world_size = 2};
  trailer.devices.push_back({.device_id = 0,
                             .name = "NVIDIA H200",
                             .sm_count = 132,
                             .sm_clock_khz = 1'980'000,
                             .memory_clock_khz = 3'201'000,
                             .memory_bytes = 150'754'820'096,
                             .pci_bus_id = "0000:18:00.0",
                             .compute_major = 9,
                             .compute_minor = 0,
                             .uuid = "GPU-5ad0f0c1-0000-0000-0000-000000000000",
                             .memory_bus_width_bits = 6144});
  trailer.cuda_runtime_version = 13000;
  trailer.cuda_driver_version = 13000;
  trailer.nccl_version = "2.28.9";
  LUMOS_CHECK(w.Close(static_cast<uint64_t>(t + 100'000), trailer).ok());
}

}  // namespace lumos::testing
