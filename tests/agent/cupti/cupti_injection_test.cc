// End to end, in subprocesses: liblumos_agent.so as CUDA_INJECTION64_PATH with the real libcupti
// and no CUDA driver. The job's output and exit status are unchanged, stderr has one warning,
// and the trace says which channels failed (CHANNEL_FAILED LossRecords). Under lumos-run the
// preloaded agent and the injected one are the same object: one trace file. The header's
// cupti_version is what that libcupti's cuptiGetVersion says (it needs no driver).
#include <cupti.h>
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/cupti/cupti_library.h"
#include "modeler/trace/trace_reader.h"
#include "schema/enums.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

std::vector<std::string> TraceFiles(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (name.size() > 7 && name.compare(name.size() - 7, 7, ".pb.zst") == 0) {
        names.push_back(dir + "/" + name);
      }
    }
    closedir(d);
  }
  return names;
}

// CHANNEL_FAILED details in the trace, and whether it ended with a trailer.
std::vector<std::string> ChannelFailures(const std::string& path, bool* has_trailer) {
  std::vector<std::string> details;
  auto reader = modeler::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return details;
  modeler::ReadResult result;
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext&) {
        if (packet.has_loss() && static_cast<int>(packet.loss().source()) ==
                                     static_cast<int>(schema::LossSource::kChannelFailed)) {
          details.push_back(packet.loss().detail());
        }
        if (packet.has_trailer()) *has_trailer = true;
        return Status::Ok();
      },
      &result);
  EXPECT_TRUE(status.ok()) << status.message();
  return details;
}

// cuptiGetVersion() of the libcupti.so.13 the agent finds (the loader path, else the toolkit's),
// asked here directly; 0 when there is none (the tests then fail elsewhere too).
uint32_t RealCuptiVersion() {
  void* library = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  for (const char* path : cupti::kToolkitCuptiPaths) {
    if (library == nullptr) library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  EXPECT_NE(library, nullptr) << "no libcupti.so.13";
  if (library == nullptr) return 0;
  auto get_version =
      reinterpret_cast<decltype(&cuptiGetVersion)>(dlsym(library, "cuptiGetVersion"));
  uint32_t version = 0;
  EXPECT_TRUE(get_version != nullptr && get_version(&version) == CUPTI_SUCCESS);
  return version;
}

uint32_t HeaderCuptiVersion(const std::string& path) {
  auto reader = modeler::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  return reader.ok() ? (*reader)->header().cupti_version() : 0;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void ExpectBothChannelsFailed(const std::string& dir) {
  std::vector<std::string> files = TraceFiles(dir);
  ASSERT_EQ(files.size(), 1u) << "one process, one agent state, one trace";
  bool has_trailer = false;
  std::vector<std::string> failures = ChannelFailures(files[0], &has_trailer);
  EXPECT_TRUE(has_trailer);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].rfind("cupti_activity: cuptiActivityEnable", 0), 0u) << failures[0];
  EXPECT_EQ(failures[1].rfind("cupti_callback: cuptiSubscribe", 0), 0u) << failures[1];
  for (const std::string& failure : failures) {
    EXPECT_NE(failure.find("CUPTI_ERROR_UNKNOWN (999)"), std::string::npos) << failure;
  }
  // Read before the header was written, although the channel itself could not start.
  const uint32_t version = RealCuptiVersion();
  EXPECT_GT(version, 0u);
  EXPECT_EQ(HeaderCuptiVersion(files[0]), version);
}

TEST(CuptiInjectionTest, NoDriverDegradesWithOneWarningAndTheJobRunsOn) {
  TempDir dir;
  auto traced = RunCommand("env LUMOS_OUTPUT_DIR=" + dir.path() +
                           " CUDA_INJECTION64_PATH=" LUMOS_AGENT_SO_PATH " " INJECTION_HOST_PATH);
  auto untraced = RunCommand("env LUMOS_ENABLE=0 CUDA_INJECTION64_PATH=" LUMOS_AGENT_SO_PATH
                             " " INJECTION_HOST_PATH);
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(untraced.exit_code, 0) << untraced.err;
  EXPECT_EQ(traced.out, "job output: 1 1\n");
  EXPECT_EQ(traced.out, untraced.out);
  EXPECT_EQ(untraced.err, "");
  EXPECT_EQ(Count(traced.err, "\n"), 1) << traced.err;
  EXPECT_EQ(Count(traced.err, "CUPTI channel off"), 1) << traced.err;
  ExpectBothChannelsFailed(dir.path());
}

TEST(CuptiInjectionTest, LumosRunInjectsTheSameAgentItPreloads) {
  TempDir dir;
  auto r =
      RunCommand(std::string(LUMOS_RUN_PATH) + " -o " + dir.path() + " -- " INJECTION_HOST_PATH);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "job output: 1 1\n");
  EXPECT_EQ(Count(r.err, "CUPTI channel off"), 1) << r.err;
  ExpectBothChannelsFailed(dir.path());
}

TEST(CuptiInjectionTest, ChannelsOffMeansNoCuptiAtAll) {
  TempDir dir;
  auto r = RunCommand("env LUMOS_CHANNELS=nvtx LUMOS_OUTPUT_DIR=" + dir.path() +
                      " CUDA_INJECTION64_PATH=" LUMOS_AGENT_SO_PATH " " INJECTION_HOST_PATH);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "job output: 1 1\n");
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(TraceFiles(dir.path()).empty());  // Nothing started the agent.
}

// The device and versions, as the process's driver, runtime and NCCL name them (a stand-in
// preloaded: tests/agent/cupti/fake_cuda_driver.c), reach the trailer (schema 2.4): the writer
// asks once cuInit has run, on its own thread; the header, written before, names none.
TEST(CuptiInjectionTest, TheTrailerNamesTheProcessesDeviceAndVersions) {
  TempDir dir;
  auto r = RunCommand("env LD_PRELOAD=" FAKE_CUDA_DRIVER_PATH
                      " LUMOS_FLUSH_INTERVAL_MS=20 "
                      "LUMOS_OUTPUT_DIR=" +
                      dir.path() +
                      " CUDA_INJECTION64_PATH=" LUMOS_AGENT_SO_PATH " " INJECTION_HOST_PATH " 300");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files = TraceFiles(dir.path());
  ASSERT_EQ(files.size(), 1u);
  auto reader = modeler::TraceReader::Open(files[0]);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->header().devices_size(), 0);
  modeler::ReadResult result;
  ASSERT_TRUE((*reader)
                  ->ReadPackets([](const modeler::pb::TracePacket&,
                                   const modeler::PacketContext&) { return Status::Ok(); },
                                &result)
                  .ok());
  ASSERT_TRUE(result.has_trailer);
  const modeler::pb::Trailer& t = result.trailer;
  ASSERT_EQ(t.devices_size(), 1);
  EXPECT_EQ(t.devices(0).name(), "NVIDIA H200");
  EXPECT_EQ(t.devices(0).sm_count(), 132u);
  EXPECT_EQ(t.devices(0).compute_major(), 9u);
  EXPECT_EQ(t.devices(0).memory_bytes(), 150'754'820'096u);
  EXPECT_EQ(t.devices(0).pci_bus_id(), "00000000:18:00.0");
  EXPECT_EQ(t.devices(0).uuid(), "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
  EXPECT_EQ(t.cuda_driver_version(), 13000u);
  EXPECT_EQ(t.cuda_runtime_version(), 13000u);
  EXPECT_EQ(t.nccl_version(), "2.28.9");
}

}  // namespace
}  // namespace lumos::agent
