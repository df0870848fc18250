// A window file's events clipped to its window (modeler/graph/window_clip.h): a CUDA event record
// is a GPU op like a kernel; the record a kept cudaEventRecord made stays though the GPU reached
// it after the window's end, or though it has no time (a CUPTI without device timestamps), so
// the waits on it stay paired; a record no kept call made goes.
#include "modeler/graph/window_clip.h"

#include <gtest/gtest.h>

namespace lumos::modeler {
namespace {

TEST(WindowClipTest, AnEventRecordOfAKeptCallStaysWhereverItsTime) {
  RankTrace rank;
  schema::ApiCallEvent record_call;  // cudaEventRecord in the window's last iteration.
  record_call.start_ns = 900;
  record_call.duration_ns = 10;
  record_call.correlation_id = 7;
  rank.api_calls.push_back(record_call);
  schema::CudaEventRecordEvent late;  // Its device time: the GPU ran behind the host.
  late.start_ns = 1'500;
  late.correlation_id = 7;
  late.has_device_timestamp = true;
  schema::CudaEventRecordEvent untimed = late;  // No device timestamp: no time at all.
  untimed.start_ns = 0;
  untimed.has_device_timestamp = false;
  schema::CudaEventRecordEvent stale = untimed;  // From before the window: no call of it here.
  stale.correlation_id = 3;
  rank.cuda_events = {late, untimed, stale};
  EXPECT_EQ(ClipToWindow(100, 1'000, &rank), 1u);
  ASSERT_EQ(rank.cuda_events.size(), 2u);
  EXPECT_EQ(rank.cuda_events[0].start_ns, 1'500);
  EXPECT_EQ(rank.cuda_events[1].start_ns, 0);
  EXPECT_EQ(rank.cuda_events[1].correlation_id, 7u);
  EXPECT_EQ(rank.api_calls.size(), 1u);
}

}  // namespace
}  // namespace lumos::modeler
