// The exit-status contract of every lumos-model command (README.md, "Commands"), as a user meets
// it: the real binary, on the same bad inputs, built from the bundled example
// (examples/dlrm-8rank) and the golden traces (tests/data). Each row checks the exit status,
// that stderr is exactly the expected one problem (a pattern for the whole of it), and stdout:
// empty when nothing could be done, the result when part of the input could be used.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"
#include "tests/testing/trace_frames.h"

namespace lumos::modeler {
namespace {

namespace fs = std::filesystem;
using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

enum class Input {
  kSoundWithOptEquals,  // Good input, every option spelt --opt=VALUE: exit 0, stderr empty.
  kMissingFile,
  kMissingAmongGood,  // The example and a path that does not exist: the example is still used.
  kEmptyFile,
  kNotATrace,           // Random bytes.
  kTruncatedTrace,      // Cut inside its last frame: a damaged tail, no trailer.
  kUnclosedTrace,       // Cut where its last frame starts: intact, but no trailer.
  kBadHeaderAmongGood,  // One rank of the example with a schema major from the future.
  kUnknownOption,
  kFlagAsValue,
  kOutputToDevFull,  // stdout is /dev/full.
};

const char* InputName(Input input) {
  switch (input) {
    case Input::kSoundWithOptEquals:
      return "SoundInputWithOptEqualsValue";
    case Input::kMissingFile:
      return "MissingFile";
    case Input::kMissingAmongGood:
      return "MissingAmongGood";
    case Input::kEmptyFile:
      return "EmptyFile";
    case Input::kNotATrace:
      return "NotATrace";
    case Input::kTruncatedTrace:
      return "TruncatedTrace";
    case Input::kUnclosedTrace:
      return "UnclosedTrace";
    case Input::kBadHeaderAmongGood:
      return "BadHeaderAmongGood";
    case Input::kUnknownOption:
      return "UnknownOption";
    case Input::kFlagAsValue:
      return "FlagAsValue";
    case Input::kOutputToDevFull:
      return "OutputToDevFull";
  }
  return "?";
}

struct Row {
  std::string command;  // "inspect", ..., "import" (import kineto).
  Input input;
  int exit_code;
  // ECMAScript pattern for the whole of stderr; {cmd} stands for "lumos-model <command>"
  // (no character of it is special in a pattern).
  std::string stderr_pattern;
  // Each must be in stdout; none: stdout must be empty.
  std::vector<std::string> stdout_has;
};

void PrintTo(const Row& row, std::ostream* os) {
  *os << row.command << " " << InputName(row.input);
}

std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }
std::string Golden() {
  return std::string(LUMOS_SOURCE_DIR) + "/tests/data/schema_v1.0/every_packet_kind.pb.zst";
}
std::string SharedKineto() {
  return std::string(LUMOS_SOURCE_DIR) +
         "/../shared/data/traces/hta-single-rank/event_sync_trace.json.gz";
}

// A model file of costs fit (version 1, tests/data/cost_model_v1/): what costs predict reads.
std::string CostModel() {
  return std::string(LUMOS_SOURCE_DIR) + "/tests/data/cost_model_v1/gemm_a100_bf16_1024.json";
}

std::string SharedCosts() {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/gemm_a100_bf16.csv";
}

std::string RandomBytes(size_t n) {
  std::mt19937 random(11);  // Fixed: the same bytes every run.
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(random() & 0xff);
  return bytes;
}

// The bad inputs, built once from the real files.
class CommandContractTest : public ::testing::TestWithParam<Row> {
 public:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>();
    const std::string golden = ReadFileBytes(Golden());
    WriteFileBytes(dir_->File("empty.pb.zst"), "");
    WriteFileBytes(dir_->File("random.pb.zst"), RandomBytes(4096));
    WriteFileBytes(dir_->File("truncated.pb.zst"), golden.substr(0, golden.size() - 7));
    const std::vector<size_t> frames = ::lumos::testing::FrameStarts(golden);
    ASSERT_GE(frames.size(), 3u);  // Preamble, events, trailer.
    WriteFileBytes(dir_->File("unclosed.pb.zst"), golden.substr(0, frames.back()));
    fs::copy(Example(), dir_->File("bad_header"));
    bool patched = false;
    for (const auto& entry : fs::directory_iterator(dir_->File("bad_header"))) {
      if (entry.path().filename().string().rfind("worker2_", 0) != 0) continue;
      std::string bytes = ReadFileBytes(entry.path());
      bytes[16] = 99;  // The preamble's schema major (little-endian u32 after "LUMOSPB\0").
      WriteFileBytes(entry.path(), bytes);
      patched = true;
    }
    ASSERT_TRUE(patched);
    // import kineto reads Kineto JSON instead: the same kinds of bad input, of that format.
    WriteFileBytes(dir_->File("empty.json"), "");
    WriteFileBytes(dir_->File("random.json"), RandomBytes(4096));
    // costs fit reads CSV tables: the same kinds of bad input, of that format (and traces
    // beside a table); costs predict a model file and a query table.
    WriteFileBytes(dir_->File("q.csv"),
                   "op,dtype,ranks,bytes\nall_reduce,bfloat16,64,1073741824\n");
    WriteFileBytes(dir_->File("empty.csv"), "");
    WriteFileBytes(dir_->File("random.csv"), RandomBytes(4096));
    if (access(SharedCosts().c_str(), R_OK) == 0) {
      WriteFileBytes(dir_->File("good.csv"), ReadFileBytes(SharedCosts()));
    }
    if (access(SharedKineto().c_str(), R_OK) == 0) {
      const std::string kineto = ReadFileBytes(SharedKineto());
      WriteFileBytes(dir_->File("good.json.gz"), kineto);
      WriteFileBytes(dir_->File("truncated.json.gz"), kineto.substr(0, kineto.size() / 2));
    }
  }
  static void TearDownTestSuite() { dir_.reset(); }

 protected:
  static std::string In(const std::string& name) { return dir_->File(name); }
  static std::unique_ptr<TempDir> dir_;
};

std::unique_ptr<TempDir> CommandContractTest::dir_;

// The input argument(s) of `row`; the output options are added by CommandLine().
std::string InputArgs(const Row& row, const std::string& dir) {
  const bool import = row.command == "import";
  auto file = [&dir](const std::string& name) { return dir + "/" + name; };
  if (row.command == "costs fit") {
    switch (row.input) {
      case Input::kMissingFile:
        return file("missing.csv");
      case Input::kMissingAmongGood:
        return file("good.csv") + " " + file("missing.csv");
      case Input::kEmptyFile:
        return file("empty.csv");
      case Input::kNotATrace:
        return file("random.csv");
      case Input::kTruncatedTrace:
        return file("good.csv") + " " + file("truncated.pb.zst");
      case Input::kUnclosedTrace:
        return file("good.csv") + " " + file("unclosed.pb.zst");
      case Input::kBadHeaderAmongGood:
        return file("good.csv") + " " + file("bad_header");
      default:
        return file("good.csv");
    }
  }
  if (row.command == "costs predict") {
    switch (row.input) {
      case Input::kMissingFile:
        return file("missing.json") + " " + file("q.csv");
      case Input::kMissingAmongGood:
        return CostModel() + " " + file("missing.csv");
      case Input::kEmptyFile:
        return CostModel() + " " + file("empty.csv");
      case Input::kNotATrace:
        return file("random.json") + " " + file("q.csv");
      default:
        return CostModel() + " " + file("q.csv");
    }
  }
  if (row.command == "diff") {
    // Two inputs, A and B: the same one twice (what is wrong with it is said once), or the
    // example against a missing path.
    if (row.input == Input::kMissingAmongGood) return Example() + " " + file("missing.pb.zst");
    Row single = row;
    single.command = "replay";
    const std::string one = InputArgs(single, dir);
    return one + " " + one;
  }
  switch (row.input) {
    case Input::kSoundWithOptEquals:
    case Input::kUnknownOption:
    case Input::kFlagAsValue:
    case Input::kOutputToDevFull:
      return import ? file("good.json.gz") : Example();
    case Input::kMissingFile:
      return file(import ? "missing.json" : "missing.pb.zst");
    case Input::kMissingAmongGood:
      return import ? file("good.json.gz") + " " + file("missing.json")
                    : Example() + " " + file("missing.pb.zst");
    case Input::kEmptyFile:
      return file(import ? "empty.json" : "empty.pb.zst");
    case Input::kNotATrace:
      return file(import ? "random.json" : "random.pb.zst");
    case Input::kTruncatedTrace:
      return file(import ? "truncated.json.gz" : "truncated.pb.zst");
    case Input::kUnclosedTrace:
      return file("unclosed.pb.zst");
    case Input::kBadHeaderAmongGood:
      return import ? file("good.json.gz") + " " + file("random.json") : file("bad_header");
  }
  return "";
}

// The whole command line of `row`, writing its outputs under `out`.
std::string CommandLine(const Row& row, const std::string& inputs, const std::string& out) {
  const std::string in = InputArgs(row, inputs);
  std::string args;
  const bool opt_equals = row.input == Input::kSoundWithOptEquals;
  if (row.command == "inspect") {
    args = "inspect " + in + (opt_equals ? " --json" : "");
  } else if (row.command == "export") {
    args = "export " + in +
           (opt_equals                         ? " --output=" + out + "/x.json --no-flows"
            : row.input == Input::kFlagAsValue ? " -o --quiet"
                                               : " -o " + out + "/x.json");
  } else if (row.command == "replay") {
    args = "replay " + in +
           (opt_equals ? " --iteration=ProfilerStep.* --scale=comm=2 --job=dlrm_kineto"
            : row.input == Input::kFlagAsValue ? " --timeline --json"
                                               : "");
  } else if (row.command == "structure") {
    args = "structure " + in +
           (opt_equals ? " --iteration=ProfilerStep.* --base=hidden=512 --job=dlrm_kineto --json"
            : row.input == Input::kFlagAsValue ? " --base --json"
                                               : "");
  } else if (row.command == "estimate") {
    args = "estimate " + in +
           (opt_equals ? " --set=gpu=A100-SXM4-80GB --iteration=ProfilerStep.* --job=dlrm_kineto "
                         "--json"
            : row.input == Input::kFlagAsValue ? " --set --json"
                                               : " --set gpu=A100-SXM4-80GB");
  } else if (row.command == "summarize") {
    args =
        "summarize " + in +
        (opt_equals ? " --output=" + out + "/s --format=csv --iteration=ProfilerStep.* --net=ib800"
         : row.input == Input::kFlagAsValue ? " -o --force"
                                            : " -o " + out + "/s");
  } else if (row.command == "diff") {
    args = "diff " + in +
           (opt_equals ? " --iteration=ProfilerStep.* --job=dlrm_kineto --top=3 --json"
            : row.input == Input::kFlagAsValue ? " --timeline --json"
                                               : "");
  } else if (row.command == "synth") {
    args = "synth " + in +
           (opt_equals ? " --output=" + out + "/synth --ranks=16 --jitter=0.1 --seed=3"
            : row.input == Input::kFlagAsValue ? " -o --ranks 56"
                                               : " -o " + out + "/synth --ranks 56");
  } else if (row.command == "import") {
    args = "import kineto " + in +
           (opt_equals ? " --output=" + out + "/imported --zstd-level=3 --job-id=contract"
            : row.input == Input::kFlagAsValue ? " -o --job-id x"
                                               : " -o " + out + "/imported");
  } else if (row.command == "costs fit") {
    args = "costs fit " + in +
           (opt_equals                         ? " --output=" + out + "/m.json --net=ib800"
            : row.input == Input::kFlagAsValue ? " -o --specs x"
                                               : " -o " + out + "/m.json");
  } else if (row.command == "costs predict") {
    args = "costs predict " + in +
           (opt_equals                         ? " --gpu=H100-SXM5-80GB --net=ib800"
            : row.input == Input::kFlagAsValue ? " --gpu --net ib400"
                                               : " --gpu H100-SXM5-80GB");
  }
  if (row.input == Input::kUnknownOption) args += " --bogus";
  // Run from `out`: a value taken for a file name ("-o --quiet") would land there.
  std::string line = "cd " + out + " && " + LumosModelBinary() + " " + args;
  if (row.input == Input::kOutputToDevFull) line += " >/dev/full";
  return line;
}

std::string Expand(std::string pattern, const std::string& command) {
  const std::string cmd = "lumos-model " + command;
  for (size_t at; (at = pattern.find("{cmd}")) != std::string::npos;) {
    pattern.replace(at, 5, cmd);
  }
  return pattern;
}

TEST_P(CommandContractTest, ExitStatusStderrAndStdout) {
  const Row& row = GetParam();
  if (row.input == Input::kOutputToDevFull && access("/dev/full", W_OK) != 0) {
    GTEST_SKIP() << "no /dev/full here";
  }
  if (row.command == "import" && access(SharedKineto().c_str(), R_OK) != 0) {
    GTEST_SKIP() << "no " << SharedKineto();
  }
  if (row.command == "costs fit" && access(SharedCosts().c_str(), R_OK) != 0) {
    GTEST_SKIP() << "no " << SharedCosts();
  }
  TempDir out;
  const std::string line = CommandLine(row, dir_->path(), out.path());
  const ::lumos::testing::CommandResult r = RunCommand(line);
  EXPECT_EQ(r.exit_code, row.exit_code) << line << "\nstderr: " << r.err;
  EXPECT_TRUE(std::regex_match(r.err, std::regex(Expand(row.stderr_pattern, row.command))))
      << line << "\nstderr: " << r.err << "\npattern: " << row.stderr_pattern;
  if (row.stdout_has.empty()) {
    EXPECT_EQ(r.out, "") << line;
  }
  for (const std::string& part : row.stdout_has) {
    EXPECT_NE(r.out.find(part), std::string::npos) << line << "\nmissing: " << part << "\n"
                                                   << r.out;
  }
  // Bad arguments write nothing (no file named after an option either).
  if (row.exit_code == 2) {
    EXPECT_TRUE(fs::is_empty(out.path())) << line;
  }
}

// One error line per problem, naming the file.
std::string OneLine(const std::string& what) { return "{cmd}: [^\\n]*" + what + "[^\\n]*\\n"; }

std::vector<Row> Rows() {
  const std::string kUsageHint = "\\(run `{cmd} --help` for usage\\)\\n";
  const std::string kUnknown = "{cmd}: unknown option '--bogus' \\([^\\n]*\\)\\n" + kUsageHint;
  const std::string kDevFull = "{cmd}: cannot write to standard output: No space left on device\\n";
  const std::string kMissing = OneLine("/missing\\.pb\\.zst: no such file or directory");
  const std::string kEmpty = OneLine("/empty\\.pb\\.zst: byte offset 0: ");
  const std::string kRandom = OneLine("/random\\.pb\\.zst: byte offset 0: not a Lumos trace");
  const std::string kTruncated =
      OneLine("/truncated\\.pb\\.zst: byte offset \\d+: truncated frame");
  const std::string kUnclosed = OneLine("/unclosed\\.pb\\.zst: no trailer: ");
  const std::string kBadHeader =
      OneLine("/worker2_[^/\\n]*\\.pb\\.zst: byte offset 16: schema major version 99");
  auto value_of = [&kUsageHint](const std::string& option, const std::string& got) {
    return "{cmd}: " + option + " needs a value, got '" + got + "'[^\\n]*\\n" + kUsageHint;
  };
  const std::string kGoldenReport = "job golden: 1 rank(s), 14 events";
  std::vector<Row> rows = {
      {"inspect", Input::kSoundWithOptEquals, 0, "", {"\"files\": [", "\"closed_cleanly\": true"}},
      {"inspect", Input::kMissingFile, 1, kMissing, {}},
      {"inspect",
       Input::kMissingAmongGood,
       1,
       kMissing,
       {"job dlrm_kineto: 8 file(s), ranks 0 1 2 3 4 5 6 7 of 8"}},
      {"inspect", Input::kEmptyFile, 1, kEmpty, {}},
      {"inspect", Input::kNotATrace, 1, kRandom, {}},
      {"inspect",
       Input::kTruncatedTrace,
       1,
       kTruncated,
       {"truncated.pb.zst\n", "DAMAGED (see below)"}},
      {"inspect",
       Input::kUnclosedTrace,
       1,
       kUnclosed,
       {"unclosed.pb.zst\n", "no trailer (the writer did not close it", " kernel 1 "}},
      {"inspect",
       Input::kBadHeaderAmongGood,
       1,
       kBadHeader,
       {"job dlrm_kineto: 7 file(s), ranks 0 1 3 4 5 6 7 of 8; missing 2"}},
      {"inspect", Input::kUnknownOption, 2, kUnknown, {}},
      // inspect has no option that takes a value: no FlagAsValue row.
      {"inspect", Input::kOutputToDevFull, 1, kDevFull, {}},

      {"export", Input::kSoundWithOptEquals, 0, "", {"x.json: ", "from 8 trace files"}},
      {"export", Input::kMissingFile, 1, kMissing, {}},
      {"export", Input::kMissingAmongGood, 1, kMissing, {"from 8 trace files"}},
      {"export", Input::kEmptyFile, 1, kEmpty, {}},
      {"export", Input::kNotATrace, 1, kRandom, {}},
      {"export",
       Input::kTruncatedTrace,
       1,
       kTruncated,
       {"x.json: 13 events", "from 1 trace file "}},
      {"export", Input::kUnclosedTrace, 1, kUnclosed, {"from 1 trace file "}},
      {"export", Input::kBadHeaderAmongGood, 1, kBadHeader, {"from 7 trace files"}},
      {"export", Input::kUnknownOption, 2, kUnknown, {}},
      {"export", Input::kFlagAsValue, 2, value_of("-o", "--quiet"), {}},
      {"export", Input::kOutputToDevFull, 1, kDevFull, {}},

      {"replay",
       Input::kSoundWithOptEquals,
       0,
       "",
       {"job dlrm_kineto: 8 rank(s)", "--scale comm=2", "ranges matching 'ProfilerStep.*'"}},
      {"replay", Input::kMissingFile, 1, kMissing, {}},
      {"replay", Input::kMissingAmongGood, 1, kMissing, {"job dlrm_kineto: 8 rank(s)"}},
      {"replay", Input::kEmptyFile, 1, kEmpty, {}},
      {"replay", Input::kNotATrace, 1, kRandom, {}},
      {"replay", Input::kTruncatedTrace, 1, kTruncated, {kGoldenReport, "rank 1 is cut short"}},
      {"replay", Input::kUnclosedTrace, 1, kUnclosed, {kGoldenReport, "has no trailer"}},
      {"replay",
       Input::kBadHeaderAmongGood,
       1,
       kBadHeader,
       {"job dlrm_kineto: 7 rank(s)", "ranks missing: 2", "critical path"}},
      {"replay", Input::kUnknownOption, 2, kUnknown, {}},
      {"replay", Input::kFlagAsValue, 2, value_of("--timeline", "--json"), {}},
      {"replay", Input::kOutputToDevFull, 1, kDevFull, {}},

      {"structure",
       Input::kSoundWithOptEquals,
       0,
       "",
       {"\"job\":\"dlrm_kineto\"", "\"iteration_method\":\"ranges matching 'ProfilerStep.*'\"",
        "\"hidden\":{\"value\":512,\"origin\":\"given\""}},
      {"structure", Input::kMissingFile, 1, kMissing, {}},
      {"structure", Input::kMissingAmongGood, 1, kMissing, {"job dlrm_kineto: 8 rank(s)"}},
      {"structure", Input::kEmptyFile, 1, kEmpty, {}},
      {"structure", Input::kNotATrace, 1, kRandom, {}},
      {"structure", Input::kTruncatedTrace, 1, kTruncated, {"job golden: 1 rank(s)", "cut short"}},
      {"structure", Input::kUnclosedTrace, 1, kUnclosed, {"job golden: 1 rank(s)", "no trailer"}},
      {"structure",
       Input::kBadHeaderAmongGood,
       1,
       kBadHeader,
       {"job dlrm_kineto: 7 rank(s)", "ranks missing: 2"}},
      {"structure", Input::kUnknownOption, 2, kUnknown, {}},
      {"structure", Input::kFlagAsValue, 2, value_of("--base", "--json"), {}},
      {"structure", Input::kOutputToDevFull, 1, kDevFull, {}},

      {"estimate",
       Input::kSoundWithOptEquals,
       0,
       "",
       {"\"job\":\"dlrm_kineto\"", "\"gpu\":\"A100-SXM4-80GB\""}},
      {"estimate", Input::kMissingFile, 1, kMissing, {}},
      {"estimate", Input::kMissingAmongGood, 1, kMissing, {"job dlrm_kineto, 8 rank(s)"}},
      {"estimate", Input::kEmptyFile, 1, kEmpty, {}},
      {"estimate", Input::kNotATrace, 1, kRandom, {}},
      {"estimate", Input::kTruncatedTrace, 1, kTruncated, {"job golden, 1 rank(s)", "cut short"}},
      {"estimate", Input::kUnclosedTrace, 1, kUnclosed, {"job golden, 1 rank(s)", "no trailer"}},
      {"estimate",
       Input::kBadHeaderAmongGood,
       1,
       kBadHeader,
       {"job dlrm_kineto, 7 rank(s)", "ranks missing: 2"}},
      {"estimate", Input::kUnknownOption, 2, kUnknown, {}},
      {"estimate", Input::kFlagAsValue, 2, value_of("--set", "--json"), {}},
      {"estimate", Input::kOutputToDevFull, 1, kDevFull, {}},

      // summarize: a window that cannot be read is one line, the others are summarized.
      {"summarize", Input::kSoundWithOptEquals, 0, "", {"/s: 1 window(s), ", " rows (csv)\n"}},
      {"summarize", Input::kMissingFile, 1, kMissing, {}},
      {"summarize", Input::kMissingAmongGood, 1, kMissing, {"/s: 1 window(s), 8 iteration"}},
      {"summarize", Input::kEmptyFile, 1, kEmpty, {}},
      {"summarize", Input::kNotATrace, 1, kRandom, {}},
      {"summarize", Input::kTruncatedTrace, 1, kTruncated, {"/s: 1 window(s), "}},
      {"summarize", Input::kUnclosedTrace, 1, kUnclosed, {"/s: 1 window(s), "}},
      {"summarize", Input::kBadHeaderAmongGood, 1, kBadHeader, {"/s: 1 window(s), 7 iteration"}},
      {"summarize", Input::kUnknownOption, 2, kUnknown, {}},
      {"summarize", Input::kFlagAsValue, 2, value_of("-o", "--force"), {}},
      {"summarize", Input::kOutputToDevFull, 1, kDevFull, {}},

      // diff: A and B the same input; a side with nothing readable is one line naming it.
      {"diff",
       Input::kSoundWithOptEquals,
       0,
       "",
       {"\"format\":\"lumos-diff\"", "\"job\":\"dlrm_kineto\""}},
      {"diff", Input::kMissingFile, 1, kMissing, {}},
      {"diff", Input::kMissingAmongGood, 1, kMissing, {}},
      {"diff", Input::kEmptyFile, 1, kEmpty, {}},
      {"diff", Input::kNotATrace, 1, kRandom, {}},
      {"diff", Input::kTruncatedTrace, 1, kTruncated, {"B is as fast as A per iteration"}},
      {"diff", Input::kUnclosedTrace, 1, kUnclosed, {"B is as fast as A per iteration"}},
      {"diff",
       Input::kBadHeaderAmongGood,
       1,
       kBadHeader,
       {"(job dlrm_kineto, 7 rank(s), ", "B is as fast as A per iteration"}},
      {"diff", Input::kUnknownOption, 2, kUnknown, {}},
      {"diff", Input::kFlagAsValue, 2, value_of("--timeline", "--json"), {}},
      {"diff", Input::kOutputToDevFull, 1, kDevFull, {}},

      {"synth", Input::kSoundWithOptEquals, 0, "", {"/synth: 16 files, "}},
      {"synth", Input::kMissingFile, 1, kMissing, {}},
      {"synth", Input::kMissingAmongGood, 1, kMissing, {"/synth: 56 files, "}},
      {"synth", Input::kEmptyFile, 1, kEmpty, {}},
      {"synth", Input::kNotATrace, 1, kRandom, {}},
      {"synth", Input::kTruncatedTrace, 1, kTruncated, {"/synth: 56 files, 616 events"}},
      {"synth", Input::kUnclosedTrace, 1, kUnclosed, {"/synth: 56 files, 616 events"}},
      {"synth", Input::kBadHeaderAmongGood, 1, kBadHeader, {"/synth: 56 files, "}},
      {"synth", Input::kUnknownOption, 2, kUnknown, {}},
      {"synth", Input::kFlagAsValue, 2, value_of("-o", "--ranks"), {}},
      {"synth", Input::kOutputToDevFull, 1, kDevFull, {}},

      // import is all or nothing (modeler/import/kineto_import.h): a bad input fails the
      // whole import, with one line naming it, and nothing is written.
      {"import", Input::kSoundWithOptEquals, 0, "", {"/imported: ", " 3 kernels, "}},
      {"import", Input::kMissingFile, 1, OneLine("missing\\.json"), {}},
      {"import", Input::kMissingAmongGood, 1, OneLine("missing\\.json"), {}},
      {"import", Input::kEmptyFile, 1, OneLine("/empty\\.json: "), {}},
      {"import", Input::kNotATrace, 1, OneLine("/random\\.json: not valid JSON"), {}},
      {"import",
       Input::kTruncatedTrace,
       1,
       OneLine("/truncated\\.json\\.gz: gzip data truncated"),
       {}},
      // A Kineto trace has no trailer: no UnclosedTrace row.
      {"import", Input::kBadHeaderAmongGood, 1, OneLine("/random\\.json: not valid JSON"), {}},
      {"import", Input::kUnknownOption, 2, kUnknown, {}},
      {"import", Input::kFlagAsValue, 2, value_of("-o", "--job-id"), {}},
      {"import", Input::kOutputToDevFull, 1, kDevFull, {}},

      // costs fit is all or nothing too: a table it cannot read fails the fit, one line names
      // it, and no model is written. Tables have no trailer and no header version: no
      // Truncated, Unclosed or BadHeader rows.
      {"costs fit",
       Input::kSoundWithOptEquals,
       0,
       "",
       {"/m.json: 1 GEMM calibration(s), 0 collective calibration(s), 0 kernel calibration(s) from "
        "1 table(s) and 0 "
        "traced job(s)",
        "GEMM A100-SXM4-80GB bf16: 9240 shapes"}},
      {"costs fit",
       Input::kMissingFile,
       1,
       OneLine("/missing\\.csv: no such file or directory"),
       {}},
      {"costs fit",
       Input::kMissingAmongGood,
       1,
       OneLine("/missing\\.csv: no such file or directory"),
       {}},
      {"costs fit", Input::kEmptyFile, 1, OneLine("/empty\\.csv: empty \\(no header line\\)"), {}},
      {"costs fit", Input::kNotATrace, 1, OneLine("/random\\.csv"), {}},
      // Traces beside a table follow the trace commands' contract: a damaged one is named and
      // what could be read is used (here: it calibrates nothing, and says so).
      {"costs fit",
       Input::kTruncatedTrace,
       1,
       kTruncated,
       {"1 GEMM calibration(s), 0 collective calibration(s), 0 kernel calibration(s) from 1 "
        "table(s) and 1 traced job(s)",
        "  job golden (1 rank(s), NVIDIA H200): no collective operations; GEMM: "}},
      {"costs fit",
       Input::kUnclosedTrace,
       1,
       kUnclosed,
       {"and 1 traced job(s)", "  job golden (1 rank(s), NVIDIA H200): "}},
      {"costs fit",
       Input::kBadHeaderAmongGood,
       1,
       kBadHeader,
       {"and 1 traced job(s)", "  job dlrm_kineto (7 rank(s), Tesla V100-SXM2-32GB): "}},
      {"costs fit", Input::kUnknownOption, 2, kUnknown, {}},
      {"costs fit", Input::kFlagAsValue, 2, value_of("-o", "--specs"), {}},
      {"costs fit", Input::kOutputToDevFull, 1, kDevFull, {}},

      // costs predict reads a model file and a query table, all or nothing: one line names
      // what cannot be read and nothing is written. (Bad rows: costs_command_test.cc.)
      {"costs predict",
       Input::kSoundWithOptEquals,
       0,
       "",
       {"op,dtype,ranks,bytes,predicted_us,source\nall_reduce,bfloat16,64,1073741824,",
        ",model only (NCCL's constants)\n"}},
      {"costs predict", Input::kMissingFile, 1, OneLine("/missing\\.json: cannot open: "), {}},
      {"costs predict", Input::kMissingAmongGood, 1, OneLine("/missing\\.csv: cannot open: "), {}},
      {"costs predict",
       Input::kEmptyFile,
       1,
       OneLine("/empty\\.csv: empty \\(no header line\\)"),
       {}},
      {"costs predict", Input::kNotATrace, 1, OneLine("/random\\.json: not valid JSON"), {}},
      {"costs predict", Input::kUnknownOption, 2, kUnknown, {}},
      {"costs predict", Input::kFlagAsValue, 2, value_of("--gpu", "--net"), {}},
      {"costs predict", Input::kOutputToDevFull, 1, kDevFull, {}},
  };
  return rows;
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, CommandContractTest, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           // "costs fit" -> "CostsFit".
                           std::string name;
                           bool upper = true;
                           for (char c : info.param.command) {
                             if (c == ' ') {
                               upper = true;
                               continue;
                             }
                             name += upper ? static_cast<char>(c - 'a' + 'A') : c;
                             upper = false;
                           }
                           return name + "_" + InputName(info.param.input);
                         });

const char* const kCommands[] = {"inspect",   "export", "replay", "structure", "estimate", "search",
                                 "summarize", "diff",   "synth",  "import",    "costs"};

// --help: on stdout, exit 0, with the options and the exit statuses; every option it lists is
// one the command knows (the help is generated from the same declarations).
TEST(CommandHelpTest, EveryCommandsHelpListsOptionsItAccepts) {
  const std::regex option_line("^  (?:(-[a-z]), )?\\s*(--[a-z-]+)");
  for (const char* command : kCommands) {
    const auto help = RunCommand(LumosModelBinary() + " " + command + " --help");
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_EQ(help.err, "") << command;
    EXPECT_EQ(help.out.rfind(std::string("usage: lumos-model ") + command + " ", 0), 0u)
        << help.out;
    EXPECT_NE(help.out.find("\noptions:\n"), std::string::npos) << help.out;
    EXPECT_NE(help.out.find("\nexit status: 0 "), std::string::npos) << help.out;
    EXPECT_NE(help.out.find(" 2 bad arguments."), std::string::npos) << help.out;
    std::vector<std::string> names;
    for (size_t start = 0, end; start < help.out.size(); start = end + 1) {
      end = help.out.find('\n', start);
      const std::string line = help.out.substr(start, end - start);
      std::smatch match;
      if (!std::regex_search(line, match, option_line)) continue;
      if (match[1].matched) names.push_back(match[1]);
      names.push_back(match[2]);
    }
    EXPECT_GE(names.size(), 3u) << command << ": " << help.out;
    for (const std::string& name : names) {
      if (name == "-h" || name == "--help") continue;
      const auto r = RunCommand(LumosModelBinary() + " " + command + " " + name);
      EXPECT_EQ(r.err.find("unknown option"), std::string::npos) << command << " " << name;
    }
  }
}

TEST(CommandHelpTest, VersionIsTheProjectsVersion) {
  const auto r = RunCommand(LumosModelBinary() + " --version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("lumos-model ") + LUMOS_PROJECT_VERSION + "\n");
  EXPECT_EQ(r.err, "");
}

TEST(CommandHelpTest, NoOrUnknownCommandIsAUsageError) {
  const auto none = RunCommand(LumosModelBinary());
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.out, "");
  EXPECT_EQ(
      none.err,
      "lumos-model: no command given (replay, structure, estimate, search, summarize, diff, synth, "
      "inspect, export, import, costs)\n"
      "(run `lumos-model --help` for usage)\n");
  const auto unknown = RunCommand(LumosModelBinary() + " frobnicate x");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.rfind("lumos-model: unknown command 'frobnicate' (commands: ", 0), 0u)
      << unknown.err;
  const auto help = RunCommand(LumosModelBinary() + " --help >/dev/full");
  if (access("/dev/full", W_OK) == 0) {
    EXPECT_EQ(help.exit_code, 1);
    EXPECT_EQ(help.err, "lumos-model: cannot write to standard output: No space left on device\n");
  }
}

}  // namespace
}  // namespace lumos::modeler
