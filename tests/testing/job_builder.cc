#include "tests/testing/job_builder.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>

#include "modeler/graph/clock_alignment.h"
#include "modeler/import/kineto_import.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler::testing {

RankBuilder::RankBuilder(Job* job, int32_t rank, int32_t world_size) : job_(job) {
  RankTrace trace;
  trace.rank = rank;
  trace.world_size = world_size;
  trace.host = "host";
  trace.path = "rank" + std::to_string(rank);
  job_->ranks.push_back(std::move(trace));
  index_ = job_->ranks.size() - 1;
}

RankTrace& RankBuilder::trace() { return job_->ranks[index_]; }

RankBuilder& RankBuilder::Api(schema::ApiKind kind, std::string_view name, int64_t start_us,
                              int64_t duration_us, uint64_t correlation, uint64_t stream,
                              uint64_t event, uint32_t thread) {
  schema::ApiCallEvent e;
  e.start_ns = start_us * kUs;
  e.duration_ns = static_cast<uint64_t>(duration_us * kUs);
  e.thread_id = thread;
  e.correlation_id = correlation;
  e.kind = kind;
  e.name = job_->names.Intern(name);
  e.stream_id = stream;
  e.event_id = event;
  trace().api_calls.push_back(e);
  return *this;
}

RankBuilder& RankBuilder::Kernel(std::string_view name, uint64_t stream, int64_t start_us,
                                 int64_t duration_us, uint64_t correlation) {
  schema::KernelEvent k;
  k.start_ns = start_us * kUs;
  k.duration_ns = static_cast<uint64_t>(duration_us * kUs);
  k.correlation_id = correlation;
  k.stream_id = stream;
  k.name = job_->names.Intern(name);
  trace().kernels.push_back(k);
  return *this;
}

RankBuilder& RankBuilder::Memcpy(uint64_t stream, int64_t start_us, int64_t duration_us,
                                 uint64_t correlation) {
  schema::MemcpyEvent m;
  m.start_ns = start_us * kUs;
  m.duration_ns = static_cast<uint64_t>(duration_us * kUs);
  m.correlation_id = correlation;
  m.stream_id = stream;
  m.bytes = 4096;
  m.copy_kind = schema::CopyKind::kDtoh;
  m.src_kind = schema::MemoryKind::kDevice;
  m.dst_kind = schema::MemoryKind::kPageable;
  trace().memcpys.push_back(m);
  return *this;
}

RankBuilder& RankBuilder::Collective(uint64_t comm, uint64_t seq, uint64_t correlation,
                                     uint64_t stream, int64_t start_us, int64_t duration_us,
                                     uint32_t comm_size) {
  schema::CollectiveEvent c;
  c.start_ns = start_us * kUs;
  c.duration_ns = static_cast<uint64_t>(duration_us * kUs);
  c.comm_id = comm;
  c.seq_number = seq;
  c.correlation_id = correlation;
  c.stream_id = stream;
  c.comm_size = comm_size;
  c.op = schema::CollectiveOp::kAllReduce;
  trace().collectives.push_back(c);
  return *this;
}

RankBuilder& RankBuilder::Op(schema::CollectiveOp op, int32_t peer) {
  schema::CollectiveEvent& c = trace().collectives.back();
  c.op = op;
  c.peer_rank = peer;
  return *this;
}

RankBuilder& RankBuilder::Communicator(uint64_t comm, int32_t rank, uint32_t comm_size) {
  trace().communicators.push_back({comm, rank, comm_size, "comm"});
  return *this;
}

RankBuilder& RankBuilder::Step(std::string_view name, int64_t start_us, int64_t duration_us,
                               uint32_t thread) {
  schema::HostRangeEvent h;
  h.start_ns = start_us * kUs;
  h.duration_ns = static_cast<uint64_t>(duration_us * kUs);
  h.thread_id = thread;
  h.name = job_->names.Intern(name);
  h.category = schema::HostRangeCategory::kStep;
  trace().host_ranges.push_back(h);
  return *this;
}

void MoveToHost(Job* job, size_t rank_index, std::string host, int64_t ahead_us) {
  RankTrace& rank = job->ranks[rank_index];
  rank.host = std::move(host);
  for (auto& a : rank.api_calls) a.start_ns += ahead_us * kUs;
  for (auto& k : rank.kernels) k.start_ns += ahead_us * kUs;
  for (auto& c : rank.collectives) c.start_ns += ahead_us * kUs;
}

Replayed Replay(const Job& job, const std::vector<std::string>& scales, bool drop_gaps,
                bool align) {
  Replayed out;
  std::vector<int64_t> offsets(job.ranks.size(), 0);
  if (align) offsets = AlignClocks(job).rank_offset_ns;
  out.graph = BuildGraph(job, offsets);
  std::vector<ReplayScale> whatifs;
  for (const std::string& spec : scales) {
    StatusOr<ReplayScale> w = ParseScale(spec);
    if (!w.ok()) throw std::runtime_error(w.status().message());
    whatifs.push_back(std::move(w).value());
  }
  out.sim = Simulate(out.graph,
                     ApplyReplayScales(out.graph, MeasuredScenario(out.graph), whatifs, drop_gaps));
  return out;
}

Job BlockedCopyJob() {
  Job job;
  job.job_id = "blocked-copy";
  RankBuilder(&job, 0, 1)
      .Api(schema::ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 5, 1)
      .Api(schema::ApiKind::kMemcpyAsync, "cudaMemcpyAsync", 10, 100, 2)
      .Api(schema::ApiKind::kLaunchKernel, "cudaLaunchKernel", 112, 4, 3)
      .Api(schema::ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 117, 8, 0, 7)
      .Kernel("gemm_kernel", 7, 10, 90, 1)
      .Memcpy(7, 100, 8, 2)
      .Kernel("elementwise_kernel", 7, 118, 6, 3)
      .Step("ProfilerStep#1", 0, 127);
  return job;
}

std::unique_ptr<SharedTraceReplay> ReplaySharedTrace(const std::string& name,
                                                     const std::string& dir) {
  const std::string out = dir + "/out";
  auto imported = kineto::ImportKineto(
      {{std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/" + name}, out, "", 1});
  if (!imported.ok()) {
    ADD_FAILURE() << name << ": " << imported.status().message();
    return nullptr;
  }
  auto paths = ExpandTracePaths({imported->size() == 1 ? imported->front().output_path : out});
  if (!paths.ok()) {
    ADD_FAILURE() << name << ": " << paths.status().message();
    return nullptr;
  }
  auto job = LoadJob(*paths);  // LoadOptions::keep_events: the raw events stay.
  if (!job.ok()) {
    ADD_FAILURE() << name << ": " << job.status().message();
    return nullptr;
  }
  auto t = std::make_unique<SharedTraceReplay>();
  t->job = std::move(*job);
  t->graph = BuildGraph(t->job, AlignClocks(t->job).rank_offset_ns);
  t->sim = Simulate(t->graph, MeasuredScenario(t->graph));
  t->iterations = AnalyzeIterations(t->job, t->graph, t->sim, {});
  return t;
}

std::string ReadAll(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
  return text;
}

uint32_t NodeNamed(const ExecutionGraph& graph, uint32_t rank_index, std::string_view name) {
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    if (graph.nodes[n].rank_index == rank_index && graph.nodes[n].name == name) return n;
  }
  throw std::runtime_error("no node named " + std::string(name));
}

}  // namespace lumos::modeler::testing
