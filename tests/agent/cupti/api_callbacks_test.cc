// The API callback handler driven with fabricated CUpti_CallbackData, as CUPTI calls it: ENTER
// then EXIT with the same correlationData slot, the call's params struct and return value.
#include "agent/cupti/api_callbacks.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/core/string_table.h"
#include "agent/runtime/agent_runtime.h"

namespace lumos::agent::cupti {
namespace {

template <typename T>
T H(uintptr_t value) {
  return reinterpret_cast<T>(value);
}

class ApiCallbacksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rings = ThreadRings::Create(uint64_t{4} << 20, uint64_t{64} << 10);
    ASSERT_TRUE(rings.ok());
    rings_ = std::move(rings).value();
    table_.Build(strings_);
    enabled_.Set(true);
    context_ = CallbackContext{&enabled_, rings_.get(), &table_};
  }

  // One call: ENTER, then EXIT; returns the slot's start time.
  void Call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
            int32_t return_code, uint32_t correlation_id) {
    CUpti_CallbackData data{};
    data.functionParams = params;
    data.functionReturnValue = &return_code;
    data.correlationId = correlation_id;
    data.correlationData = &slot_;
    data.callbackSite = CUPTI_API_ENTER;
    HandleApiCallback(&context_, domain, cbid, &data);
    data.callbackSite = CUPTI_API_EXIT;
    HandleApiCallback(&context_, domain, cbid, &data);
  }

  std::vector<Record> Drain() {
    std::vector<Record> records;
    rings_->DrainAll(
        [&](const ThreadRing&, const Record& head, const Record*) { records.push_back(head); },
        1 << 20);
    return records;
  }

  std::string Name(const Record& record) {
    return std::string(strings_.Lookup(record.payload.api_call.name_id));
  }

  std::unique_ptr<ThreadRings> rings_;
  StringTable strings_;
  CallbackTable table_;
  EnabledFlag enabled_;
  CallbackContext context_;
  uint64_t slot_ = 0;
};

struct Expected {
  const char* name;
  schema::ApiKind kind;
  schema::ApiDomain domain;
  uint64_t stream, event, graph;
};

// __cudaLaunchKernel (CUDA 13's <<<>>>) has no params struct in CUPTI's headers: its
// prototype's parameters, as the agent mirrors them.
struct CompilerLaunchParams {
  cudaKernel_t kernel;
  dim3 gridDim, blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

void Check(const Record& record, const Expected& want, uint32_t correlation_id,
           const std::string& name) {
  SCOPED_TRACE(want.name);
  EXPECT_EQ(record.kind, RecordKind::kApiCall);
  EXPECT_EQ(name, want.name);
  EXPECT_EQ(record.payload.api_call.api_kind, static_cast<uint8_t>(want.kind));
  EXPECT_EQ(record.payload.api_call.domain, static_cast<uint8_t>(want.domain));
  EXPECT_EQ(record.payload.api_call.stream_id, want.stream);
  EXPECT_EQ(record.payload.api_call.event_id, want.event);
  EXPECT_EQ(record.payload.api_call.graph_id, want.graph);
  EXPECT_EQ(record.payload.api_call.correlation_id, correlation_id);
  EXPECT_EQ(record.thread_id, static_cast<uint32_t>(syscall(SYS_gettid)));
  EXPECT_GT(record.start_ns, 0);
  EXPECT_LE(record.start_ns, record.end_ns);
}

TEST_F(ApiCallbacksTest, EveryLaunchPathCarriesItsStream) {
  constexpr auto kRt = CUPTI_CB_DOMAIN_RUNTIME_API;
  constexpr auto kDrv = CUPTI_CB_DOMAIN_DRIVER_API;
  constexpr auto kLaunch = schema::ApiKind::kLaunchKernel;
  constexpr auto kRuntime = schema::ApiDomain::kRuntime;
  constexpr auto kDriver = schema::ApiDomain::kDriver;
  cudaLaunchKernel_v7000_params launch{};
  launch.stream = H<cudaStream_t>(0x1001);
  cudaLaunchKernel_ptsz_v7000_params launch_ptsz{};
  launch_ptsz.stream = H<cudaStream_t>(0x1002);
  cudaLaunchConfig_t config{};
  config.stream = H<cudaStream_t>(0x1003);
  cudaLaunchKernelExC_v11060_params launch_ex{};
  launch_ex.config = &config;
  cudaLaunchCooperativeKernel_v9000_params cooperative{};
  cooperative.stream = H<cudaStream_t>(0x1004);
  cuLaunchKernel_params cu_launch{};
  cu_launch.hStream = H<CUstream>(0x1005);
  CUlaunchConfig cu_config{};
  cu_config.hStream = H<CUstream>(0x1006);
  cuLaunchKernelEx_params cu_launch_ex{};
  cu_launch_ex.config = &cu_config;
  cuLaunchKernelEx_ptsz_params cu_launch_ex_ptsz{};
  cu_launch_ex_ptsz.config = &cu_config;
  cuLaunchCooperativeKernel_params cu_cooperative{};
  cu_cooperative.hStream = H<CUstream>(0x1007);
  cudaGraphLaunch_v10000_params graph{};
  graph.graphExec = H<cudaGraphExec_t>(0x2001);
  graph.stream = H<cudaStream_t>(0x1008);
  cuGraphLaunch_params cu_graph{};
  cu_graph.hGraph = H<CUgraphExec>(0x2002);
  cu_graph.hStream = H<CUstream>(0x1009);

  CompilerLaunchParams compiler_launch{H<cudaKernel_t>(0x3001), dim3(128), dim3(256), nullptr, 0,
                                       H<cudaStream_t>(0x100a)};
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch, 0, 1);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, &launch_ptsz, 0, 2);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, &launch_ex, 0, 3);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, &cooperative, 0, 4);
  Call(kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cu_launch, 0, 5);
  Call(kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &cu_launch_ex, 0, 6);
  Call(kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, &cu_launch_ex_ptsz, 0, 7);
  Call(kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, &cu_cooperative, 0, 8);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &graph, 0, 9);
  Call(kDrv, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, &cu_graph, 0, 10);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &compiler_launch, 0, 11);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, &compiler_launch, 0, 12);

  const Expected expected[] = {
      {"cudaLaunchKernel", kLaunch, kRuntime, 0x1001, 0, 0},
      {"cudaLaunchKernel_ptsz", kLaunch, kRuntime, 0x1002, 0, 0},
      {"cudaLaunchKernelExC", kLaunch, kRuntime, 0x1003, 0, 0},
      {"cudaLaunchCooperativeKernel", kLaunch, kRuntime, 0x1004, 0, 0},
      {"cuLaunchKernel", kLaunch, kDriver, 0x1005, 0, 0},
      {"cuLaunchKernelEx", kLaunch, kDriver, 0x1006, 0, 0},
      {"cuLaunchKernelEx_ptsz", kLaunch, kDriver, 0x1006, 0, 0},
      {"cuLaunchCooperativeKernel", kLaunch, kDriver, 0x1007, 0, 0},
      {"cudaGraphLaunch", schema::ApiKind::kLaunchGraph, kRuntime, 0x1008, 0, 0x2001},
      {"cuGraphLaunch", schema::ApiKind::kLaunchGraph, kDriver, 0x1009, 0, 0x2002},
      {"__cudaLaunchKernel", kLaunch, kRuntime, 0x100a, 0, 0},
      {"__cudaLaunchKernel_ptsz", kLaunch, kRuntime, 0x100a, 0, 0},
  };
  std::vector<Record> records = Drain();
  ASSERT_EQ(records.size(), std::size(expected));
  for (size_t i = 0; i < records.size(); ++i) {
    Check(records[i], expected[i], static_cast<uint32_t>(i + 1), Name(records[i]));
  }
}

// The __cudaLaunchKernel mirror is unchecked against a real CUPTI (no GPU here), so a params
// block whose launch dimensions are not a launch's gives the launch without a stream rather
// than a wrong one.
TEST_F(ApiCallbacksTest, CompilerLaunchWithImplausibleDimensionsKeepsNoStream) {
  CompilerLaunchParams params{nullptr, dim3(1), dim3(2048), nullptr, 0, H<cudaStream_t>(0x100b)};
  Call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &params, 0,
       1);
  params.blockDim = dim3(32);
  params.gridDim = dim3(0);
  Call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &params, 0,
       2);
  std::vector<Record> records = Drain();
  ASSERT_EQ(records.size(), 2u);
  for (const Record& record : records) {
    EXPECT_EQ(record.payload.api_call.api_kind,
              static_cast<uint8_t>(schema::ApiKind::kLaunchKernel));
    EXPECT_EQ(record.payload.api_call.stream_id, 0u);
  }
}

TEST_F(ApiCallbacksTest, EventRecordStreamWaitAndSyncs) {
  constexpr auto kRt = CUPTI_CB_DOMAIN_RUNTIME_API;
  constexpr auto kDrv = CUPTI_CB_DOMAIN_DRIVER_API;
  constexpr auto kRuntime = schema::ApiDomain::kRuntime;
  constexpr auto kDriver = schema::ApiDomain::kDriver;
  cudaEventRecord_v3020_params record{H<cudaEvent_t>(0x3001), H<cudaStream_t>(0x1001)};
  cudaEventRecordWithFlags_v11010_params record_flags{};
  record_flags.event = H<cudaEvent_t>(0x3002);
  record_flags.stream = H<cudaStream_t>(0x1002);
  cuEventRecord_params cu_record{H<CUevent>(0x3003), H<CUstream>(0x1003)};
  cudaStreamWaitEvent_v3020_params wait{};
  wait.stream = H<cudaStream_t>(0x1004);
  wait.event = H<cudaEvent_t>(0x3001);
  cuStreamWaitEvent_params cu_wait{H<CUstream>(0x1005), H<CUevent>(0x3003), 0};
  cudaStreamSynchronize_v3020_params stream_sync{H<cudaStream_t>(0x1006)};
  cudaEventSynchronize_v3020_params event_sync{H<cudaEvent_t>(0x3002)};
  cuCtxSynchronize_v2_params ctx_sync{};

  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &record, 0, 21);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010, &record_flags, 0, 22);
  Call(kDrv, CUPTI_DRIVER_TRACE_CBID_cuEventRecord, &cu_record, 0, 23);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &wait, 0, 24);
  Call(kDrv, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, &cu_wait, 0, 25);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &stream_sync, 0, 26);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, &event_sync, 0, 27);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, nullptr, 0, 28);
  Call(kDrv, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, &ctx_sync, 0, 29);

  const Expected expected[] = {
      {"cudaEventRecord", schema::ApiKind::kEventRecord, kRuntime, 0x1001, 0x3001, 0},
      {"cudaEventRecordWithFlags", schema::ApiKind::kEventRecord, kRuntime, 0x1002, 0x3002, 0},
      {"cuEventRecord", schema::ApiKind::kEventRecord, kDriver, 0x1003, 0x3003, 0},
      {"cudaStreamWaitEvent", schema::ApiKind::kStreamWaitEvent, kRuntime, 0x1004, 0x3001, 0},
      {"cuStreamWaitEvent", schema::ApiKind::kStreamWaitEvent, kDriver, 0x1005, 0x3003, 0},
      {"cudaStreamSynchronize", schema::ApiKind::kStreamSynchronize, kRuntime, 0x1006, 0, 0},
      {"cudaEventSynchronize", schema::ApiKind::kEventSynchronize, kRuntime, 0, 0x3002, 0},
      {"cudaDeviceSynchronize", schema::ApiKind::kDeviceSynchronize, kRuntime, 0, 0, 0},
      {"cuCtxSynchronize_v2", schema::ApiKind::kDeviceSynchronize, kDriver, 0, 0, 0},
  };
  std::vector<Record> records = Drain();
  ASSERT_EQ(records.size(), std::size(expected));
  for (size_t i = 0; i < records.size(); ++i) {
    Check(records[i], expected[i], static_cast<uint32_t>(21 + i), Name(records[i]));
  }
}

TEST_F(ApiCallbacksTest, CopiesAndSetsWithReturnCodes) {
  constexpr auto kRt = CUPTI_CB_DOMAIN_RUNTIME_API;
  constexpr auto kRuntime = schema::ApiDomain::kRuntime;
  cudaMemcpy_v3020_params copy{};
  cudaMemcpyAsync_v3020_params copy_async{};
  copy_async.stream = H<cudaStream_t>(0x1001);
  cudaMemset_v3020_params set{};
  cudaMemsetAsync_v3020_params set_async{};
  set_async.stream = H<cudaStream_t>(0x1002);
  cuMemsetD32Async_params cu_set_async{};
  cu_set_async.hStream = H<CUstream>(0x1003);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &copy, 0, 31);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &copy_async, 700, 32);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, &set, 0, 33);
  Call(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, &set_async, 0, 34);
  Call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, &cu_set_async, 1, 35);
  const Expected expected[] = {
      {"cudaMemcpy", schema::ApiKind::kMemcpy, kRuntime, 0, 0, 0},
      {"cudaMemcpyAsync", schema::ApiKind::kMemcpyAsync, kRuntime, 0x1001, 0, 0},
      {"cudaMemset", schema::ApiKind::kMemset, kRuntime, 0, 0, 0},
      {"cudaMemsetAsync", schema::ApiKind::kMemsetAsync, kRuntime, 0x1002, 0, 0},
      {"cuMemsetD32Async", schema::ApiKind::kMemsetAsync, schema::ApiDomain::kDriver, 0x1003, 0, 0},
  };
  std::vector<Record> records = Drain();
  ASSERT_EQ(records.size(), std::size(expected));
  for (size_t i = 0; i < records.size(); ++i) {
    Check(records[i], expected[i], static_cast<uint32_t>(31 + i), Name(records[i]));
  }
  EXPECT_EQ(records[0].payload.api_call.return_code, 0);
  EXPECT_EQ(records[1].payload.api_call.return_code, 700);
  EXPECT_EQ(records[4].payload.api_call.return_code, 1);
  EXPECT_EQ(records[1].payload.api_call.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
}

TEST_F(ApiCallbacksTest, StartAndEndComeFromEnterAndExit) {
  cudaStreamSynchronize_v3020_params sync{};
  CUpti_CallbackData data{};
  data.functionParams = &sync;
  data.correlationData = &slot_;
  data.correlationId = 5;
  data.callbackSite = CUPTI_API_ENTER;
  const int64_t before = MonotonicNowNs();
  HandleApiCallback(&context_, CUPTI_CB_DOMAIN_RUNTIME_API,
                    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &data);
  const int64_t entered = static_cast<int64_t>(slot_);
  usleep(2000);  // The "call" blocks for 2 ms.
  data.callbackSite = CUPTI_API_EXIT;
  HandleApiCallback(&context_, CUPTI_CB_DOMAIN_RUNTIME_API,
                    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &data);
  const int64_t after = MonotonicNowNs();
  std::vector<Record> records = Drain();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_GE(entered, before);
  EXPECT_EQ(records[0].start_ns, entered);
  EXPECT_GE(records[0].end_ns - records[0].start_ns, 2'000'000);
  EXPECT_LE(records[0].end_ns, after);
}

// One record per call: the driver call a runtime call makes inside it on the same thread (as
// CUDA 13 does: cudaLaunchKernel's cuLaunchKernel, cudaMemcpy's cuMemcpyHtoD_v2, with the same
// correlation id; the shared h200-pytorch traces hold both) is not recorded; a driver call the
// program makes itself is, and so is one after a runtime call whose EXIT came while collection
// was off (the stale open call is replaced by the next runtime call).
TEST_F(ApiCallbacksTest, ADriverCallInsideARuntimeCallIsNotRecordedAgain) {
  cudaLaunchKernel_v7000_params runtime_launch{};
  runtime_launch.stream = H<cudaStream_t>(0x51);
  cuLaunchKernel_params driver_launch{};
  driver_launch.hStream = H<CUstream>(0x51);
  CUpti_CallbackData outer{}, inner{};
  outer.functionParams = &runtime_launch;
  outer.correlationData = &slot_;
  outer.correlationId = 7;
  uint64_t inner_slot = 0;
  inner.functionParams = &driver_launch;
  inner.correlationData = &inner_slot;
  inner.correlationId = 7;
  auto site = [&](CUpti_CallbackData* data, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                  CUpti_ApiCallbackSite at) {
    data->callbackSite = at;
    HandleApiCallback(&context_, domain, cbid, data);
  };
  const auto rt = CUPTI_CB_DOMAIN_RUNTIME_API;
  const auto drv = CUPTI_CB_DOMAIN_DRIVER_API;
  const auto rt_launch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  const auto drv_launch = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  site(&outer, rt, rt_launch, CUPTI_API_ENTER);
  site(&inner, drv, drv_launch, CUPTI_API_ENTER);
  site(&inner, drv, drv_launch, CUPTI_API_EXIT);
  site(&outer, rt, rt_launch, CUPTI_API_EXIT);
  std::vector<Record> records = Drain();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(Name(records[0]), "cudaLaunchKernel");

  // The program's own driver call, after the runtime call returned.
  Call(drv, drv_launch, &driver_launch, 0, 8);
  records = Drain();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(Name(records[0]), "cuLaunchKernel");

  // A runtime call whose EXIT never reached the agent leaves the thread "inside" it: the next
  // driver call is taken for its; the next runtime call heals it.
  site(&outer, rt, rt_launch, CUPTI_API_ENTER);
  Call(drv, drv_launch, &driver_launch, 0, 9);
  Call(rt, rt_launch, &runtime_launch, 0, 10);
  Call(drv, drv_launch, &driver_launch, 0, 11);
  records = Drain();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(Name(records[0]), "cudaLaunchKernel");
  EXPECT_EQ(records[0].payload.api_call.correlation_id, 10u);
  EXPECT_EQ(Name(records[1]), "cuLaunchKernel");
  EXPECT_EQ(records[1].payload.api_call.correlation_id, 11u);
}

// A job's own bad argument never becomes our crash: launch_paths_workload called
// cuCtxSynchronize_v2 (CUDA 13's "cuCtxSynchronize" entry point) as the old void function, so
// its context argument was garbage; the handler records the call and reads no handle it does
// not need (a context is none of them), whatever the pointer.
TEST_F(ApiCallbacksTest, AGarbageContextIsNeverDereferenced) {
  cuCtxSynchronize_v2_params sync{};
  sync.ctx = H<CUcontext>(0x1);  // Not a pointer anything may read.
  Call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, &sync,
       /*CUDA_ERROR_INVALID_CONTEXT*/ 201, 12);
  std::vector<Record> records = Drain();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(Name(records[0]), "cuCtxSynchronize_v2");
  EXPECT_EQ(records[0].payload.api_call.return_code, 201);
  EXPECT_EQ(records[0].payload.api_call.stream_id, 0u);
}

TEST_F(ApiCallbacksTest, RecordsNothingWhenOffOrUntraced) {
  cudaStreamSynchronize_v3020_params sync{};
  enabled_.Set(false);
  Call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &sync, 0,
       1);
  enabled_.Set(true);
  Call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, nullptr, 0, 2);
  Call(CUPTI_CB_DOMAIN_RESOURCE, 1, nullptr, 0, 3);
  HandleApiCallback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, 1, nullptr);
  EXPECT_TRUE(Drain().empty());
}

TEST_F(ApiCallbacksTest, EnterWhileOffGivesAnInstantNotGarbage) {
  cudaStreamSynchronize_v3020_params sync{};
  CUpti_CallbackData data{};
  data.functionParams = &sync;
  slot_ = ~uint64_t{0} >> 1;  // Whatever CUPTI left there: far in the future.
  data.correlationData = &slot_;
  data.callbackSite = CUPTI_API_EXIT;
  HandleApiCallback(&context_, CUPTI_CB_DOMAIN_RUNTIME_API,
                    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &data);
  std::vector<Record> records = Drain();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].start_ns, records[0].end_ns);
}

// Windowed modes, a window armed in a job without NVTX markers: kernel launches (ENTER, the gate
// still closed) feed the kernel stream's period detector, whose boundaries start the window and
// end it after K iterations; nothing is recorded before the window, and launches are not fed
// while KernelBoundaries does not want them. (On a GPU: scripts/gpu-check.sh.)
TEST_F(ApiCallbacksTest, KernelLaunchesGiveIterationBoundariesWithoutAMarker) {
  EnabledFlag gate;
  control::WindowController windows(&gate);
  control::KernelBoundaries kernel(&windows);
  context_ = CallbackContext{&gate, rings_.get(), &table_, &kernel};
  control::WindowPlan plan;
  plan.iterations = 2;
  plan.duration_ns = 10'000'000'000;
  plan.give_up_ns = INT64_MAX;
  plan.kernel_boundaries = true;
  ASSERT_TRUE(windows.Arm(plan, 0));
  // A step of 20 kernels: 18 through cudaLaunchKernel, 2 through cuLaunchKernel.
  auto step = [&](int times) {
    for (int t = 0; t < times; ++t) {
      for (uintptr_t k = 0; k < 18; ++k) {
        cudaLaunchKernel_v7000_params launch{};
        launch.func = H<const void*>(0x7000 + k * 0x40);
        Call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &launch,
             0, 1);
      }
      for (uintptr_t k = 0; k < 2; ++k) {
        cuLaunchKernel_params launch{};
        launch.f = H<CUfunction>(0x9000 + k * 0x40);
        Call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &launch, 0, 2);
      }
    }
  };
  step(2);  // Not wanted: nothing fed.
  EXPECT_EQ(kernel.launches(), 0u);
  kernel.SetWanted(true);
  step(2);  // Two copies: the period, no boundary yet.
  EXPECT_EQ(kernel.launches(), 40u);
  EXPECT_EQ(kernel.period(), 20u);
  EXPECT_EQ(windows.state(), control::WindowState::kArmed);
  EXPECT_TRUE(Drain().empty());  // The gate is closed: nothing recorded.
  step(1);                       // The third copy begins: a boundary starts the window.
  EXPECT_EQ(windows.state(), control::WindowState::kCapturing);
  EXPECT_EQ(windows.kernel_boundaries(), 1u);
  EXPECT_FALSE(windows.marker_seen());
  step(2);  // Two whole iterations: the boundary after them ends it.
  EXPECT_EQ(windows.state(), control::WindowState::kClosing);
  EXPECT_EQ(windows.span().iterations, 2u);
  EXPECT_TRUE(windows.span().started_at_boundary);
  // What the gate let through: the window's two iterations of launches (the launch that ended
  // it closed the gate at its ENTER, so its EXIT records nothing).
  const std::vector<Record> records = Drain();
  EXPECT_EQ(records.size(), 40u);
  EXPECT_EQ(kernel.dropped(), 0u);
}

TEST(TracedApisTest, UniqueKnownCallbackIdsWithHandles) {
  std::set<std::pair<int, uint32_t>> seen;
  for (const ApiSpec& spec : TracedApis()) {
    EXPECT_TRUE(seen.emplace(spec.domain, spec.cbid).second) << spec.name;
    EXPECT_LT(spec.cbid, spec.domain == CUPTI_CB_DOMAIN_RUNTIME_API
                             ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                             : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE))
        << spec.name;
    EXPECT_NE(spec.kind, schema::ApiKind::kUnspecified) << spec.name;
    const std::string name = spec.name;
    // Anything that runs on a stream must read one (async and launch paths).
    if (name.find("Async") != std::string::npos || name.find("_ptsz") != std::string::npos) {
      EXPECT_NE(spec.fill_handles, nullptr) << spec.name;
    }
  }
  EXPECT_GT(seen.size(), 100u);
}

// Why a callback id whose name looks like stream work or a host wait is not traced, or "" when
// it should be.
std::string WhyNotTraced(const std::string& name, const std::set<std::string>& names_in_header) {
  if (name.rfind("cu64", 0) == 0) return "legacy 64-bit driver ABI, unreachable from cuda.h";
  if (name.find("Graph") != std::string::npos && name.find("GraphLaunch") == std::string::npos) {
    return "builds or edits a graph; its work runs at the graph's launch";
  }
  // cuda.h maps cuMemcpyHtoD to cuMemcpyHtoD_v2, cuMemsetD8 to cuMemsetD8_v2, ...
  if (name.rfind("cu", 0) == 0 && name.rfind("cuda", 0) != 0 &&
      names_in_header.count(name + "_v2")) {
    return "v1 driver name; cuda.h calls the _v2 entry point";
  }
  static const std::set<std::string> kExcused = {
      "cudaLaunch_v3020", "cudaLaunch_ptsz_v7000",  // Gone from CUDA 13's runtime.
      // CUDA 12.8's batch-copy signatures; CUDA 13's runtime has only the v13000 ones.
      "cudaMemcpyBatchAsync_v12080", "cudaMemcpyBatchAsync_ptsz_v12080",
      "cudaMemcpy3DBatchAsync_v12080", "cudaMemcpy3DBatchAsync_ptsz_v12080",
      "cuMemcpy_v2",  // No CUDA 13 header maps a call to it.
      // Frees of arrays, modules and address ranges: no stream work, no device wait modelled.
      "cudaFreeArray_v3020", "cudaFreeMipmappedArray_v5000", "cuBinaryFree", "cuMemAddressFree"};
  if (kExcused.count(name)) return "excused";
  return "";
}

// Every callback id of the CUPTI this was built with whose name says it launches, records,
// waits, synchronizes, copies, sets or frees is traced, or excused above. CUDA 13 moved every
// <<<>>> launch of an nvcc-13 build to a new id (__cudaLaunchKernel): a CUPTI that adds such an
// id fails here until someone decides what it is.
TEST(TracedApisTest, EveryOrderingCallbackIdOfThisCuptiIsTracedOrExcused) {
  std::set<std::string> traced;
  for (const ApiSpec& spec : TracedApis()) traced.insert(spec.name);
  const std::regex ordering(
      "Launch|EventRecord|WaitEvent|Synchronize|Memcpy|Memset|WaitValue|Free");
  int checked = 0;
  for (const auto& [file, prefix] :
       {std::pair<std::string, std::string>{"cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_"},
        {"cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_"}}) {
    std::ifstream in(std::string(LUMOS_CUDA_INCLUDE_DIR) + "/" + file);
    ASSERT_TRUE(in) << LUMOS_CUDA_INCLUDE_DIR << "/" << file;
    std::stringstream text;
    text << in.rdbuf();
    const std::string header = text.str();
    const std::regex id(prefix + "(\\w+)\\s*=");
    std::set<std::string> names;
    for (auto it = std::sregex_iterator(header.begin(), header.end(), id);
         it != std::sregex_iterator(); ++it) {
      names.insert((*it)[1].str());
    }
    ASSERT_GT(names.size(), 100u) << file;
    for (const std::string& name : names) {
      if (!std::regex_search(name, ordering) || name == "SIZE" || name == "FORCE_INT") continue;
      ++checked;
      if (traced.count(name)) continue;
      EXPECT_NE(WhyNotTraced(name, names), "")
          << file << ": " << name << " is neither traced nor excused";
    }
  }
  EXPECT_GT(checked, 200);
}

}  // namespace
}  // namespace lumos::agent::cupti
