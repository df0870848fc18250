// --base K=V,... parsing: keys from SetupKeys(), whole positive numbers, one error each.
#include "modeler/structure/base_values.h"

#include <gtest/gtest.h>

namespace lumos::modeler::structure {
namespace {

TEST(BaseValuesTest, ParsesEveryKey) {
  std::string text;
  int64_t n = 1;
  for (std::string_view key : SetupKeys()) {
    text += (text.empty() ? "" : ",") + std::string(key) + "=" + std::to_string(n++);
  }
  auto setup = ParseBaseValues(text);
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  n = 1;
  for (std::string_view key : SetupKeys()) {
    const Value& v = *SetupField(*setup, key);
    EXPECT_EQ(v.value, n++) << key;
    EXPECT_EQ(v.origin, Origin::kGiven);
  }
}

TEST(BaseValuesTest, BadItemsAreOneErrorEach) {
  const std::pair<const char*, const char*> cases[] = {
      {"hidden=4096,foo=1",
       "--base 'foo=1': unknown key 'foo' (keys: layers, hidden, ffn, heads, seq, mbs, "
       "micro_batches, vocab, world, dp, tp, pp, cp, ep)"},
      {"hidden=abc", "--base 'hidden=abc': 'abc' is not a whole positive number"},
      {"hidden=0", "--base 'hidden=0': '0' is not a whole positive number"},
      {"hidden=-4", "--base 'hidden=-4': '-4' is not a whole positive number"},
      {"hidden=1.5", "--base 'hidden=1.5': '1.5' is not a whole positive number"},
      {"hidden=", "--base 'hidden=': '' is not a whole positive number"},
      {"hidden=9999999999999999",
       "--base 'hidden=9999999999999999': '9999999999999999' is not a "
       "whole positive number"},
      {"tp=2,tp=2", "--base 'tp=2': tp given twice"},
      {"tp=2,", "--base '': expected KEY=N"},
      {"", "--base '': expected KEY=N"},
      {"tp", "--base 'tp': expected KEY=N"},
  };
  for (const auto& [text, message] : cases) {
    auto setup = ParseBaseValues(text);
    ASSERT_FALSE(setup.ok()) << text;
    EXPECT_EQ(setup.status().message(), message) << text;
  }
}

}  // namespace
}  // namespace lumos::modeler::structure
