// The command-line parser of lumos-model and lumos-run: both spellings of a value, `--`, values
// that look like options, repeats, unknown options, value checks, and the generated help.
#include "base/cli/arg_parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace lumos::cli {
namespace {

// A parser like a lumos-model command's, bound to the fields below.
struct Command {
  std::string output, job;
  bool json = false, quiet = false;
  int level = 19;
  double jitter = 0.05;
  int64_t offset = 0;
  std::string clock = "tsc";
  std::vector<std::string> scales, inputs;
  ArgParser parser{"lumos-model demo", "FILE... -o OUT [options]"};

  Command() {
    parser.Description("Demo.")
        .String("-o, --output", "OUT", "where to write", &output)
        .Flag("--json", "JSON instead of text", &json)
        .Flag("-q, --quiet", "print nothing when all goes well", &quiet)
        .Int("--level", "N", "compression level", 1, 19, &level)
        .Double("--jitter", "F", "a factor", 0.0, 1.0, /*max_open=*/true, &jitter)
        .Int<int64_t>("--offset", "NS", "may be negative", -1000, 1000, &offset)
        .Choice("--clock", "tsc|monotonic", "how records are timed", {"tsc", "monotonic"}, &clock)
        .Strings("--scale", "SPEC", "repeatable", &scales)
        .Check([](const std::string& spec) {
          return spec.find('=') == std::string::npos
                     ? Status::Error("--scale '" + spec + "': expected TARGET=F")
                     : Status::Ok();
        })
        .Section("more options:")
        .String("--job", "ID", "the job", &job)
        .Positionals("FILE...", "input", 1, &inputs)
        .Epilogue("exit status: 0 ok.");
  }
  // The error message of parsing `args` ("" when it parses).
  std::string Error(const std::vector<std::string>& args) {
    Status status = parser.Parse(args);
    return status.ok() ? "" : status.message();
  }
};

TEST(ArgParserTest, ValuesTakeEitherSpelling) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"in", "-o", "out", "--level", "3"},
        std::vector<std::string>{"--output=out", "in", "--level=3"},
        std::vector<std::string>{"--output", "out", "--level", "3", "in"}}) {
    Command c;
    ASSERT_EQ(c.Error(args), "");
    EXPECT_EQ(c.output, "out");
    EXPECT_EQ(c.level, 3);
    EXPECT_EQ(c.inputs, std::vector<std::string>{"in"});
  }
}

TEST(ArgParserTest, DoubleDashEndsTheOptionsAndALoneDashIsPositional) {
  Command c;
  ASSERT_EQ(c.Error({"-", "--json", "--", "--quiet", "-o"}), "");
  EXPECT_TRUE(c.json);
  EXPECT_FALSE(c.quiet);
  EXPECT_EQ(c.inputs, (std::vector<std::string>{"-", "--quiet", "-o"}));
}

TEST(ArgParserTest, AValueThatLooksLikeAnOptionIsRefused) {
  Command c;
  EXPECT_EQ(c.Error({"in", "-o", "--quiet"}),
            "-o needs a value, got '--quiet' (for a value that starts with '-', write "
            "--output=VALUE)");
  EXPECT_EQ(Command().Error({"in", "--job", "-q"}).rfind("--job needs a value, got '-q'", 0), 0u);
  EXPECT_EQ(Command().Error({"in", "-o", "--"}).rfind("-o needs a value, got '--'", 0), 0u);
  Command written;  // The spelling that says it is a value.
  ASSERT_EQ(written.Error({"in", "--output=--quiet"}), "");
  EXPECT_EQ(written.output, "--quiet");
  EXPECT_FALSE(written.quiet);
}

TEST(ArgParserTest, ANegativeNumberIsTheValueOfAnOptionThatTakesOne) {
  Command c;
  ASSERT_EQ(c.Error({"in", "--offset", "-300"}), "");
  EXPECT_EQ(c.offset, -300);
  // Not for an option whose values are never negative.
  EXPECT_EQ(Command().Error({"in", "--level", "-3"}).rfind("--level needs a value, got '-3'", 0),
            0u);
}

TEST(ArgParserTest, MissingEmptyAndUnwantedValues) {
  EXPECT_EQ(Command().Error({"in", "-o"}), "-o needs a value");
  EXPECT_EQ(Command().Error({"in", "--output="}), "--output needs a value");
  EXPECT_EQ(Command().Error({"in", "-o", ""}), "-o needs a value, got ''");
  EXPECT_EQ(Command().Error({"in", "--json=yes"}), "--json takes no value, got '--json=yes'");
}

TEST(ArgParserTest, AValuedOptionGivenTwiceIsRefusedUnlessRepeatable) {
  EXPECT_EQ(Command().Error({"in", "-o", "a", "--output", "b"}), "--output given twice");
  Command c;
  ASSERT_EQ(c.Error({"in", "--scale", "comm=2", "--json", "--json", "--scale=host=0.5"}), "");
  EXPECT_EQ(c.scales, (std::vector<std::string>{"comm=2", "host=0.5"}));
}

TEST(ArgParserTest, AnUnknownOptionNamesTheClosestOne) {
  EXPECT_EQ(Command().Error({"in", "--josn"}), "unknown option '--josn' (did you mean --json?)");
  EXPECT_EQ(Command().Error({"in", "--outptu=x"}),
            "unknown option '--outptu' (did you mean --output?)");
  EXPECT_EQ(Command().Error({"in", "-json"}), "unknown option '-json' (did you mean --json?)");
  EXPECT_EQ(Command().Error({"in", "--jitt", "1"}),
            "unknown option '--jitt' (did you mean --jitter?)");
  // Nothing close: the options there are.
  EXPECT_EQ(Command().Error({"in", "--frobnicate"}),
            "unknown option '--frobnicate' (options: --output, --json, --quiet, --level, "
            "--jitter, --offset, --clock, --scale, --job, --help)");
}

TEST(ArgParserTest, ValuesAreChecked) {
  for (const char* bad : {"0", "20", "abc", "3x", "", " 3", "+3", "99999999999999999999"}) {
    EXPECT_EQ(Command().Error({"in", std::string("--level=") + bad}),
              *bad == '\0' ? std::string("--level needs a value")
                           : std::string("--level must be an integer in 1..19, got '") + bad + "'")
        << bad;
  }
  for (const char* bad : {"1", "-0.5", "nan", "inf", "0.5x"}) {
    EXPECT_EQ(Command().Error({"in", std::string("--jitter=") + bad}),
              std::string("--jitter must be a number in [0, 1), got '") + bad + "'")
        << bad;
  }
  EXPECT_EQ(Command().Error({"in", "--clock", "wall"}),
            "--clock must be one of tsc, monotonic, got 'wall'");
  EXPECT_EQ(Command().Error({"in", "--scale", "comm"}), "--scale 'comm': expected TARGET=F");
  Command c;
  ASSERT_EQ(c.Error({"in", "--jitter", "0", "--clock", "monotonic", "--level", "19"}), "");
  EXPECT_EQ(c.jitter, 0.0);
  EXPECT_EQ(c.clock, "monotonic");
  EXPECT_EQ(c.level, 19);
}

TEST(ArgParserTest, RequiredOptionsAndPositionals) {
  std::string out;
  std::vector<std::string> inputs;
  ArgParser parser("lumos-model demo", "FILE|DIR|GLOB... -o OUT");
  parser.String("-o, --output", "OUT", "where", &out).Required();
  parser.Positionals("FILE|DIR|GLOB...", "input", 1, &inputs);
  EXPECT_EQ(parser.Parse({"a"}).message(), "-o OUT is required");
  std::vector<std::string> none_given;
  ArgParser no_input("lumos-model demo", "FILE|DIR|GLOB...");
  no_input.Positionals("FILE|DIR|GLOB...", "input", 1, &none_given);
  EXPECT_EQ(no_input.Parse({}).message(), "no input given (FILE|DIR|GLOB...)");
  ArgParser none("lumos-model demo", "");
  EXPECT_EQ(none.Parse({"x"}).message(), "unexpected argument 'x'");
}

// lumos-run: the options end at the command, which keeps its own.
TEST(ArgParserTest, StopAtFirstPositionalLeavesTheCommandLineAlone) {
  std::string dir;
  std::vector<std::string> command;
  ArgParser parser("lumos-run", "[-o DIR] [--] COMMAND [ARGS...]");
  parser.String("-o", "DIR", "trace directory", &dir)
      .Positionals("COMMAND [ARGS...]", "command", 1, &command)
      .StopAtFirstPositional();
  ASSERT_TRUE(parser.Parse({"-o", "d", "python", "-o", "x", "--help", "--"}).ok());
  EXPECT_EQ(dir, "d");
  EXPECT_FALSE(parser.help_requested());
  EXPECT_EQ(command, (std::vector<std::string>{"python", "-o", "x", "--help", "--"}));
  ArgParser again("lumos-run", "");
  std::vector<std::string> after_dashes;
  again.Positionals("COMMAND", "command", 1, &after_dashes).StopAtFirstPositional();
  ASSERT_TRUE(again.Parse({"--", "-x", "y"}).ok());
  EXPECT_EQ(after_dashes, (std::vector<std::string>{"-x", "y"}));
  std::vector<std::string> no_command;
  ArgParser empty("lumos-run", "");
  empty.Positionals("COMMAND", "command", 1, &no_command).StopAtFirstPositional();
  EXPECT_EQ(empty.Parse({}).message(), "no command given (COMMAND)");
}

// The help is generated: every option a parser knows is in it, under its section's heading,
// with the description and epilogue.
TEST(ArgParserTest, HelpListsEveryDeclaredOptionUnderItsHeading) {
  Command c;
  c.parser.Version("lumos-model 1.2.3");
  const std::string help = c.parser.Help();
  EXPECT_EQ(help.rfind("usage: lumos-model demo FILE... -o OUT [options]\n\nDemo.\n", 0), 0u)
      << help;
  const size_t options = help.find("\noptions:\n");
  const size_t more = help.find("\nmore options:\n");
  ASSERT_NE(options, std::string::npos) << help;
  ASSERT_NE(more, std::string::npos) << help;
  for (const std::string& name : c.parser.OptionNames()) {
    const size_t at = help.find(" " + name + (name == "-o" || name == "-q" ? "," : ""));
    ASSERT_NE(at, std::string::npos) << name << "\n" << help;
    EXPECT_GT(at, options) << name;
    if (name == "--job") {
      EXPECT_GT(at, more);
    } else {
      EXPECT_LT(at, more) << name;
    }
  }
  EXPECT_NE(help.find("  -o, --output OUT "), std::string::npos) << help;
  EXPECT_NE(help.find("      --level N "), std::string::npos) << help;
  EXPECT_NE(help.find("  -h, --help "), std::string::npos) << help;
  EXPECT_NE(help.find("      --version "), std::string::npos) << help;
  EXPECT_NE(help.find("\n\nexit status: 0 ok.\n"), std::string::npos) << help;
  for (size_t start = 0, end; start < help.size(); start = end + 1) {
    end = help.find('\n', start);
    EXPECT_LE(end - start, 92u) << help.substr(start, end - start);
    EXPECT_NE(help[end - 1], ' ') << "trailing blank: " << help.substr(start, end - start);
  }
}

std::string Drain(std::FILE* file) {
  std::string text;
  std::rewind(file);
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), file)) > 0) text.append(buf, n);
  std::fclose(file);
  return text;
}

TEST(ArgParserTest, ParseOrExitPrintsHelpVersionOrOneUsageError) {
  Command error, help, version, go_on;
  help.parser.Version("lumos-model 1.2.3");
  version.parser.Version("lumos-model 1.2.3");
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  // An error before --help is an error; after it, nothing more is read.
  EXPECT_EQ(error.parser.ParseOrExit({"--bogus", "--help"}, out, err), std::optional<int>(2));
  EXPECT_EQ(help.parser.ParseOrExit({"in", "--help", "--bogus"}, out, err), std::optional<int>(0));
  EXPECT_EQ(version.parser.ParseOrExit({"--version"}, out, err), std::optional<int>(0));
  EXPECT_EQ(go_on.parser.ParseOrExit({"in"}, out, err), std::nullopt);
  const std::string printed = Drain(out);
  EXPECT_EQ(printed, help.parser.Help() + "lumos-model 1.2.3\n");
  EXPECT_EQ(Drain(err),
            "lumos-model demo: unknown option '--bogus' (options: --output, --json, --quiet, "
            "--level, --jitter, --offset, --clock, --scale, --job, --help)\n"
            "(run `lumos-model demo --help` for usage)\n");
}

TEST(ArgParserTest, UsageErrorTextIsOneWording) {
  EXPECT_EQ(UsageErrorText("lumos-model synth", "--ranks needs a value"),
            "lumos-model synth: --ranks needs a value\n"
            "(run `lumos-model synth --help` for usage)\n");
}

}  // namespace
}  // namespace lumos::cli
