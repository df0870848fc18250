// `lumos-model structure` as a user runs it: the real binary on the bundled example (text and
// JSON), --base given and contradicted, bad arguments (exit 2, one line). The exit-status
// contract on damaged inputs is tests/modeler/tools/command_contract_test.cc's.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "tests/testing/run_command.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;

std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }

std::string Structure(const std::string& args) {
  return LumosModelBinary() + " structure " + Example() + " " + args;
}

TEST(StructureCommandTest, TextOnOneScreen) {
  const auto r = RunCommand(Structure(""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("job dlrm_kineto: 8 rank(s)\niterations: ProfilerStep ranges\n", 0), 0u)
      << r.out;
  for (const char* part : {"\nsetup ", "\n  world              8  trace    ", "\ngroups (",
                           " data  ", "\nranks ", "\n  rank 7 ", "\nunknown ("}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  size_t lines = 0;
  for (char c : r.out) lines += c == '\n' ? 1 : 0;
  EXPECT_LE(lines, 60u) << r.out;
}

TEST(StructureCommandTest, JsonHasTheSameContent) {
  const auto r = RunCommand(Structure("--json --base hidden=512"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(int64_t(doc["setup"]["world"]["value"]), 8);
  EXPECT_EQ(std::string_view(doc["setup"]["world"]["origin"]), "trace");
  EXPECT_EQ(int64_t(doc["setup"]["hidden"]["value"]), 512);
  EXPECT_EQ(std::string_view(doc["setup"]["hidden"]["origin"]), "given");
  EXPECT_TRUE(doc["setup"]["heads"]["value"].is_null());
  EXPECT_EQ(simdjson::dom::array(doc["ranks"]).size(), 8u);
  EXPECT_EQ(simdjson::dom::array(doc["ranks"].at(0)["iterations"]).size(), 1u);
  EXPECT_GE(simdjson::dom::array(doc["groups"]).size(), 1u);
  EXPECT_EQ(std::string_view(doc["iteration_method"]), "ProfilerStep ranges");
}

TEST(StructureCommandTest, ContradictedBaseIsABadArgumentNamingBoth) {
  const auto r = RunCommand(Structure("--base world=4"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(
      r.err.rfind("lumos-model structure: --base world=4 contradicts the trace: world=8 (", 0), 0u)
      << r.err;
}

TEST(StructureCommandTest, BadArgumentsAreOneLineAndExitTwo) {
  const std::pair<const char*, const char*> cases[] = {
      {"--base foo=1", "lumos-model structure: --base 'foo=1': unknown key 'foo' (keys: "},
      {"--base hidden=abc",
       "lumos-model structure: --base 'hidden=abc': 'abc' is not a whole positive number"},
      {"--base hidden=-1", "lumos-model structure: --base 'hidden=-1': '-1' is not a whole "},
      {"--iteration '('", "lumos-model structure: --iteration '(': "},
      {"--bogus", "lumos-model structure: unknown option '--bogus'"},
  };
  for (const auto& [args, start] : cases) {
    const auto r = RunCommand(Structure(args));
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err.rfind(start, 0), 0u) << args << ": " << r.err;
  }
  const auto none = RunCommand(LumosModelBinary() + " structure");
  EXPECT_EQ(none.exit_code, 2);
}

}  // namespace
}  // namespace lumos::modeler
