// The exporter on real traces: examples/dlrm-8rank (8 ranks of a DLRM step, imported from the
// PyTorch profiler). Skipped when the examples are not in the tree.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "modeler/export/chrome_trace_export.h"
#include "modeler/trace/trace_set.h"
#include "tests/modeler/export/export_test_util.h"

namespace lumos::modeler {
namespace {

TEST(ExampleTracesTest, Dlrm8RanksExportWithValidRowsAndFlows) {
  std::string dir = std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank";
  if (access(dir.c_str(), R_OK) != 0) GTEST_SKIP() << dir << " is not there";
  StatusOr<std::vector<std::string>> paths = ExpandTracePaths({dir});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  ASSERT_EQ(paths->size(), 8u);

  std::string json;
  ExportReport report;
  Status status = ExportChromeTrace(
      *paths, ExportOptions(),
      [&](std::string_view chunk) {
        json.append(chunk);
        return Status::Ok();
      },
      &report);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_FALSE(report.damaged());
  export_test::ParsedTrace trace;
  ASSERT_TRUE(export_test::ParseTrace(json, &trace));
  EXPECT_TRUE(export_test::RowsNest(trace));
  EXPECT_TRUE(export_test::FlowsPaired(trace));
  EXPECT_TRUE(export_test::TimesHaveThreeDecimals(json));

  ASSERT_EQ(trace.process_names.size(), 8u);
  for (uint32_t rank = 0; rank < 8; ++rank) {
    EXPECT_EQ(trace.process_names[rank + 1].rfind("rank " + std::to_string(rank) + " ", 0), 0u)
        << trace.process_names[rank + 1];
    EXPECT_NE(trace.Tid(rank + 1, "NCCL"), 0u) << "rank " << rank;
  }
  EXPECT_GT(report.events, 10000u);
  EXPECT_GT(trace.Flows("launch").size(), 1000u);  // Most kernels have their launch.
  EXPECT_FALSE(trace.Flows("collective").empty());
}

}  // namespace
}  // namespace lumos::modeler
