// Shared by the cuda_tests checkers: runs a workload under lumos-run into a fresh directory and
// reads its one trace packet by packet with the modeler's reader.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "cuda_tests/workload_exit.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::cuda_tests {

template <typename E>
int Int(E value) {
  return static_cast<int>(value);
}

struct WorkloadRun {
  ::lumos::testing::CommandResult result;
  bool skipped = false;    // The workload found no GPU (exit 77).
  std::string trace_path;  // The one trace written ("" when none).
};

// The build tree's paths are compiled in. Where the binaries were copied instead (a GPU machine
// without our build dependencies: scripts/gpu-bundle.sh), CUDA_TESTS_LUMOS_RUN names lumos-run
// and CUDA_TESTS_WORKLOADS the folder that holds the workloads (not LUMOS_*: the agent in the
// workload warns about every LUMOS_* name it does not know).
inline std::string LumosRunPath() {
  const char* copied = std::getenv("CUDA_TESTS_LUMOS_RUN");
  return copied != nullptr && *copied != '\0' ? copied : LUMOS_RUN_PATH;
}
inline std::string WorkloadPath(const std::string& built) {
  const char* folder = std::getenv("CUDA_TESTS_WORKLOADS");
  if (folder == nullptr || *folder == '\0') return built;
  return std::string(folder) + "/" + built.substr(built.rfind('/') + 1);
}

// env: extra "NAME=value ..." put before lumos-run.
inline WorkloadRun RunUnderLumos(const ::lumos::testing::TempDir& dir, const std::string& workload,
                                 const std::string& env = "") {
  WorkloadRun run;
  run.result = ::lumos::testing::RunCommand(env + " " + LumosRunPath() + " -o " + dir.path() +
                                            " -- " + WorkloadPath(workload));
  run.skipped = run.result.exit_code == kSkipExitCode;
  auto ls = ::lumos::testing::RunCommand("ls " + dir.path());
  if (!ls.out.empty()) run.trace_path = dir.path() + "/" + ls.out.substr(0, ls.out.find('\n'));
  return run;
}

// Calls on_packet for every packet of the trace; fails the test when it cannot be read whole.
inline void ReadTrace(const std::string& path,
                      const std::function<void(const modeler::pb::TracePacket&,
                                               const modeler::PacketContext&)>& on_packet) {
  auto reader = modeler::TraceReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  modeler::ReadResult result;
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext& context) {
        on_packet(packet, context);
        return Status::Ok();
      },
      &result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(result.has_trailer);
  EXPECT_TRUE(result.damage.ok()) << result.damage.message();
}

}  // namespace lumos::cuda_tests
