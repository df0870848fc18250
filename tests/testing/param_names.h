// Readable names for parameterised tests, for INSTANTIATE_TEST_SUITE_P's fourth argument. Without
// one, gtest numbers the cases and ctest shows a struct parameter as its bytes ("16-byte object
// <90-7C ...>", addresses included, so the names even change from build to build). ctest's
// names are gtest's own (lumos_add_test: NO_PRETTY_VALUES), so a name here is also what
// --gtest_filter and `ctest -R` take.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace lumos::testing {

// `text` as a gtest name: letters and digits kept, every other byte '_'.
inline std::string ParamName(std::string_view text) {
  std::string name(text);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// The real traces of ../shared/data/traces that the replay, structure and estimate tests run
// on (paths below it), for ::testing::ValuesIn.
inline constexpr const char* kSharedTraces[] = {
    "dlrm-8rank-v100/dlrm_kineto.tar.gz",        "hta-single-rank/control.json.gz",
    "hta-single-rank/df_index_resolver.json.gz", "hta-single-rank/event_sync_trace.json.gz",
    "hta-single-rank/nccl_data.json.gz",         "hta-single-rank/rank0.json.gz"};

// A trace file's name without its directories and extensions, as a gtest name:
// "hta-single-rank/nccl_data.json.gz" -> "nccl_data".
inline std::string TraceParamName(std::string_view path) {
  if (const size_t slash = path.rfind('/'); slash != std::string_view::npos) {
    path.remove_prefix(slash + 1);
  }
  return ParamName(path.substr(0, path.find('.')));
}

}  // namespace lumos::testing
