// `import kineto` end to end: every shared real trace imported and read back, its event counts
// compared with an independent count over its JSON and with the numbers documented in
// shared/data/traces/README.md; input kinds (.json, .json.gz, .tar.gz); failures that must
// leave no output behind.
#include "modeler/import/kineto_import.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>

#include "tests/modeler/import/import_test_util.h"
#include "tests/testing/param_names.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::kineto {
namespace {

using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;
using testing::CountJson;
using testing::JsonCounts;
using testing::ReadBack;
using testing::ReadTrace;
using testing::SharedTraceDir;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

size_t EntriesIn(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

// The read-back trace has exactly the events the JSON has, plus the derived ones.
void ExpectMatches(const JsonCounts& json, const ReadBack& back, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(back.Count("kernel"), json.kernels);
  EXPECT_EQ(back.Count("api_call"), json.api_calls);
  EXPECT_EQ(back.Count("collective"), json.nccl_kernels);
  EXPECT_EQ(back.Count("memcpy"), json.memcpys);
  EXPECT_EQ(back.Count("memset"), json.memsets);
  EXPECT_EQ(back.Count("sync"), json.syncs);
  EXPECT_EQ(back.Count("host_range"), json.host_ranges);
  EXPECT_EQ(back.Count("capture_window"), 1u);
  EXPECT_EQ(back.Count("loss"), 0u);  // Nothing in the real traces is malformed.
  EXPECT_EQ(back.header.producer(), pb::PRODUCER_KINETO_IMPORT);
  EXPECT_EQ(back.header.rank(), json.rank);
  uint64_t steps = 0;
  for (const auto* p : back.Of("host_range")) {
    steps += p->packet.host_range().category() == pb::HOST_RANGE_CATEGORY_STEP;
  }
  EXPECT_EQ(steps, json.steps);
  // Every collective belongs to a communicator of the trace and points at a kernel.
  std::set<uint64_t> comm_ids, kernel_correlations;
  for (const auto* p : back.Of("communicator")) comm_ids.insert(p->packet.communicator().comm_id());
  for (const auto* p : back.Of("kernel")) {
    kernel_correlations.insert(p->packet.kernel().correlation_id());
  }
  for (const auto* p : back.Of("collective")) {
    EXPECT_EQ(comm_ids.count(p->packet.collective().comm_id()), 1u);
    EXPECT_EQ(kernel_correlations.count(p->packet.collective().correlation_id()), 1u);
  }
  // The importer writes events in start order; frames group them by kind.
  std::map<int, int64_t> previous;
  for (const auto& p : back.packets) {
    if (!p.packet.has_start_delta_ns()) continue;
    auto [it, first] = previous.emplace(p.packet.data_case(), p.start_ns);
    EXPECT_GE(p.start_ns, it->second);
    it->second = p.start_ns;
  }
}

TEST(KinetoImportTest, DlrmArchiveMatchesItsJsonAndReadme) {
  TempDir dir;
  const std::string archive = SharedTraceDir() + "/dlrm-8rank-v100/dlrm_kineto.tar.gz";
  ASSERT_TRUE(Exists(archive)) << "shared test traces missing: " << archive;
  auto imported = ImportKineto({{archive}, dir.File("dlrm"), "", 3});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ASSERT_EQ(imported->size(), 8u);
  EXPECT_EQ(EntriesIn(dir.File("dlrm")), 8u);
  for (const ImportedTrace& t : *imported) EXPECT_EQ(t.stats.warnings.size(), 0u) << t.source;

  // README: kernels per rank; 5 SendRecv + 3 AllReduce on each.
  const uint64_t kReadmeKernels[8] = {245, 310, 246, 315, 251, 245, 246, 246};
  std::set<int32_t> ranks;
  for (const auto& [name, json] : testing::Untar(testing::GunzipFile(archive))) {
    JsonCounts counts = CountJson(json);
    std::string output = dir.File("dlrm/" + TraceStem(name) + ".pb.zst");
    ReadBack back = ReadTrace(output);
    ExpectMatches(counts, back, name);
    ASSERT_TRUE(counts.rank >= 0 && counts.rank < 8) << name;
    EXPECT_EQ(back.Count("kernel"), kReadmeKernels[counts.rank]) << name;
    EXPECT_EQ(back.Count("collective"), 8u) << name;
    EXPECT_EQ(back.header.world_size(), 8);
    EXPECT_EQ(back.header.job_id(), "dlrm_kineto");  // All ranks: one job.
    EXPECT_EQ(back.header.devices(0).name(), "Tesla V100-SXM2-32GB");
    ranks.insert(back.header.rank());
  }
  EXPECT_EQ(ranks.size(), 8u);
}

struct HtaTrace {
  const char* file;
  uint64_t kernels;  // As documented in the README.
  uint64_t nccl_kernels;
};

class HtaImportTest : public ::testing::TestWithParam<HtaTrace> {};

TEST_P(HtaImportTest, MatchesItsJsonAndReadme) {
  TempDir dir;
  const std::string input = SharedTraceDir() + "/hta-single-rank/" + GetParam().file;
  ASSERT_TRUE(Exists(input)) << "shared test traces missing: " << input;
  auto imported = ImportKineto({{input}, dir.File("out.pb.zst"), "", 3});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ASSERT_EQ(imported->size(), 1u);
  EXPECT_EQ(imported->front().stats.warnings.size(), 0u);  // Real traces are sound.
  ReadBack back = ReadTrace(dir.File("out.pb.zst"));
  ExpectMatches(CountJson(testing::GunzipFile(input)), back, input);
  EXPECT_EQ(back.Count("kernel"), GetParam().kernels);
  EXPECT_EQ(back.Count("collective"), GetParam().nccl_kernels);
  EXPECT_EQ(back.header.job_id(), TraceStem(input));
  EXPECT_EQ(back.header.source_path(), input);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, HtaImportTest,
                         ::testing::Values(HtaTrace{"control.json.gz", 8568, 60},
                                           HtaTrace{"rank0.json.gz", 6080, 80},
                                           HtaTrace{"nccl_data.json.gz", 2700, 21},
                                           HtaTrace{"df_index_resolver.json.gz", 19370, 2020},
                                           HtaTrace{"event_sync_trace.json.gz", 3, 0}),
                         [](const ::testing::TestParamInfo<HtaTrace>& info) {
                           return ::lumos::testing::TraceParamName(info.param.file);
                         });

std::string TinyTrace(int rank) {
  return R"({"distributedInfo": {"rank": )" + std::to_string(rank) +
         R"(, "world_size": 2}, "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9,
     "ts": 100, "dur": 5, "args": {"correlation": 1, "cbid": 211}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 110, "dur": 3,
     "args": {"correlation": 1, "stream": 7, "device": 0}}]})";
}

TEST(KinetoImportTest, ReadsGzipLikePlainJson) {
  TempDir dir;
  WriteFileBytes(dir.File("a.json"), TinyTrace(0));
  WriteFileBytes(dir.File("b.json.gz"), testing::Gzip(TinyTrace(0)));
  ASSERT_TRUE(ImportKineto({{dir.File("a.json")}, dir.File("a.pb.zst"), "job", 3}).ok());
  ASSERT_TRUE(ImportKineto({{dir.File("b.json.gz")}, dir.File("b.pb.zst"), "job", 3}).ok());
  ReadBack a = ReadTrace(dir.File("a.pb.zst")), b = ReadTrace(dir.File("b.pb.zst"));
  EXPECT_EQ(a.Count("kernel"), 1u);
  EXPECT_EQ(a.counts, b.counts);
  EXPECT_EQ(a.packets.back().start_ns, b.packets.back().start_ns);
  EXPECT_EQ(EntriesIn(dir.path()), 4u);  // Two inputs, two outputs, no temporary file.
}

TEST(KinetoImportTest, ArchiveOfTwoRanksBecomesADirectory) {
  TempDir dir;
  std::string tar = testing::TarHeader("job/", 0, '5') +
                    testing::TarArchive({{"job/._rank0.json", "macOS resource fork"},
                                         {"job/rank0.json", TinyTrace(0)},
                                         {"job/notes.txt", "not a trace"},
                                         {"job/rank1.json.gz", testing::Gzip(TinyTrace(1))}});
  WriteFileBytes(dir.File("two_ranks.tar.gz"), testing::Gzip(tar));
  auto imported = ImportKineto({{dir.File("two_ranks.tar.gz")}, dir.File("out"), "", 3});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ASSERT_EQ(imported->size(), 2u);
  EXPECT_EQ(EntriesIn(dir.File("out")), 2u);
  ReadBack r0 = ReadTrace(dir.File("out/rank0.pb.zst"));
  ReadBack r1 = ReadTrace(dir.File("out/rank1.pb.zst"));
  EXPECT_EQ(r0.header.rank(), 0);
  EXPECT_EQ(r1.header.rank(), 1);
  EXPECT_EQ(r0.header.job_id(), "two_ranks");
  EXPECT_EQ(r1.header.job_id(), "two_ranks");
  EXPECT_EQ(r1.header.source_path(), dir.File("two_ranks.tar.gz") + ":job/rank1.json.gz");
  EXPECT_EQ(r1.Count("kernel"), 1u);
}

// Every failure names the input and leaves nothing behind.
void ExpectFailsCleanly(const ImportRequest& request, const std::string& mention,
                        const std::string& out_dir) {
  size_t before = EntriesIn(out_dir);
  auto imported = ImportKineto(request);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find(mention), std::string::npos)
      << imported.status().message();
  EXPECT_EQ(EntriesIn(out_dir), before) << "output left behind";
}

TEST(KinetoImportTest, FailsCleanlyOnBadInput) {
  TempDir in, out;
  const std::string output = out.File("o.pb.zst");
  ExpectFailsCleanly({{in.File("missing.json")}, output, "", 3}, in.File("missing.json"),
                     out.path());

  WriteFileBytes(in.File("text.json"), "this is not JSON at all");
  ExpectFailsCleanly({{in.File("text.json")}, output, "", 3}, in.File("text.json"), out.path());

  std::string gz = testing::Gzip(TinyTrace(0));
  WriteFileBytes(in.File("cut.json.gz"), gz.substr(0, gz.size() / 2));
  ExpectFailsCleanly({{in.File("cut.json.gz")}, output, "", 3}, "truncated at byte", out.path());

  WriteFileBytes(in.File("other.json"), R"({"displayTimeUnit": "ms"})");
  ExpectFailsCleanly({{in.File("other.json")}, output, "", 3}, "no \"traceEvents\"", out.path());

  WriteFileBytes(in.File("et.json"), R"({"schema": "1.0.1", "pid": 1, "nodes": []})");
  ExpectFailsCleanly({{in.File("et.json")}, output, "", 3}, "Execution Trace", out.path());

  // The second rank is broken: the first rank's finished output is never put in place, and the
  // directory the import created goes again.
  WriteFileBytes(in.File("ranks.tar"),
                 testing::TarArchive({{"r0.json", TinyTrace(0)}, {"r1.json", "{\"trace"}}));
  ExpectFailsCleanly({{in.File("ranks.tar")}, out.File("dir"), "", 3},
                     in.File("ranks.tar") + ":r1.json", out.path());
}

TEST(KinetoImportTest, RejectsAmbiguousOutputs) {
  TempDir dir;
  WriteFileBytes(dir.File("a.json"), TinyTrace(0));
  WriteFileBytes(dir.File("b.json"), TinyTrace(1));
  auto file_for_two =
      ImportKineto({{dir.File("a.json"), dir.File("b.json")}, dir.File("x.pb.zst"), "", 3});
  EXPECT_FALSE(file_for_two.ok());
  EXPECT_FALSE(Exists(dir.File("x.pb.zst")));
  auto same_stem = ImportKineto({{dir.File("a.json"), dir.File("a.json")}, dir.File("o"), "", 3});
  EXPECT_FALSE(same_stem.ok());
  EXPECT_FALSE(Exists(dir.File("o")));
  auto two = ImportKineto({{dir.File("a.json"), dir.File("b.json")}, dir.File("job7"), "", 3});
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(ReadTrace(dir.File("job7/b.pb.zst")).header.job_id(), "job7");
}

TEST(KinetoImportTest, TraceStemDropsDirectoriesAndExtensions) {
  EXPECT_EQ(TraceStem("in/worker0.pt.trace.json.gz"), "worker0.pt.trace");
  EXPECT_EQ(TraceStem("dlrm_kineto.tar.gz"), "dlrm_kineto");
  EXPECT_EQ(TraceStem("/x/y/rank3.json"), "rank3");
  EXPECT_EQ(TraceStem("out/"), "out");
  EXPECT_EQ(TraceStem("a.tgz"), "a");
}

}  // namespace
}  // namespace lumos::modeler::kineto
