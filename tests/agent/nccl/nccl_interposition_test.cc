// End to end: programs that reach (fake) NCCL in each way the agent must handle, under
// lumos-run, their traces read back with the modeler's reader. The fake libnccl.so.2 also acts
// as NCCL's core for the profiler plugin (see fake_nccl/fake_nccl.cc).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "modeler/trace/trace_reader.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

namespace pb = ::lumos::trace;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

struct Trace {
  pb::TraceHeader header;
  modeler::ReadResult read;
  std::vector<pb::NcclCollective> collectives;
  std::vector<pb::Communicator> communicators;
  int nvtx = 0;
  std::map<std::string, uint64_t> loss;  // Without the two below.
  // No cuInit in these CPU-only jobs: the CUPTI channels say at the close that they never
  // started, every time, so they are kept apart from the losses a test looks at.
  int cuda_never_initialized = 0;
};

// The paths of the files in `dir`.
std::vector<std::string> ListPaths(const std::string& dir) {
  std::vector<std::string> paths = ::lumos::testing::ListDir(dir);
  for (std::string& path : paths) path = dir + "/" + path;
  return paths;
}

// The one trace in `dir`.
Trace ReadOnlyTrace(const std::string& dir) {
  Trace trace;
  std::vector<std::string> files = ListPaths(dir);
  EXPECT_EQ(files.size(), 1u) << dir;
  if (files.size() != 1) return trace;
  auto reader = modeler::TraceReader::Open(files[0]);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return trace;
  trace.header = (*reader)->header();
  Status status = (*reader)->ReadPackets(
      [&](const pb::TracePacket& packet, const modeler::PacketContext&) {
        if (packet.has_collective()) trace.collectives.push_back(packet.collective());
        if (packet.has_communicator()) trace.communicators.push_back(packet.communicator());
        if (packet.has_nvtx()) ++trace.nvtx;
        if (packet.has_loss()) {
          if (packet.loss().detail().find(": CUDA injection never called") != std::string::npos) {
            ++trace.cuda_never_initialized;
          } else {
            trace.loss[packet.loss().detail()] += packet.loss().count();
          }
        }
        return Status::Ok();
      },
      &trace.read);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(trace.read.has_trailer);
  EXPECT_TRUE(trace.read.damage.ok()) << trace.read.damage.message();
  return trace;
}

// Runs `command` under lumos-run with the fake libnccl first on the library path.
::lumos::testing::CommandResult RunTraced(const std::string& dir, const std::string& env,
                                          const std::string& command) {
  return RunCommand("LD_LIBRARY_PATH=" FAKE_NCCL_DIR " LUMOS_FLUSH_INTERVAL_MS=10 " + env + " " +
                    LUMOS_RUN_PATH + " -o " + dir + " -- " + command);
}

int Count(const Trace& trace, pb::CollectiveOp op) {
  int n = 0;
  for (const auto& c : trace.collectives) n += c.op() == op ? 1 : 0;
  return n;
}

const pb::Communicator* FindComm(const Trace& trace, uint64_t comm_id) {
  for (const auto& c : trace.communicators) {
    if (c.comm_id() == comm_id) return &c;
  }
  return nullptr;
}

// What tests/agent/nccl/nccl_sequence.cc does, as rank `rank`, checked field by field.
void ExpectSequence(const Trace& trace, int rank, bool from_plugin) {
  ASSERT_EQ(trace.communicators.size(), 2u);
  const pb::Communicator& world = trace.communicators[0];
  const pb::Communicator& half = trace.communicators[1];
  EXPECT_EQ(world.rank(), rank);
  EXPECT_EQ(world.comm_size(), 4u);
  EXPECT_EQ(world.name(), "world");
  EXPECT_EQ(world.device_id(), static_cast<uint32_t>(rank));  // The fake: device = rank.
  EXPECT_EQ(world.parent_comm_id(), 0u);
  EXPECT_EQ(half.rank(), rank / 2);
  EXPECT_EQ(half.comm_size(), 2u);
  EXPECT_EQ(half.parent_comm_id(), world.comm_id());
  EXPECT_NE(world.comm_id(), 0u);
  EXPECT_NE(half.comm_id(), world.comm_id());

  ASSERT_EQ(trace.collectives.size(), 13u);
  EXPECT_EQ(Count(trace, pb::COLLECTIVE_OP_ALL_REDUCE), 3);
  EXPECT_EQ(Count(trace, pb::COLLECTIVE_OP_BROADCAST), 2);  // ncclBroadcast and ncclBcast.
  for (pb::CollectiveOp op :
       {pb::COLLECTIVE_OP_REDUCE, pb::COLLECTIVE_OP_ALL_GATHER, pb::COLLECTIVE_OP_REDUCE_SCATTER,
        pb::COLLECTIVE_OP_ALL_TO_ALL, pb::COLLECTIVE_OP_GATHER, pb::COLLECTIVE_OP_SCATTER,
        pb::COLLECTIVE_OP_SEND, pb::COLLECTIVE_OP_RECV}) {
    EXPECT_EQ(Count(trace, op), 1) << op;
  }
  std::map<std::pair<int, uint64_t>, int> seen;  // (op, seq) per communicator must be unique.
  for (const auto& c : trace.collectives) {
    EXPECT_TRUE(c.has_host_time());
    EXPECT_EQ(c.stream_id(), 0x5000u);
    const bool on_half = c.comm_id() == half.comm_id();
    EXPECT_TRUE(on_half || c.comm_id() == world.comm_id()) << c.ShortDebugString();
    EXPECT_EQ(c.comm_size(), on_half ? 2u : 4u);
    const std::pair<int, uint64_t> key(c.op() * 2 + (on_half ? 1 : 0), c.seq_number());
    EXPECT_EQ(++seen[key], 1) << c.ShortDebugString();
    switch (c.op()) {
      case pb::COLLECTIVE_OP_ALL_REDUCE:
        EXPECT_EQ(c.data_type(), pb::DATA_TYPE_FLOAT32);
        EXPECT_EQ(c.bytes(), on_half ? 16u : 4096u);
        EXPECT_FALSE(c.has_root_rank());
        break;
      case pb::COLLECTIVE_OP_BROADCAST:
        EXPECT_TRUE(c.has_root_rank());
        if (c.data_type() == pb::DATA_TYPE_BFLOAT16) {
          EXPECT_EQ(c.root_rank(), 1);
          EXPECT_EQ(c.bytes(), 1024u);
        } else {
          EXPECT_EQ(c.data_type(), pb::DATA_TYPE_INT64);
          EXPECT_EQ(c.root_rank(), 2);
          EXPECT_EQ(c.bytes(), 64u);
        }
        break;
      case pb::COLLECTIVE_OP_REDUCE:
        EXPECT_EQ(c.root_rank(), 0);
        EXPECT_EQ(c.bytes(), 1024u);
        break;
      case pb::COLLECTIVE_OP_ALL_GATHER:
        EXPECT_EQ(c.count(), 64u);
        EXPECT_EQ(c.bytes(), 256u);
        break;
      case pb::COLLECTIVE_OP_REDUCE_SCATTER:
        EXPECT_EQ(c.bytes(), 128u);
        break;
      case pb::COLLECTIVE_OP_ALL_TO_ALL:
        EXPECT_EQ(c.data_type(), pb::DATA_TYPE_INT32);
        EXPECT_EQ(c.bytes(), 64u);
        break;
      case pb::COLLECTIVE_OP_GATHER:
      case pb::COLLECTIVE_OP_SCATTER:
        EXPECT_EQ(c.root_rank(), 0);
        EXPECT_EQ(c.bytes(), 20u);
        break;
      case pb::COLLECTIVE_OP_SEND:
        EXPECT_EQ(c.peer_rank(), (rank + 1) % 4);
        EXPECT_EQ(c.bytes(), 100u);
        break;
      case pb::COLLECTIVE_OP_RECV:
        EXPECT_EQ(c.peer_rank(), (rank + 3) % 4);
        EXPECT_EQ(c.bytes(), 100u);
        break;
      default:
        ADD_FAILURE() << c.ShortDebugString();
    }
    if (from_plugin) {
      // The fake core's kernels: 2 channels of 5000 ns, 100 ns apart (p2p: 1 channel).
      const bool p2p = c.op() == pb::COLLECTIVE_OP_SEND || c.op() == pb::COLLECTIVE_OP_RECV;
      EXPECT_EQ(c.gpu_duration_ns(), p2p ? 5000u : 5100u) << c.ShortDebugString();
      EXPECT_EQ(c.channels(), p2p ? 1u : 2u);
      if (!p2p) {
        EXPECT_EQ(c.algorithm(), pb::NCCL_ALGORITHM_RING);
        EXPECT_EQ(c.protocol(), pb::NCCL_PROTOCOL_SIMPLE);
      }
    } else {
      EXPECT_EQ(c.gpu_duration_ns(), 0u);
      EXPECT_EQ(c.device_id(), static_cast<uint32_t>(rank));
    }
    // Only the wrapper knows the reduce op; with both routes it hands it to the plugin.
    if (c.op() == pb::COLLECTIVE_OP_ALL_REDUCE && !on_half) {
      EXPECT_TRUE(c.reduce_op() == pb::REDUCE_OP_SUM || c.reduce_op() == pb::REDUCE_OP_MAX)
          << c.ShortDebugString();
    }
    if (c.op() == pb::COLLECTIVE_OP_REDUCE || c.op() == pb::COLLECTIVE_OP_REDUCE_SCATTER ||
        (c.op() == pb::COLLECTIVE_OP_ALL_REDUCE && on_half)) {
      EXPECT_EQ(c.reduce_op(), pb::REDUCE_OP_SUM) << c.ShortDebugString();
    }
  }
}

const std::string kWrappersOnly = "LUMOS_CHANNELS=nccl_wrappers";

// Case A: linked to libnccl; the wrappers resolve through RTLD_NEXT.
TEST(NcclInterpositionTest, LinkedProgramIsRecordedByTheWrappers) {
  TempDir dir;
  auto r = RunTraced(dir.path(), kWrappersOnly, std::string(LINKED_WORKLOAD_PATH) + " 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "linked workload rank 2: done\n");
  EXPECT_EQ(r.err, "");
  ExpectSequence(ReadOnlyTrace(dir.path()), 2, /*from_plugin=*/false);
}

// Case B': libnccl dlopen'd RTLD_LOCAL, the API found through dlsym(RTLD_DEFAULT).
TEST(NcclInterpositionTest, DlsymDefaultIsRecordedThroughTheNoloadFallback) {
  TempDir dir;
  auto r = RunTraced(dir.path(), kWrappersOnly,
                     std::string(LOADER_WORKLOAD_PATH) + " default " FAKE_NCCL_PATH " 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "default workload rank 1: done\n");
  ExpectSequence(ReadOnlyTrace(dir.path()), 1, false);
}

// Case C: dlopen(RTLD_LOCAL) of a library that NEEDs libnccl (PyTorch's shape).
TEST(NcclInterpositionTest, LocalLibraryNeedingNcclIsRecorded) {
  TempDir dir;
  auto r = RunTraced(dir.path(), kWrappersOnly,
                     std::string(LOADER_WORKLOAD_PATH) + " torch " FAKETORCH_PATH " 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "faketorch rank 3: done\n");
  ExpectSequence(ReadOnlyTrace(dir.path()), 3, false);
}

// Case F'': Python ctypes loading that library.
TEST(NcclInterpositionTest, PythonCtypesLoadingTheLibraryIsRecorded) {
  if (RunCommand("command -v python3").exit_code != 0) GTEST_SKIP() << "no python3";
  TempDir dir;
  const std::string script =
      "python3 -c 'import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); "
      "sys.exit(lib.faketorch_run(int(sys.argv[2])))' " FAKETORCH_PATH " 0";
  auto r = RunTraced(dir.path(), kWrappersOnly, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "faketorch rank 0: done\n");
  ExpectSequence(ReadOnlyTrace(dir.path()), 0, false);
}

// The program's output and exit status do not change under the agent.
TEST(NcclInterpositionTest, ProgramsBehaveTheSameWithoutTheAgent) {
  TempDir dir;
  for (const std::string& command :
       {std::string(LINKED_WORKLOAD_PATH) + " 1",
        std::string(LOADER_WORKLOAD_PATH) + " default " FAKE_NCCL_PATH " 1",
        std::string(LOADER_WORKLOAD_PATH) + " torch " FAKETORCH_PATH " 1"}) {
    auto plain = RunCommand("LD_LIBRARY_PATH=" FAKE_NCCL_DIR " " + command);
    auto traced = RunTraced(dir.path(), "", command);
    EXPECT_EQ(plain.exit_code, 0) << command;
    EXPECT_EQ(traced.exit_code, plain.exit_code) << command;
    EXPECT_EQ(traced.out, plain.out) << command;
    EXPECT_EQ(traced.err, plain.err) << command;
  }
}

// Both routes (lumos-run's default): the plugin records each operation once, with GPU times,
// under NCCL's comm ids; the wrappers' Communicator records carry the same ids. That needs one
// agent state: had NCCL's dlopen of the plugin given a second copy of the agent, that copy would
// write its own Communicator records (4, not 2) and the wrappers would record collectives too.
TEST(NcclInterpositionTest, PluginAndWrappersTogetherRecordEachOperationOnce) {
  TempDir dir;
  auto r = RunTraced(dir.path(), "", std::string(LINKED_WORKLOAD_PATH) + " 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace trace = ReadOnlyTrace(dir.path());
  ExpectSequence(trace, 1, /*from_plugin=*/true);
  EXPECT_EQ(trace.nvtx, 2);
  ASSERT_EQ(trace.communicators.size(), 2u);
  for (const auto& c : trace.collectives) EXPECT_NE(FindComm(trace, c.comm_id()), nullptr);
  EXPECT_EQ(trace.cuda_never_initialized, 2);  // Both CUPTI channels; nothing else is lost.
  EXPECT_TRUE(trace.loss.empty());
}

// Two ranks agree on every comm id and seq number, both with and without the plugin.
TEST(NcclInterpositionTest, RanksAgreeOnCommIdsAndSeqNumbers) {
  for (const std::string& env : {std::string(""), kWrappersOnly}) {
    TempDir dir0, dir1;
    ASSERT_EQ(RunTraced(dir0.path(), env, std::string(LINKED_WORKLOAD_PATH) + " 0").exit_code, 0);
    ASSERT_EQ(RunTraced(dir1.path(), env, std::string(LINKED_WORKLOAD_PATH) + " 2").exit_code, 0);
    Trace rank0 = ReadOnlyTrace(dir0.path()), rank2 = ReadOnlyTrace(dir1.path());
    ASSERT_EQ(rank0.communicators.size(), 2u);
    ASSERT_EQ(rank2.communicators.size(), 2u);
    // World is shared; ranks 0 and 2 land in the same half (color 0).
    EXPECT_EQ(rank0.communicators[0].comm_id(), rank2.communicators[0].comm_id()) << env;
    EXPECT_EQ(rank0.communicators[1].comm_id(), rank2.communicators[1].comm_id()) << env;
    std::set<std::tuple<uint64_t, int, uint64_t>> keys0, keys2;
    for (const auto& c : rank0.collectives) keys0.insert({c.comm_id(), c.op(), c.seq_number()});
    for (const auto& c : rank2.collectives) keys2.insert({c.comm_id(), c.op(), c.seq_number()});
    EXPECT_EQ(keys0, keys2) << env;
  }
}

// The plugin alone, as NCCL 2.28 (v5) and 2.27 (v4) load it.
TEST(NcclInterpositionTest, PluginAloneRecordsV5AndV4) {
  for (const char* version : {"5", "4"}) {
    TempDir dir;
    auto r = RunTraced(
        dir.path(), std::string("LUMOS_CHANNELS=nccl_plugin FAKE_NCCL_PROFILER_VERSION=") + version,
        std::string(LINKED_WORKLOAD_PATH) + " 1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace trace = ReadOnlyTrace(dir.path());
    ASSERT_EQ(trace.collectives.size(), 13u) << version;
    ASSERT_EQ(trace.communicators.size(), 2u) << version;
    EXPECT_EQ(trace.communicators[0].name(), "world");
    EXPECT_EQ(trace.communicators[0].rank(), 1);
    for (const auto& c : trace.collectives) {
      EXPECT_NE(FindComm(trace, c.comm_id()), nullptr);
      const bool p2p = c.op() == pb::COLLECTIVE_OP_SEND || c.op() == pb::COLLECTIVE_OP_RECV;
      EXPECT_EQ(c.gpu_duration_ns(), p2p ? 5000u : 5100u) << version << c.ShortDebugString();
      // Only v5 has API events, so only v5 knows the user's stream.
      EXPECT_EQ(c.stream_id(), version[0] == '5' ? 0x5000u : 0u);
      if (!p2p) {
        EXPECT_EQ(c.algorithm(),
                  version[0] == '5' ? pb::NCCL_ALGORITHM_RING : pb::NCCL_ALGORITHM_TREE);
      }
    }
  }
}

// A one-rank communicator beside a 4-rank one: NCCL 2.28 gives the one-rank all-reduce an API
// event and no Coll event. Each route and both together record each all-reduce exactly once,
// with the reduce op wherever the wrapper ran; v4 (no API events) leaves the one-rank
// communicator to the wrappers.
TEST(NcclInterpositionTest, OneRankCommunicatorIsRecordedOnceByEveryRoute) {
  for (const std::string& env :
       {std::string(""), kWrappersOnly, std::string("LUMOS_CHANNELS=nccl_plugin"),
        std::string("FAKE_NCCL_PROFILER_VERSION=4")}) {
    TempDir dir;
    auto r = RunTraced(dir.path(), env, std::string(LINKED_WORKLOAD_PATH) + " initrank 0/1 1/4");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace trace = ReadOnlyTrace(dir.path());
    ASSERT_EQ(trace.communicators.size(), 2u) << env;
    ASSERT_EQ(trace.collectives.size(), 2u) << env;
    std::set<uint64_t> comms;
    for (const auto& c : trace.collectives) {
      const pb::Communicator* comm = FindComm(trace, c.comm_id());
      ASSERT_NE(comm, nullptr) << env << c.ShortDebugString();
      comms.insert(c.comm_id());
      EXPECT_EQ(c.op(), pb::COLLECTIVE_OP_ALL_REDUCE);
      EXPECT_EQ(c.seq_number(), 0u);
      EXPECT_EQ(c.bytes(), 16u);
      EXPECT_EQ(c.comm_size(), comm->comm_size());
      if (env != "LUMOS_CHANNELS=nccl_plugin") {
        EXPECT_EQ(c.reduce_op(), pb::REDUCE_OP_SUM) << env;
      }
    }
    EXPECT_EQ(comms.size(), 2u) << env;
    EXPECT_TRUE(trace.loss.empty()) << env;
  }
}

// More live communicators than the plugin has contexts (256): the plugin keeps NCCL's shared
// activation mask for the others, and the wrappers record the calls it does not see.
TEST(NcclInterpositionTest, CommunicatorsBeyondThePluginsContextsAreRecorded) {
  std::string pairs;
  for (int i = 0; i < 260; ++i) pairs += " 1/2";
  TempDir dir;
  auto r = RunTraced(dir.path(), "", std::string(LINKED_WORKLOAD_PATH) + " initrank" + pairs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace trace = ReadOnlyTrace(dir.path());
  EXPECT_EQ(trace.communicators.size(), 260u);
  ASSERT_EQ(trace.collectives.size(), 260u);
  std::set<uint64_t> comms;
  int with_gpu_time = 0;
  for (const auto& c : trace.collectives) {
    comms.insert(c.comm_id());
    with_gpu_time += c.gpu_duration_ns() != 0 ? 1 : 0;
  }
  EXPECT_EQ(comms.size(), 260u);
  EXPECT_EQ(with_gpu_time, 256);  // The plugin's; the other 4 are the wrappers'.
  EXPECT_EQ(trace.loss["NCCL communicators beyond the profiler's table"], 4u);
}

// The job exits without ncclCommDestroy while an operation still waits for a kernel channel
// NCCL announced and never reported: written at the final flush, with what it has.
TEST(NcclInterpositionTest, PendingOperationsAreWrittenWhenTheJobExitsWithoutDestroy) {
  TempDir dir;
  auto r = RunTraced(dir.path(), "LUMOS_CHANNELS=nccl_plugin FAKE_NCCL_MISSING_KERNELCH=1",
                     std::string(LINKED_WORKLOAD_PATH) + " initrank nodestroy 1/4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace trace = ReadOnlyTrace(dir.path());
  ASSERT_EQ(trace.collectives.size(), 1u);
  EXPECT_EQ(trace.collectives[0].channels(), 3u);            // Announced.
  EXPECT_EQ(trace.collectives[0].gpu_duration_ns(), 5100u);  // The 2 channels reported.
}

// ncclCommInitRankScalable and ncclCommShrink (NCCL 2.28): ranks agree on both ids, the shrunk
// communicator names its parent; Finalize and Revoke pass through.
TEST(NcclInterpositionTest, ScalableInitAndShrinkGetIdsEqualOnAllRanks) {
  for (const std::string& env : {std::string(""), kWrappersOnly}) {
    std::vector<Trace> traces;
    for (int rank : {0, 1}) {
      TempDir dir;
      auto r = RunTraced(dir.path(), env,
                         std::string(LINKED_WORKLOAD_PATH) + " scalable " + std::to_string(rank));
      ASSERT_EQ(r.exit_code, 0) << env << r.err;
      EXPECT_EQ(r.out, "scalable workload rank " + std::to_string(rank) + ": done\n");
      EXPECT_EQ(r.err, "");
      traces.push_back(ReadOnlyTrace(dir.path()));
      const Trace& trace = traces.back();
      ASSERT_EQ(trace.communicators.size(), 2u) << env;
      const pb::Communicator& world = trace.communicators[0];
      const pb::Communicator& shrunk = trace.communicators[1];
      EXPECT_EQ(world.name(), "scalable");
      EXPECT_EQ(world.rank(), rank);
      EXPECT_EQ(world.comm_size(), 4u);
      EXPECT_EQ(shrunk.rank(), rank);
      EXPECT_EQ(shrunk.comm_size(), 3u);
      EXPECT_EQ(shrunk.parent_comm_id(), world.comm_id());
      EXPECT_NE(shrunk.comm_id(), world.comm_id());
      ASSERT_EQ(trace.collectives.size(), 2u) << env;
      EXPECT_EQ(trace.collectives[0].comm_id(), world.comm_id());
      EXPECT_EQ(trace.collectives[1].comm_id(), shrunk.comm_id());
      EXPECT_EQ(trace.collectives[1].reduce_op(), pb::REDUCE_OP_MAX);
    }
    ASSERT_EQ(traces.size(), 2u);
    EXPECT_EQ(traces[0].communicators[0].comm_id(), traces[1].communicators[0].comm_id()) << env;
    EXPECT_EQ(traces[0].communicators[1].comm_id(), traces[1].communicators[1].comm_id()) << env;
  }
}

// A communicator created inside ncclGroupStart/End (XLA): NCCL runs the plugin's init at
// ncclGroupEnd on another thread, where the wrapper cannot see it. The first call links them:
// one Communicator record, with NCCL's id (the plugin's alone gives the same) and the wrapper's
// device, and the collective under that id.
TEST(NcclInterpositionTest, GroupedInitGetsOneCommunicatorRecordWithNcclsId) {
  // v5 (NCCL 2.28) links at the call's API event; v4 (2.27) has none and links at the Coll
  // event of the first ungrouped call (the workload's all-reduce).
  for (const std::string version : {"", "FAKE_NCCL_PROFILER_VERSION=4 "}) {
    SCOPED_TRACE(version.empty() ? "v5" : "v4");
    TempDir plugin_dir;
    ASSERT_EQ(RunTraced(plugin_dir.path(), version + "LUMOS_CHANNELS=nccl_plugin",
                        std::string(LINKED_WORKLOAD_PATH) + " initrank grouped 1/4")
                  .exit_code,
              0);
    Trace plugin_only = ReadOnlyTrace(plugin_dir.path());
    ASSERT_EQ(plugin_only.communicators.size(), 1u);
    const uint64_t nccl_id = plugin_only.communicators[0].comm_id();

    TempDir dir;
    auto r =
        RunTraced(dir.path(), version, std::string(LINKED_WORKLOAD_PATH) + " initrank grouped 1/4");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace trace = ReadOnlyTrace(dir.path());
    ASSERT_EQ(trace.communicators.size(), 1u);
    EXPECT_EQ(trace.communicators[0].comm_id(), nccl_id);
    EXPECT_EQ(trace.communicators[0].rank(), 1);
    EXPECT_EQ(trace.communicators[0].comm_size(), 4u);
    EXPECT_EQ(trace.communicators[0].device_id(), 1u);  // Known to the wrapper only.
    ASSERT_EQ(trace.collectives.size(), 1u);
    EXPECT_EQ(trace.collectives[0].comm_id(), nccl_id);
    EXPECT_EQ(trace.collectives[0].gpu_duration_ns(), 5100u);  // The plugin's record.
    EXPECT_EQ(trace.collectives[0].reduce_op(), pb::REDUCE_OP_SUM);
  }
}

// Channels off: pure pass-through, no NCCL record at all.
TEST(NcclInterpositionTest, DisabledChannelsPassThrough) {
  TempDir dir;
  auto r = RunTraced(dir.path(), "LUMOS_CHANNELS=nvtx", std::string(LINKED_WORKLOAD_PATH) + " 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "linked workload rank 1: done\n");
  Trace trace = ReadOnlyTrace(dir.path());
  EXPECT_TRUE(trace.collectives.empty());
  EXPECT_TRUE(trace.communicators.empty());
  EXPECT_EQ(trace.nvtx, 2);
}

// No libnccl anywhere: the wrapper returns ncclSystemError (2) and warns once.
TEST(NcclInterpositionTest, UnresolvableFunctionReturnsAnErrorWithOneWarning) {
  TempDir dir;
  auto r = RunTraced(dir.path(), "", std::string(LOADER_WORKLOAD_PATH) + " unresolved");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "ncclAllReduce returned 2\nncclAllReduce returned 2\nncclAllReduce returned 2\n");
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // Exactly one line.
  EXPECT_NE(r.err.find("ncclAllReduce not found"), std::string::npos) << r.err;
}

// A failed call is counted, not recorded.
TEST(NcclInterpositionTest, FailedCallsAreCountedNotRecorded) {
  TempDir dir;
  auto r = RunTraced(dir.path(), kWrappersOnly + " FAKE_NCCL_FAIL_ALLREDUCE=1",
                     std::string(LINKED_WORKLOAD_PATH) + " 1");
  EXPECT_EQ(r.exit_code, 2);  // The sequence stops at its first all-reduce.
  Trace trace = ReadOnlyTrace(dir.path());
  EXPECT_TRUE(trace.collectives.empty());
  EXPECT_EQ(trace.loss["NCCL calls that returned an error (not recorded)"], 1u);
}

// NVTX and NCCL in one trace, as `lumos-model inspect` reports it.
TEST(NcclInterpositionTest, InspectCountsNvtxAndNcclPackets) {
  TempDir dir;
  ASSERT_EQ(RunTraced(dir.path(), "", std::string(LINKED_WORKLOAD_PATH) + " 1").exit_code, 0);
  auto r = RunCommand(::lumos::testing::LumosModelBinary() + " inspect " + dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("collective 13 communicator 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nvtx 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("communicators 2"), std::string::npos) << r.out;
  // No cuInit here: only the CUPTI channels' "never started" records.
  EXPECT_NE(r.out.find("loss       2 events: channel_failed 2\n"), std::string::npos) << r.out;
}

// lumos-run keeps a profiler plugin the user chose, and says so once.
TEST(NcclInterpositionTest, LumosRunKeepsTheUsersProfilerPlugin) {
  TempDir dir;
  auto r = RunTraced(dir.path(), "NCCL_PROFILER_PLUGIN=/nonexistent/libmine.so",
                     std::string(LINKED_WORKLOAD_PATH) + " 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("NCCL_PROFILER_PLUGIN=/nonexistent/libmine.so kept"), std::string::npos);
  ExpectSequence(ReadOnlyTrace(dir.path()), 1, /*from_plugin=*/false);  // The wrappers' records.
}

// ---- the trace's rank from the NCCL world communicator ----

// No launcher rank anywhere, whatever the test's own environment holds.
const std::string kNoLauncherRank =
    "env -u RANK -u LOCAL_RANK -u WORLD_SIZE -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_LOCAL_RANK "
    "-u OMPI_COMM_WORLD_SIZE -u SLURM_PROCID -u SLURM_LOCALID -u SLURM_NTASKS";

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The one trace in `dir` must be named after rank `rank` and carry rank/world in its trailer.
Trace ExpectCommunicatorRank(const std::string& dir, int rank, int world_size) {
  std::vector<std::string> files = ListPaths(dir);
  EXPECT_EQ(files.size(), 1u);
  if (files.size() == 1) {
    EXPECT_TRUE(EndsWith(files[0], ".rank" + std::to_string(rank) + ".pb.zst")) << files[0];
  }
  Trace trace = ReadOnlyTrace(dir);  // Readable to its trailer, no damage.
  EXPECT_TRUE(trace.read.trailer.has_rank());
  EXPECT_EQ(trace.read.trailer.rank(), rank);
  EXPECT_TRUE(trace.read.trailer.has_world_size());
  EXPECT_EQ(trace.read.trailer.world_size(), world_size);
  return trace;
}

// ncclCommInitRank(nranks=4, rank=2) in a process without a launcher rank: the file the agent
// opened as "norank" is renamed to rank2 at the close, silently; the header still says what the
// environment said (nothing), the trailer says 2 of 4. Communicators of 2, then 4, then another
// 4: the largest and, of equal ones, the first decides.
TEST(NcclInterpositionTest, WorldCommunicatorNamesTheTraceWithoutALauncherRank) {
  TempDir dir;
  auto r = RunTraced(dir.path(), kWrappersOnly + " " + kNoLauncherRank,
                     std::string(LINKED_WORKLOAD_PATH) + " initrank 1/2 2/4 3/4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "initrank workload: 3 communicators\n");
  EXPECT_EQ(r.err, "");
  Trace trace = ExpectCommunicatorRank(dir.path(), 2, 4);
  EXPECT_FALSE(trace.header.has_rank());
  EXPECT_FALSE(trace.header.has_world_size());
  EXPECT_EQ(trace.communicators.size(), 3u);
  EXPECT_EQ(trace.collectives.size(), 3u);
  // The renamed file is what `lumos-model inspect` reads.
  auto inspect = RunCommand(::lumos::testing::LumosModelBinary() + " inspect " + dir.path());
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find(".rank2.pb.zst"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("collective 3 communicator 3"), std::string::npos) << inspect.out;
}

// The plugin alone sees communicators too (NCCL's init passes it rank and size).
TEST(NcclInterpositionTest, PluginAloneAlsoNamesTheTraceAfterTheWorldCommunicator) {
  TempDir dir;
  auto r = RunTraced(dir.path(), "LUMOS_CHANNELS=nccl_plugin " + kNoLauncherRank,
                     std::string(LINKED_WORKLOAD_PATH) + " 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  Trace trace = ExpectCommunicatorRank(dir.path(), 3, 4);
  EXPECT_EQ(trace.collectives.size(), 13u);
}

// A launcher rank that disagrees with a communicator of the launcher's world size: the
// communicator wins (name and trailer), the header keeps what the environment said, and one
// warning names both.
TEST(NcclInterpositionTest, WorldCommunicatorWinsOverADisagreeingLauncherRank) {
  TempDir dir;
  auto r = RunTraced(dir.path(), kWrappersOnly + " " + kNoLauncherRank + " RANK=5 WORLD_SIZE=8",
                     std::string(LINKED_WORKLOAD_PATH) + " initrank 2/8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // Exactly one line.
  EXPECT_NE(r.err.find("RANK=5 (world size 8)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rank 2 of 8"), std::string::npos) << r.err;
  Trace trace = ExpectCommunicatorRank(dir.path(), 2, 8);
  EXPECT_EQ(trace.header.rank(), 5);
  EXPECT_EQ(trace.header.world_size(), 8);
  auto inspect = RunCommand(::lumos::testing::LumosModelBinary() + " inspect " + dir.path());
  EXPECT_NE(inspect.out.find("rank 5 / 8 (NCCL 2 / 8)"), std::string::npos) << inspect.out;
}

// Communicators smaller than the launcher's world are sub-groups (tensor, data, pipeline
// parallel) of a job whose world communicator never ran in this process: their rank is not the
// global one, so the launcher's stays (name, no trailer rank) and nothing is said.
TEST(NcclInterpositionTest, SubGroupCommunicatorsLeaveTheLauncherRank) {
  TempDir dir;
  auto r = RunTraced(dir.path(), kWrappersOnly + " " + kNoLauncherRank + " RANK=5 WORLD_SIZE=8",
                     std::string(LINKED_WORKLOAD_PATH) + " initrank 1/2 2/4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> files = ListPaths(dir.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(EndsWith(files[0], ".rank5.pb.zst")) << files[0];
  Trace trace = ReadOnlyTrace(dir.path());
  EXPECT_EQ(trace.header.rank(), 5);
  EXPECT_FALSE(trace.read.trailer.has_rank());
  EXPECT_FALSE(trace.read.trailer.has_world_size());
}

// A relative output directory (the default ".") and a job that changes directory before it
// exits: the agent's rename at the close still finds its file.
TEST(NcclInterpositionTest, RenameAtTheCloseSurvivesAChangeOfDirectory) {
  TempDir dir;
  auto r = RunCommand("cd " + dir.path() +
                      " && LD_LIBRARY_PATH=" FAKE_NCCL_DIR " LUMOS_FLUSH_INTERVAL_MS=10 " +
                      kWrappersOnly + " " + kNoLauncherRank + " LUMOS_OUTPUT_DIR=. " +
                      LUMOS_RUN_PATH + " -- " + LINKED_WORKLOAD_PATH + " initrank chdir 2/4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ExpectCommunicatorRank(dir.path(), 2, 4);
}

// A launcher rank that agrees: same name as before, no warning, and the trailer confirms it.
TEST(NcclInterpositionTest, AgreeingLauncherRankKeepsItsName) {
  TempDir dir;
  auto r = RunTraced(dir.path(), kWrappersOnly + " " + kNoLauncherRank + " RANK=2 WORLD_SIZE=4",
                     std::string(LINKED_WORKLOAD_PATH) + " initrank 2/4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  Trace trace = ExpectCommunicatorRank(dir.path(), 2, 4);
  EXPECT_EQ(trace.header.rank(), 2);
}

// A file already at the new name is never replaced: the trace keeps its norank name (whole and
// readable), the other file its bytes, and one warning says why.
TEST(NcclInterpositionTest, ExistingFileAtTheCommunicatorsNameIsNotOverwritten) {
  TempDir dir;
  auto r = RunTraced(dir.path(), kWrappersOnly + " " + kNoLauncherRank,
                     std::string(LINKED_WORKLOAD_PATH) + " initrank squat 2/4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // Exactly one line.
  EXPECT_NE(r.err.find("not renamed"), std::string::npos) << r.err;
  std::vector<std::string> files = ListPaths(dir.path());
  ASSERT_EQ(files.size(), 2u);
  std::string trace_path, squatter_path;
  for (const std::string& file : files) {
    (EndsWith(file, ".norank.pb.zst") ? trace_path : squatter_path) = file;
  }
  ASSERT_FALSE(trace_path.empty());
  ASSERT_TRUE(EndsWith(squatter_path, ".rank2.pb.zst")) << squatter_path;
  auto squatter = RunCommand("cat " + squatter_path);
  EXPECT_EQ(squatter.out, "squatter\n");
  auto reader = modeler::TraceReader::Open(trace_path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  modeler::ReadResult read;
  ASSERT_TRUE((*reader)
                  ->ReadPackets([](const pb::TracePacket&,
                                   const modeler::PacketContext&) { return Status::Ok(); },
                                &read)
                  .ok());
  EXPECT_TRUE(read.has_trailer);
  EXPECT_TRUE(read.damage.ok()) << read.damage.message();
  EXPECT_EQ(read.trailer.rank(), 2);  // Readers still learn the rank.
  EXPECT_EQ(read.trailer.world_size(), 4);
}

}  // namespace
}  // namespace lumos::agent
