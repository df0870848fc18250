// One API call, one record (modeler/trace/nested_calls.h): a driver call a runtime call made
// inside itself is counted once, as the runtime call; on hand-built calls and on the shared
// h200-pytorch traces, whose agent recorded both.
#include "modeler/trace/nested_calls.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "modeler/trace/trace_summary.h"

namespace lumos::modeler {
namespace {

using schema::ApiDomain;
using schema::ApiKind;

schema::ApiCallEvent Call(ApiDomain domain, uint32_t thread, uint64_t correlation, int64_t start,
                          uint64_t duration, ApiKind kind = ApiKind::kLaunchKernel) {
  schema::ApiCallEvent e;
  e.domain = domain;
  e.thread_id = thread;
  e.correlation_id = correlation;
  e.start_ns = start;
  e.duration_ns = duration;
  e.kind = kind;
  return e;
}

TEST(NestedCallsTest, OnlyADriverCallInsideItsRuntimeCallOnItsThreadGoes) {
  std::vector<schema::ApiCallEvent> calls = {
      Call(ApiDomain::kRuntime, 1, 10, 100, 50),  // cudaLaunchKernel
      Call(ApiDomain::kDriver, 1, 10, 110, 20),   // its cuLaunchKernel: goes
      Call(ApiDomain::kDriver, 1, 11, 200, 10),   // the program's own: stays
      Call(ApiDomain::kDriver, 2, 10, 110, 20),   // another thread: stays
      Call(ApiDomain::kDriver, 1, 10, 140, 30),   // outlasts the call: stays
      Call(ApiDomain::kRuntime, 1, 12, 300, 50, ApiKind::kOther),
      Call(ApiDomain::kDriver, 1, 12, 310, 5, ApiKind::kMemcpy),  // goes, lends its kind
      Call(ApiDomain::kDriver, 1, 0, 310, 5),                     // no correlation: stays
  };
  EXPECT_EQ(RemoveNestedDriverCalls(&calls), 2u);
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(calls[0].correlation_id, 10u);
  EXPECT_EQ(calls[1].correlation_id, 11u);
  EXPECT_EQ(calls[2].thread_id, 2u);
  EXPECT_EQ(calls[3].start_ns, 140);
  EXPECT_EQ(calls[4].kind, ApiKind::kMemcpy);
  EXPECT_EQ(calls[5].correlation_id, 0u);
}

TEST(NestedCallsTest, TracesWithoutDriverCallsAreUntouched) {
  std::vector<schema::ApiCallEvent> calls = {Call(ApiDomain::kRuntime, 1, 1, 0, 10),
                                             Call(ApiDomain::kRuntime, 1, 1, 2, 5)};
  EXPECT_EQ(RemoveNestedDriverCalls(&calls), 0u);
  EXPECT_EQ(calls.size(), 2u);
}

// two_streams_workload on an H200 under the agent of 75ca577: 16 kernels, 2 copies, 1 memset,
// 32 launch records (each launch twice). inspect counts one call each.
TEST(NestedCallsTest, TheSharedTwoStreamsTraceHasOneCallPerLaunch) {
  const std::string path =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/two-streams.pb.zst";
  StatusOr<TraceSummary> summary = SummarizeTrace(path);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->kernels, 16u);
  EXPECT_EQ(summary->nested_driver_calls, 27u);
  EXPECT_EQ(summary->packet_counts.at("api_call"), 27u);
}

}  // namespace
}  // namespace lumos::modeler
