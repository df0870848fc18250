// GPU time by class and copies by direction on every shared trace (kSharedTraces), each number
// recomputed the slow way from the raw events of the loaded job (not from the graph): for every
// iteration, every kernel, copy and memset whose aligned start lies in it, classed by its name
// (ClassifyKernel), by its collective record's op (a kernel a collective record names by
// correlation id, or an NCCL-named kernel), or by its copy kind. Integer sums must be equal.
// With measured durations the replay reproduces each op's duration, so replayed equals measured
// for every class but communication (whose waiting emerges).
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/models/kernels/kernel_class.h"
#include "modeler/replay/gpu_breakdown.h"
#include "modeler/sim/simulator.h"
#include "tests/testing/job_builder.h"
#include "tests/testing/param_names.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::TempDir;

struct Sum {
  uint64_t count = 0, bytes = 0;
  int64_t ns = 0;
};

const char* kOpNames[] = {
    "(op not recorded)", "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",
    "AllToAll",          "Send",      "Recv",      "SendRecv",      "Gather",    "Scatter"};

const char* kDirections[] = {
    "memcpy (direction not recorded)", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};

// The slow way: every op of rank `r` starting in [begin, end) on the aligned timeline.
void Recompute(const RankTrace& rank, int64_t offset, int64_t begin, int64_t end,
               std::map<std::string, Sum>* classes, std::map<std::string, Sum>* copies) {
  std::map<uint64_t, schema::CollectiveOp> op_of;  // By correlation id: the first record's.
  for (const schema::CollectiveEvent& c : rank.collectives)
    op_of.try_emplace(c.correlation_id, c.op);
  auto in = [&](int64_t start) { return start + offset >= begin && start + offset < end; };
  for (const schema::KernelEvent& k : rank.kernels) {
    if (!in(k.start_ns)) continue;
    const models::KernelClass kind = models::ClassifyKernel(k.name);
    std::string name;
    if (auto it = op_of.find(k.correlation_id); it != op_of.end()) {
      name = std::string("communication ") + kOpNames[static_cast<int>(it->second)];
    } else if (kind == models::KernelClass::kCommunication) {
      name = "communication (op not recorded)";
    } else {
      name = models::KernelClassName(kind);
    }
    Sum& s = (*classes)[name];
    ++s.count;
    s.ns += static_cast<int64_t>(k.duration_ns);
  }
  for (const schema::MemcpyEvent& m : rank.memcpys) {
    if (!in(m.start_ns)) continue;
    Sum& s = (*classes)["memcpy"];
    ++s.count;
    s.ns += static_cast<int64_t>(m.duration_ns);
    const auto kind = static_cast<size_t>(m.copy_kind);
    Sum& d = (*copies)[kind < 6 ? kDirections[kind] : kDirections[0]];
    ++d.count;
    d.bytes += m.bytes;
    d.ns += static_cast<int64_t>(m.duration_ns);
  }
  for (const schema::MemsetEvent& m : rank.memsets) {
    if (!in(m.start_ns)) continue;
    Sum& s = (*classes)["memset"];
    ++s.count;
    s.ns += static_cast<int64_t>(m.duration_ns);
    Sum& d = (*copies)["memset"];
    ++d.count;
    d.bytes += m.bytes;
    d.ns += static_cast<int64_t>(m.duration_ns);
  }
}

class RealTraceGpuBreakdownTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTraceGpuBreakdownTest, EveryNumberMatchesTheSlowWay) {
  TempDir dir;
  const auto replayed = testing::ReplaySharedTrace(GetParam(), dir.path());
  ASSERT_NE(replayed, nullptr);
  const Job* job = &replayed->job;  // With its raw events.
  const ExecutionGraph& graph = replayed->graph;
  const std::vector<IterationReport>& iterations = replayed->iterations;
  ASSERT_FALSE(iterations.empty());
  std::map<std::string, Sum> job_classes, job_copies;
  uint64_t ops = 0;
  for (const IterationReport& it : iterations) {
    const std::string where = "rank " + std::to_string(it.rank) + " " + it.name;
    size_t r = 0;
    while (r < job->ranks.size() && job->ranks[r].rank != it.rank) ++r;
    ASSERT_LT(r, job->ranks.size()) << where;
    std::map<std::string, Sum> classes, copies;
    Recompute(job->ranks[r], graph.rank_offset_ns[r], it.measured_start_ns, it.measured_end_ns,
              &classes, &copies);
    ASSERT_EQ(it.gpu_classes.size(), classes.size()) << where;
    for (const ClassTime& c : it.gpu_classes) {
      const Sum& s = classes[c.name];
      EXPECT_EQ(c.count, s.count) << where << ": " << c.name;
      EXPECT_EQ(c.measured_ns, s.ns) << where << ": " << c.name;
      if (std::string_view(c.name).rfind("communication", 0) != 0) {
        EXPECT_EQ(c.replayed_ns, c.measured_ns) << where << ": " << c.name;
      }
      Sum& j = job_classes[c.name];
      j.count += s.count;
      j.ns += s.ns;
      ops += c.count;
    }
    ASSERT_EQ(it.copies.size(), copies.size()) << where;
    for (const CopyTime& c : it.copies) {
      const Sum& s = copies[c.direction];
      EXPECT_EQ(c.count, s.count) << where << ": " << c.direction;
      EXPECT_EQ(c.bytes, s.bytes) << where << ": " << c.direction;
      EXPECT_EQ(c.measured_ns, s.ns) << where << ": " << c.direction;
      Sum& j = job_copies[c.direction];
      j.count += s.count;
      j.bytes += s.bytes;
      j.ns += s.ns;
    }
  }
  EXPECT_GT(ops, 0u);
  // The job's sums: the iterations' slow-way sums.
  std::vector<ClassTime> classes;
  SumClassesPerRank(iterations, &classes);
  ASSERT_EQ(classes.size(), job_classes.size());
  for (const ClassTime& c : classes) {
    EXPECT_EQ(c.count, job_classes[c.name].count) << c.name;
    EXPECT_EQ(c.measured_ns, job_classes[c.name].ns) << c.name;
  }
  std::vector<CopyTime> copies;
  SumCopiesPerRank(iterations, &copies);
  ASSERT_EQ(copies.size(), job_copies.size());
  std::string directions;
  for (const CopyTime& c : copies) {
    EXPECT_EQ(c.bytes, job_copies[c.direction].bytes) << c.direction;
    EXPECT_EQ(c.measured_ns, job_copies[c.direction].ns) << c.direction;
    directions += " " + std::string(c.direction) + " " + std::to_string(c.count);
  }
  // What was checked (docs/validation.md quotes it).
  std::printf("gpu classes %s: %zu iterations, %" PRIu64 " GPU ops in %zu classes; copies:%s\n",
              GetParam(), iterations.size(), ops, classes.size(), directions.c_str());
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealTraceGpuBreakdownTest,
                         ::testing::ValuesIn(lumos::testing::kSharedTraces),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return ::lumos::testing::TraceParamName(info.param);
                         });

}  // namespace
}  // namespace lumos::modeler
