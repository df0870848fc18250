// Inputs made to hurt (issue 26): names long enough to break a backtracking regex engine, files
// whose frames each pass their caps but add up to more than the machine has, a flipped byte in
// one frame of many, outputs aimed at other people's traces. Each is a real lumos-model process
// on real files, bounded by timeout(1): it must answer or refuse with one clear line, never
// crash, hang or touch what it does not own.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "modeler/io/csv_table.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::CommandResult;
using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

CommandResult RunBounded(const std::string& args) {
  return RunCommand("timeout -s KILL 60 " + LumosModelBinary() + " " + args);
}

// A rank whose 20 iterations are host ranges "op" + 100,000 'b's, each launching a kernel named
// 100,000 'a's + "_kernel". std::regex searched `(a|b)*_kernel` by recursing per character and
// died by SIGSEGV, with nothing on stderr.
void WriteLongNames(const std::string& path) {
  const std::string kernel = std::string(100'000, 'a') + "_kernel";
  const std::string range = "op" + std::string(100'000, 'b');
  auto writer = schema::TraceFileWriter::Create(path, ::lumos::testing::SampleHeader(0, 1),
                                                schema::WriterOptions());
  ASSERT_TRUE(writer.ok());
  for (uint64_t i = 1; i <= 20; ++i) {
    const int64_t t = static_cast<int64_t>(10'000 * i);
    (*writer)->Add(schema::HostRangeEvent{.start_ns = t,
                                          .duration_ns = 9'000,
                                          .thread_id = 7,
                                          .name = range,
                                          .category = schema::HostRangeCategory::kCpuOp});
    (*writer)->Add(schema::ApiCallEvent{.start_ns = t + 100,
                                        .duration_ns = 50,
                                        .thread_id = 7,
                                        .correlation_id = i,
                                        .kind = schema::ApiKind::kLaunchKernel,
                                        .name = "cudaLaunchKernel"});
    (*writer)->Add(schema::KernelEvent{.start_ns = t + 200,
                                       .duration_ns = 5'000,
                                       .correlation_id = i,
                                       .stream_id = 7,
                                       .name = kernel});
  }
  ASSERT_TRUE((*writer)->Close(250'000).ok());
}

TEST(HostileInputsTest, PatternsOverNamesOfAHundredThousandCharacters) {
  TempDir dir;
  const std::string trace = dir.File("long.pb.zst");
  WriteLongNames(trace);
  const std::string commands[] = {
      "replay " + trace + " --scale 'kernel:(a|b)*_kernel=2'",
      "replay " + trace + " --iteration 'op(b)+'",
      "structure " + trace + " --iteration 'op(b)+'",
      "diff " + trace + " " + trace + " --iteration 'op(b)+'",
      "summarize " + trace + " -o " + dir.File("tables") + " --iteration 'op(b)+' -q",
  };
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    const CommandResult r = RunBounded(command);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  // The scaled kernels took twice as long: the what-if reached them.
  const CommandResult scaled =
      RunBounded("replay " + trace + " --json --scale 'kernel:(a|b)*_kernel=2'");
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  const CommandResult plain = RunBounded("replay " + trace + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(scaled.out, plain.out);
  EXPECT_FALSE(std::filesystem::exists(dir.File("tables.partial")));
  // The 20 ranges are the iterations.
  const CommandResult iterations = RunBounded("replay " + trace + " --iteration 'op(b)+'");
  EXPECT_NE(iterations.out.find("20 iterations"), std::string::npos) << iterations.out;
}

TEST(HostileInputsTest, APatternRE2CannotCompileIsOneLineAndExit2) {
  TempDir dir;
  const std::string trace = dir.File("long.pb.zst");
  WriteLongNames(trace);
  const CommandResult backreference = RunBounded("replay " + trace + " --iteration '(a)\\1'");
  EXPECT_EQ(backreference.exit_code, 2);
  EXPECT_NE(backreference.err.find("--iteration '(a)\\1': not a valid regular expression (RE2 "
                                   "syntax): invalid escape sequence: \\1"),
            std::string::npos)
      << backreference.err;
  const CommandResult huge =
      RunBounded("replay " + trace + " --scale 'kernel:" + std::string(5000, 'x') + "=2'");
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_NE(huge.err.find("a pattern of 5000 characters (at most 4096)"), std::string::npos)
      << huge.err;
  // Any letter of any script, 1,000 times: a program of tens of MiB.
  const CommandResult big = RunBounded("replay " + trace + " --scale 'kernel:\\pL{1000}=2'");
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("compiles to more than 8 MiB"), std::string::npos) << big.err;
}

std::string EstBase() {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/est-base.pb.zst";
}

constexpr const char* kEstBaseSetup =
    " --iteration '^step$' --gpu H200-SXM-141GB --base layers=4,hidden=1024,ffn=4096,heads=16,"
    "seq=1024,mbs=4,micro_batches=1,world=1,dp=1,tp=1,pp=1";

// --set micro_batches=1000000 on est-base grew past 24 GB until the kernel killed it, and
// layers=2147483647 was a SIGSEGV. The rewritten graph's size is projected before anything is
// allocated and checked against the node-id range and the memory budget.
TEST(HostileInputsTest, EstimateSizesAreBoundedBeforeAnyAllocation) {
  const CommandResult batches =
      RunBounded("estimate " + EstBase() + kEstBaseSetup + " --set micro_batches=1000000");
  EXPECT_EQ(batches.exit_code, 2);
  EXPECT_NE(batches.err.find("micro_batches=1000000: the estimated job's graph would have "
                             "2.52e+10 nodes (measured: 27521): more than the 2147483648 a "
                             "graph can hold"),
            std::string::npos)
      << batches.err;
  const CommandResult layers =
      RunBounded("estimate " + EstBase() + kEstBaseSetup + " --set layers=2147483647");
  EXPECT_EQ(layers.exit_code, 2) << layers.err;
  EXPECT_NE(layers.err.find("layers=2147483647: the estimated job's graph would have 1.32e+13"),
            std::string::npos)
      << layers.err;
  const CommandResult limited =
      RunBounded("estimate " + EstBase() + kEstBaseSetup + " --set layers=256 --max-memory 100M");
  EXPECT_EQ(limited.exit_code, 2);
  EXPECT_NE(limited.err.find("layers=256: the estimated job's graph would have 1.58e+06 nodes "
                             "(measured: 27521): about 771.8 MiB at 512 B a node, more than "
                             "the limit of 100.0 MiB (--max-memory or LUMOS_MAX_MEMORY)"),
            std::string::npos)
      << limited.err;
  // A sweep's configurations are each checked, and the one over the limit is named.
  const CommandResult sweep = RunBounded("estimate " + EstBase() + kEstBaseSetup +
                                         " --sweep 'layers=8,64' --max-memory 100M");
  EXPECT_EQ(sweep.exit_code, 2);
  // (Two configurations at once where there are two cores or more; one on one core.)
  EXPECT_NE(sweep.err.find("estimate: layers=64: the estimated job's graph would have 3.97e+05 "
                           "nodes (measured: 27521): about "),
            std::string::npos)
      << sweep.err;
  EXPECT_NE(sweep.err.find("more than the limit of 100.0 MiB (--max-memory or LUMOS_MAX_MEMORY)"),
            std::string::npos)
      << sweep.err;
  EXPECT_EQ(RunBounded("estimate " + EstBase() + kEstBaseSetup +
                       " --set layers=1 --max-memory "
                       "lots")
                .exit_code,
            2);
  // What fits still runs.
  const CommandResult fits =
      RunBounded("estimate " + EstBase() + kEstBaseSetup + " --set layers=8 --max-memory 1G");
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

// "ulimit -v KB; " to bound a command's address space; nothing under AddressSanitizer, which
// reserves terabytes of shadow memory at start-up and cannot start under such a limit (there the
// budget is still checked, through LUMOS_MAX_MEMORY).
std::string AddressSpaceLimit(int kilobytes) {
  return kAddressSanitizer ? "" : "ulimit -v " + std::to_string(kilobytes) + "; ";
}

// Under an address-space limit the default budget follows it: refused with exit 2, never killed
// halfway (a 2 GiB ulimit -v leaves 1.5 GiB; micro_batches=1000 needs ~14 GiB).
TEST(HostileInputsTest, EstimateUnderUlimitRefusesInsteadOfDying) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer cannot start under ulimit -v";
  const CommandResult r =
      RunCommand("ulimit -v 2097152; timeout -s KILL 60 " + LumosModelBinary() + " estimate " +
                 EstBase() + kEstBaseSetup + " --set micro_batches=1000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("more than the limit of 1.5 GiB (the default"), std::string::npos) << r.err;
  const CommandResult fits =
      RunCommand("ulimit -v 2097152; timeout -s KILL 60 " + LumosModelBinary() + " estimate " +
                 EstBase() + kEstBaseSetup + " --set micro_batches=4");
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
}

// One flipped byte in the first of est-base's frames lost all 40,925 events, though frames are
// independent. Now the damaged frame is skipped and named; the four intact ones are read. The
// byte is flipped in the frame's data (zstd's checksum finds it) and in its header (its size is
// unreadable: reading resumes at the next zstd magic number).
TEST(HostileInputsTest, AFlippedByteLosesItsFrameNotTheFile) {
  TempDir dir;
  const std::string original = ::lumos::testing::ReadFileBytes(EstBase());
  // est-base's frames start at bytes 24, 270, 1656, 1929 and 126021.
  for (size_t offset : {size_t{50'000}, size_t{1'929}}) {
    SCOPED_TRACE(offset);
    std::string bytes = original;
    bytes[offset] = static_cast<char>(bytes[offset] ^ 0xff);
    const std::string damaged = dir.File("flipped.pb.zst");
    ::lumos::testing::WriteFileBytes(damaged, bytes);
    const CommandResult inspect = RunBounded("inspect " + damaged);
    EXPECT_EQ(inspect.exit_code, 1);
    EXPECT_NE(inspect.err.find(damaged + ": byte offset 1929: "), std::string::npos) << inspect.err;
    EXPECT_NE(inspect.err.find("; skipped: 4 intact frames read, 26906 of the 40925 events its "
                               "trailer counts lost"),
              std::string::npos)
        << inspect.err;
    EXPECT_NE(inspect.out.find("14019 events"), std::string::npos) << inspect.out;
    // The whole job still replays from what is intact, and says what it lost.
    const CommandResult replay = RunBounded("replay " + damaged + " --iteration '^step$'");
    EXPECT_EQ(replay.exit_code, 1) << replay.err;
    EXPECT_NE(replay.err.find("(the intact frames are used)"), std::string::npos) << replay.err;
    EXPECT_NE(replay.out.find("iteration"), std::string::npos) << replay.out;
  }
}

// Frames each within the per-frame caps add up: 8 frames of a million identical API calls are a
// few KB of file and took 3 GB to load. The job's events are budgeted before each frame's are
// kept (LUMOS_MAX_MEMORY, else half the machine's memory): one line naming the file and the
// budget, exit 1, and the process stays far below what the file would have cost.
TEST(HostileInputsTest, ManySmallFramesAreBudgetedPerJob) {
  TempDir dir;
  const std::string path = dir.File("frames.pb.zst");
  schema::WriterOptions options;
  options.frame_bytes = uint64_t{1} << 30;  // Frames cut at the writer's 1M events, not bytes.
  auto writer =
      schema::TraceFileWriter::Create(path, ::lumos::testing::SampleHeader(0, 1), options);
  ASSERT_TRUE(writer.ok());
  for (uint64_t i = 0; i < 4'000'000; ++i) {
    (*writer)->Add(schema::ApiCallEvent{.start_ns = 1000,
                                        .duration_ns = 1,
                                        .thread_id = 7,
                                        .correlation_id = 0,
                                        .kind = schema::ApiKind::kOther,
                                        .name = "cudaGetDevice"});
  }
  ASSERT_TRUE((*writer)->Close(2000).ok());
  ASSERT_LT(std::filesystem::file_size(path), 1u << 20);
  const CommandResult r =
      RunCommand(AddressSpaceLimit(3145728) + "LUMOS_MAX_MEMORY=256M timeout -s KILL 60 " +
                 LumosModelBinary() + " replay " + path);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(path + ": byte offset "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("brings the job's events past 524288, what the memory budget of 256.0 MiB "
                       "(--max-memory or LUMOS_MAX_MEMORY) holds at 512 B an event"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(
      RunCommand("LUMOS_MAX_MEMORY=nope " + LumosModelBinary() + " inspect " + path).exit_code, 2);
}

// `import kineto` under a 1 GiB address space and a 128 MiB budget, killed after a minute.
CommandResult ImportUnderBudget(const std::string& path, const std::string& out) {
  return RunCommand(AddressSpaceLimit(1048576) + "LUMOS_MAX_MEMORY=128M timeout -s KILL 60 " +
                    LumosModelBinary() + " import kineto " + path + " -o " + out);
}

// A .json.gz of a few hundred KB that expands to 200 MiB was read whole (3.15 GB for a 14 MB
// one). Imports now stream: the text is read piece by piece under `ulimit -v`, so what bounds
// an import is the events it keeps, checked against the budget as they come.
TEST(HostileInputsTest, AJsonGzThatExpandsTo200MiBStreamsInBoundedMemory) {
  TempDir dir;
  const std::string path = dir.File("bomb.json.gz");
  ASSERT_EQ(RunCommand("(printf '{\"traceEvents\": ['; head -c 209715200 /dev/zero | tr '\\0' ' '; "
                       "printf ']}') | gzip -1 > " +
                       path)
                .exit_code,
            0);
  ASSERT_LT(std::filesystem::file_size(path), 4u << 20);
  const CommandResult r = ImportUnderBudget(path, dir.File("out.pb.zst"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(path + ": no events to convert"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("out.pb.zst")));
}

// 400,000 small events in 300 KB of gzip: more than a 128 MiB budget holds, refused as they
// come, with the element, the budget and the cost of an event named; nothing written.
TEST(HostileInputsTest, MoreImportedEventsThanTheBudgetHoldsAreRefused) {
  TempDir dir;
  const std::string path = dir.File("many.json.gz");
  ASSERT_EQ(RunCommand("(printf '{\"traceEvents\": ['; yes '{\"ph\": \"X\", \"cat\": \"kernel\", "
                       "\"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 1},' | "
                       "head -n 400000; printf '{}]}') | gzip -1 > " +
                       path)
                .exit_code,
            0);
  const CommandResult r = ImportUnderBudget(path, dir.File("out.pb.zst"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(path + ": traceEvents["), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("] brings the trace's events past "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", what the memory budget of 128.0 MiB (LUMOS_MAX_MEMORY) holds at "),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("out.pb.zst")));
}

// One element of 100 MiB (a single string) is refused once it passes half the budget.
TEST(HostileInputsTest, OneHugeElementIsRefusedAsItIsRead) {
  TempDir dir;
  const std::string path = dir.File("huge.json.gz");
  ASSERT_EQ(RunCommand("(printf '{\"traceEvents\": [{\"name\": \"'; head -c 104857600 /dev/zero | "
                       "tr '\\0' a; printf '\"}]}') | gzip -1 > " +
                       path)
                .exit_code,
            0);
  const CommandResult r = ImportUnderBudget(path, dir.File("out.pb.zst"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(path + ": one traceEvents element at byte offset 17 is larger than 64.0 "
                              "MiB, half of the memory budget of 128.0 MiB (LUMOS_MAX_MEMORY): "
                              "not read"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("out.pb.zst")));
}

// `export rank0.pb.zst -o rank1.pb.zst` (a typo for .json) replaced a trace that was not an
// input with JSON, exit 0; so did --timeline and import. Every output now refuses a file
// lumos-model did not write, untouched, unless --force; its own earlier outputs are replaced.
TEST(HostileInputsTest, AnOutputNeverReplacesATraceItDidNotWrite) {
  TempDir dir;
  const std::string agent_trace = ::lumos::testing::ReadFileBytes(EstBase());
  const std::string rank1 = dir.File("rank1.pb.zst");
  ::lumos::testing::WriteFileBytes(rank1, agent_trace);
  ::lumos::testing::WriteFileBytes(dir.File("t.json"), R"({"traceEvents": []})");
  const std::string commands[] = {
      "export " + EstBase() + " -o " + rank1,
      "replay " + EstBase() + " --timeline " + rank1,
      "estimate " + EstBase() + kEstBaseSetup + " --set layers=8 --timeline " + rank1,
      "import kineto " + dir.File("t.json") + " -o " + rank1,
  };
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    const CommandResult r = RunBounded(command);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("it holds a Lumos trace that lumos-model did not write (give another "
                         "name, or --force to replace it)"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(::lumos::testing::ReadFileBytes(rank1), agent_trace);
  }
  // synth's rank file names: the same refusal.
  const std::string synth_rank = dir.File("synth/synth-1x1.rank0.pb.zst");
  std::filesystem::create_directories(dir.File("synth"));
  ::lumos::testing::WriteFileBytes(synth_rank, agent_trace);
  const CommandResult synth =
      RunBounded("synth " + EstBase() + " -o " + dir.File("synth") + " --ranks 1");
  EXPECT_EQ(synth.exit_code, 1) << synth.err;
  EXPECT_NE(synth.err.find("will not replace " + synth_rank + ": it holds a Lumos trace"),
            std::string::npos)
      << synth.err;
  EXPECT_EQ(::lumos::testing::ReadFileBytes(synth_rank), agent_trace);
  // An export's own earlier output is replaced; --force replaces anything.
  const std::string json = dir.File("out.json");
  EXPECT_EQ(RunBounded("export " + EstBase() + " -o " + json).exit_code, 0);
  EXPECT_EQ(RunBounded("export " + EstBase() + " -o " + json).exit_code, 0);
  EXPECT_EQ(RunBounded("export " + EstBase() + " -o " + rank1 + " --force").exit_code, 0);
  EXPECT_NE(::lumos::testing::ReadFileBytes(rank1), agent_trace);
}

// A spreadsheet's CSV starts with a UTF-8 byte order mark: its first column was "\xEF\xBB\xBFop"
// and the table was refused for a missing "op".
TEST(HostileInputsTest, ACsvHeaderWithAByteOrderMarkIsRead) {
  auto table =
      io::ParseCsv("\xEF\xBB\xBFop,dtype,ranks,bytes\nall_reduce,bfloat16,8,1024\n", "q.csv");
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(table->header.front(), "op");
  EXPECT_EQ(table->Column("op"), 0);
}

// A subdirectory that is a symbolic link to a directory of ranks was skipped with exit 0 and no
// word. Links are followed; a link back to an ancestor is walked once (no loop).
TEST(HostileInputsTest, SymlinkedDirectoriesAreFollowedOnce) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("job/own"));
  std::filesystem::create_directories(dir.File("elsewhere"));
  ::lumos::testing::WriteSampleTrace(dir.File("job/own/a.pb.zst"), 10);
  ::lumos::testing::WriteSampleTrace(dir.File("elsewhere/b.pb.zst"), 20);
  std::filesystem::create_directory_symlink(dir.File("elsewhere"), dir.File("job/linked"));
  std::filesystem::create_directory_symlink(dir.File("job"), dir.File("job/own/loop"));
  const CommandResult r = RunBounded("inspect " + dir.File("job"));
  EXPECT_NE(r.out.find("b.pb.zst"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("a.pb.zst"), std::string::npos) << r.out << r.err;
  // Each file once: 2 file(s) in the job's line.
  EXPECT_NE(r.out.find("2 file(s)"), std::string::npos) << r.out;
}

// An argument the input shows to be wrong was exit 1: synth --ranks 3 of an 8-rank job,
// --job naming no job of the files. Bad arguments are exit 2, in every command.
TEST(HostileInputsTest, ArgumentsTheInputContradictsAreExit2) {
  TempDir dir;
  const std::string example = std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank";
  const std::string commands[] = {
      "synth " + example + " -o " + dir.File("s") + " --ranks 3",
      "synth " + example + " -o " + dir.File("s") + " --ranks 8 --job nope",
      "replay " + example + " --job nope",
      "structure " + example + " --job nope",
      "inspect " + example + " --job nope",
  };
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    const CommandResult r = RunBounded(command);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("s")));
  // Sizes whose output cannot fit where it goes: refused before anything is written (it wrote
  // until the disk was full).
  const CommandResult huge = RunBounded("synth " + EstBase() + " -o " + dir.File("s") +
                                        " --ranks 100000 --iterations 1000");
  EXPECT_EQ(huge.exit_code, 2) << huge.err;
  EXPECT_NE(huge.err.find("--ranks 100000 --iterations 1000: about 16.6 TiB of traces"),
            std::string::npos)
      << huge.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("s")));
}

}  // namespace
}  // namespace lumos::modeler
