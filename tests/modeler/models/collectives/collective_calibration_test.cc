// Calibration points from the real measured tables, from the real 8-rank DLRM trace
// (examples/dlrm-8rank) and from small jobs built in memory; bad tables are one clear error.
#include "modeler/models/collectives/collective_calibration.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/trace/trace_set.h"
#include "tests/modeler/models/collectives/collective_test_util.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::models {
namespace {

using schema::CollectiveOp;
using schema::DataType;
using schema::NcclAlgorithm;
using schema::NcclProtocol;

TEST(CollectiveTableTest, ReadsTheH100Table) {
  const CalibrationSet set = testing::Table("nccl_h100.csv");
  ASSERT_EQ(set.points.size(), 504u);  // The data README's row count.
  ASSERT_EQ(set.origins, std::vector<std::string>{"nccl_h100.csv (H100-SXM5-80GB)"});
  std::map<CollectiveOp, size_t> by_op;
  for (const CalibrationPoint& p : set.points) ++by_op[p.op];
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                          CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll}) {
    EXPECT_EQ(by_op[op], 126u);
  }
  // The data README's check: 8x H100 all_reduce of 268,435,456 halves takes 2,111 µs.
  const auto row = std::find_if(set.points.begin(), set.points.end(), [](const auto& p) {
    return p.op == CollectiveOp::kAllReduce && p.data_type == DataType::kFloat16 && p.ranks == 8 &&
           p.bytes == 536870912;
  });
  ASSERT_NE(row, set.points.end());
  EXPECT_EQ(row->time_ns / 1000, 2111);
  EXPECT_EQ(row->nodes, 0u);  // The table does not say.
}

class BadTableTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    std::string path = dir_.File("table.csv");
    std::ofstream(path) << text;
    return path;
  }
  std::string Error(const std::string& text) {
    StatusOr<CalibrationSet> set = ReadCollectiveTable(Write(text));
    EXPECT_FALSE(set.ok());
    return set.ok() ? "" : set.status().message();
  }
  lumos::testing::TempDir dir_;
};

TEST_F(BadTableTest, EachProblemIsOneLineNamingFileAndLine) {
  const std::string header = "gpu,op,dtype,ranks,elements,bytes,latency_us\n";
  const std::string path = dir_.File("table.csv");
  // One reader for the measured tables, `costs fit` and its queries (ReadCollectiveRows).
  EXPECT_EQ(Error("gpu,op,dtype,ranks,elements,latency_us\n"),
            path + ": not a collective table (needs op, dtype, ranks and bytes columns)");
  EXPECT_EQ(Error("op,dtype,ranks,bytes,latency_us\n"),
            path + ": a measured collective table needs gpu and latency_us columns");
  EXPECT_EQ(Error(header + "H100,all_reduce,half,2,256,512,5.31\nH100,all_reduce,half,2,256,512\n"),
            path + ":3: 6 fields, the header has 7");
  EXPECT_EQ(Error(header + "H100,all_whatever,half,2,256,512,5.31\n"),
            path +
                ":2: op: unknown 'all_whatever' (all_reduce, all_gather, reduce_scatter, "
                "alltoall, broadcast, reduce, send, recv, sendrecv)");
  EXPECT_EQ(Error(header + "H100,all_reduce,quarter,2,256,512,5.31\n"),
            path +
                ":2: dtype: unknown 'quarter' (half, bfloat16, float, double, int8, uint8, "
                "int32, uint32, int64, uint64, fp8, e5m2)");
  EXPECT_EQ(Error(header + "H100,all_reduce,half,two,256,512,5.31\n"),
            path + ":2: ranks: 'two' must be a whole number > 0");
  EXPECT_EQ(Error(header + "H100,all_reduce,half,2,256,0,5.31\n"),
            path + ":2: bytes: '0' must be a whole number > 0");
  EXPECT_EQ(Error(header + "H100,all_reduce,half,2,256,512,-1\n"),
            path + ":2: latency_us: '-1' must be a number of µs > 0");
  EXPECT_EQ(Error(header + "H100,all_reduce,half,2,256,512,nan\n"),
            path + ":2: latency_us: 'nan' must be a number of µs > 0");
  EXPECT_EQ(Error(header + "H100,all_reduce,half,2,256,1024,5.31\n"),
            path + ":2: bytes 1024 is not elements 256 x 2 (half)");
  EXPECT_EQ(Error(""), path + ": empty (no header line)");
  // Not a regular file: refused before reading (a FIFO would block).
  const std::string fifo = dir_.File("fifo.csv");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  StatusOr<CalibrationSet> set = ReadCollectiveTable(fifo);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message().rfind(fifo + ": not a regular file", 0), 0u)
      << set.status().message();
  // A missing file names itself.
  StatusOr<CalibrationSet> missing = ReadCollectiveTable(dir_.File("none.csv"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message().rfind(dir_.File("none.csv"), 0), 0u);
}

TEST_F(BadTableTest, OptionalColumnsAndSpellings) {
  StatusOr<CalibrationSet> set = ReadCollectiveTable(
      Write("op,dtype,gpu,ranks,nodes,bytes,latency_us\r\nallreduce,bf16,B200,16,2,1024,12.5\r\n"
            "\r\nsendrecv,fp8,H100,2,1,64,3\r\n"));
  ASSERT_TRUE(set.ok()) << set.status().message();
  ASSERT_EQ(set->points.size(), 2u);
  EXPECT_EQ(set->origins, (std::vector<std::string>{"table.csv (B200)", "table.csv (H100)"}));
  EXPECT_EQ(set->points[1].origin, 1u);
  EXPECT_EQ(set->points[0].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(set->points[0].data_type, DataType::kBfloat16);
  EXPECT_EQ(set->points[0].nodes, 2u);
  EXPECT_EQ(set->points[0].time_ns, 12500);
  EXPECT_EQ(set->points[1].op, CollectiveOp::kSendRecv);
  EXPECT_EQ(set->points[1].data_type, DataType::kFloat8E4m3);
}

// The real DLRM trace: 8 V100 ranks, 5 all_to_all (one SendRecv kernel on every rank) and 3
// all-reduces each; PyTorch's profiler of 2023 recorded no message sizes.
TEST(JobCalibrationTest, TheDlrmTraceGivesEveryCollectiveWithTheReplaysTransfer) {
  const std::string dir = std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank";
  StatusOr<std::vector<std::string>> files = ExpandTracePaths({dir});
  ASSERT_TRUE(files.ok()) << files.status().message();
  StatusOr<Job> job = LoadJob(*files);
  ASSERT_TRUE(job.ok()) << job.status().message();
  JobCalibrationStats stats;
  const CalibrationSet set = CalibrationFromJob(*job, &stats);
  EXPECT_EQ(set.origins, std::vector<std::string>{"job dlrm_kineto"});
  // The graph the replay uses, built independently: a point for each of its operations with a
  // transfer time, that time, in the same order. Two all_to_all end on one rank before they
  // start on another (the imported clocks disagree by tens of µs): the replay gives them no
  // transfer time, and they calibrate nothing.
  const ExecutionGraph graph = BuildGraph(*job, AlignClocks(*job).rank_offset_ns);
  ASSERT_EQ(graph.collectives.size(), 8u);
  EXPECT_EQ(stats.operations, 8u);
  EXPECT_EQ(stats.no_transfer, graph.stats.collectives_inconsistent);
  EXPECT_EQ(stats.no_transfer, 2u);
  EXPECT_EQ(stats.points + stats.no_transfer, stats.operations);
  ASSERT_EQ(set.points.size(), stats.points);
  std::map<CollectiveOp, int> ops;
  std::vector<uint32_t> channels;
  size_t i = 0;
  for (const CollectiveGroup& g : graph.collectives) {
    if (g.transfer_ns <= 0) continue;
    ASSERT_LT(i, set.points.size());
    const CalibrationPoint& p = set.points[i++];
    ++ops[p.op];
    channels.push_back(p.channels);
    EXPECT_EQ(p.ranks, 8u);
    EXPECT_EQ(p.nodes, 0u);  // The imported ranks name no host.
    EXPECT_EQ(p.bytes, 0u);
    EXPECT_EQ(p.algorithm, NcclAlgorithm::kRing);
    EXPECT_EQ(p.time_ns, g.transfer_ns);
    for (uint32_t node : g.nodes) EXPECT_LE(p.time_ns, graph.nodes[node].duration_ns);
    if (p.op == CollectiveOp::kAllToAll) {
      EXPECT_EQ(p.protocol, NcclProtocol::kSimple);
    } else {
      EXPECT_EQ(p.op, CollectiveOp::kAllReduce);
      EXPECT_EQ(p.protocol, NcclProtocol::kLl);
      EXPECT_EQ(p.data_type, DataType::kFloat32);
    }
  }
  EXPECT_EQ(i, set.points.size());
  EXPECT_EQ(ops[CollectiveOp::kAllToAll], 3);
  EXPECT_EQ(ops[CollectiveOp::kAllReduce], 3);
  // The kernels' grids: 8 channels for the SendRecv kernels, 12, 1 and 12 for the all-reduces.
  EXPECT_EQ(channels, (std::vector<uint32_t>{8, 8, 8, 12, 1, 12}));
  // Without sizes they calibrate nothing, and say so.
  CollectiveFabric v100;
  v100.name = "V100-SXM2 (NVLink 2)";
  v100.intra_bandwidth_gbps = 150;
  CollectiveFitReport report;
  StatusOr<CollectiveModel> model = FitCollectiveModel(set, v100, &report);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(report.no_size, set.points.size());
  EXPECT_TRUE(model->measurements.empty());
}

// A job in memory: on each rank one NCCL kernel launched by an API call and its record.
class InMemoryJob {
 public:
  void Rank(int32_t rank, const std::string& host, int64_t kernel_start_ns, int64_t kernel_ns) {
    RankTrace t;
    t.rank = rank;
    t.world_size = 2;
    t.host = host;
    t.path = "rank" + std::to_string(rank);
    schema::ApiCallEvent api;
    api.start_ns = kernel_start_ns - 5000;
    api.duration_ns = 3000;
    api.thread_id = 1;
    api.correlation_id = 7;
    api.kind = schema::ApiKind::kLaunchKernel;
    api.name = job_.names.Intern("cudaLaunchKernel");
    api.stream_id = 3;
    t.api_calls.push_back(api);
    schema::KernelEvent k;
    k.start_ns = kernel_start_ns;
    k.duration_ns = static_cast<uint64_t>(kernel_ns);
    k.correlation_id = 7;
    k.stream_id = 3;
    k.name = job_.names.Intern("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
    t.kernels.push_back(k);
    schema::CollectiveEvent c;
    c.start_ns = api.start_ns;
    c.duration_ns = api.duration_ns;
    c.comm_id = 42;
    c.seq_number = 0;
    c.op = CollectiveOp::kAllGather;
    c.count = 1024;
    c.data_type = DataType::kBfloat16;
    c.bytes = 2048;  // Per rank.
    c.stream_id = 3;
    c.correlation_id = 7;
    c.algorithm = NcclAlgorithm::kRing;
    c.protocol = NcclProtocol::kLl;
    c.channels = 2;
    c.comm_size = 2;
    t.collectives.push_back(c);
    job_.ranks.push_back(std::move(t));
  }
  Job& job() { return job_; }

 private:
  Job job_;
};

TEST(JobCalibrationTest, APointCarriesTheModelsSizeAndTheTransferAfterTheLastArrival) {
  InMemoryJob j;
  j.job().job_id = "two ranks";
  j.Rank(0, "node-a", 100'000, 30'000);  // Starts first: waits 10 µs for rank 1.
  j.Rank(1, "node-a", 110'000, 20'000);
  JobCalibrationStats stats;
  const CalibrationSet set = CalibrationFromJob(j.job(), &stats);
  ASSERT_EQ(set.points.size(), 1u);
  const CalibrationPoint& p = set.points[0];
  EXPECT_EQ(p.op, CollectiveOp::kAllGather);
  EXPECT_EQ(p.data_type, DataType::kBfloat16);
  EXPECT_EQ(p.ranks, 2u);
  EXPECT_EQ(p.nodes, 1u);
  EXPECT_EQ(p.bytes, 4096u);     // The gathered output: 2 ranks x 2048.
  EXPECT_EQ(p.time_ns, 20'000);  // From the later start to the (common) end.
  EXPECT_EQ(p.protocol, NcclProtocol::kLl);
  EXPECT_EQ(p.channels, 2u);
  // Two hosts: two nodes.
  InMemoryJob two;
  two.Rank(0, "node-a", 100'000, 30'000);
  two.Rank(1, "node-b", 110'000, 20'000);
  const CalibrationSet spread = CalibrationFromJob(two.job());
  ASSERT_EQ(spread.points.size(), 1u);
  EXPECT_EQ(spread.points[0].nodes, 2u);
  // One rank's record missing: incomplete, no point.
  InMemoryJob half;
  half.Rank(0, "node-a", 100'000, 30'000);
  half.Rank(1, "node-a", 110'000, 20'000);
  half.job().ranks[1].collectives.clear();
  JobCalibrationStats half_stats;
  EXPECT_TRUE(CalibrationFromJob(half.job(), &half_stats).points.empty());
  EXPECT_EQ(half_stats.incomplete, 1u);
}

}  // namespace
}  // namespace lumos::modeler::models
