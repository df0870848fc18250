// The strict value parsers behind AgentConfig and DetectRank, and the two EnvLookups.
#include "agent/core/env_lookup.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>

namespace lumos::agent {
namespace {

using internal::ParseDecimal;
using internal::ParseInt64;
using internal::ParseSizeBytes;
using internal::QuoteForLog;
using internal::RoundDownToPowerOfTwo;

TEST(EnvLookupTest, ParsesSizesWithBinarySuffixes) {
  EXPECT_EQ(ParseSizeBytes("0"), 0u);
  EXPECT_EQ(ParseSizeBytes("65536"), 65536u);
  EXPECT_EQ(ParseSizeBytes("64K"), 65536u);
  EXPECT_EQ(ParseSizeBytes("64k"), 65536u);
  EXPECT_EQ(ParseSizeBytes("64KiB"), 65536u);
  EXPECT_EQ(ParseSizeBytes("64kb"), 65536u);
  EXPECT_EQ(ParseSizeBytes("1M"), 1u << 20);
  EXPECT_EQ(ParseSizeBytes(" 2 G "), uint64_t{2} << 30);
  EXPECT_EQ(ParseSizeBytes("3T"), uint64_t{3} << 40);
  EXPECT_EQ(ParseSizeBytes("512B"), 512u);
  EXPECT_EQ(ParseSizeBytes("4611686018427387904"), uint64_t{1} << 62);
}

TEST(EnvLookupTest, RejectsMalformedSizes) {
  for (const char* bad : {"", " ", "K", "-1", "1.5M", "1MM", "1Mx", "1Bi", "1KiBB", "0x10", "1 000",
                          "4611686018427387905", "99999999999999999999", "4194305T"}) {
    EXPECT_FALSE(ParseSizeBytes(bad).has_value()) << bad;
  }
}

TEST(EnvLookupTest, ParsesIntegersStrictly) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("-7"), -7);
  EXPECT_EQ(ParseInt64(" 42 "), 42);
  EXPECT_EQ(ParseInt64("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"", "-", "+1", "1e3", "12a", "0x1", "9223372036854775808", "--1"}) {
    EXPECT_FALSE(ParseInt64(bad).has_value()) << bad;
  }
}

TEST(EnvLookupTest, ParsesDecimalsAsFixedPoint) {
  EXPECT_EQ(ParseDecimal("1.5", 3), 1500u);
  EXPECT_EQ(ParseDecimal(" 600 ", 3), 600000u);
  EXPECT_EQ(ParseDecimal("0.001", 3), 1u);
  EXPECT_EQ(ParseDecimal("0.25", 6), 250000u);
  EXPECT_EQ(ParseDecimal("7", 0), 7u);
  EXPECT_EQ(ParseDecimal("4611686018427387.904", 3), uint64_t{1} << 62);
  for (const char* bad : {"", ".5", "5.", "-1", "+1", "1e3", "1.0001", "1.2.3", "0x1", "1,5", "inf",
                          "nan", " . ", "4611686018427387.905", "99999999999999999999"}) {
    EXPECT_FALSE(ParseDecimal(bad, 3).has_value()) << bad;
  }
  EXPECT_FALSE(ParseDecimal("1.5", 0).has_value());
}

TEST(EnvLookupTest, QuotesValuesSafelyForLogs) {
  EXPECT_EQ(QuoteForLog("abc"), "'abc'");
  EXPECT_EQ(QuoteForLog("a\nb'"), "'a\\x0ab\\x27'");
  EXPECT_EQ(QuoteForLog(std::string(100, 'x')), "'" + std::string(64, 'x') + "...'");
}

TEST(EnvLookupTest, RoundsDownToPowersOfTwo) {
  EXPECT_EQ(RoundDownToPowerOfTwo(1), 1u);
  EXPECT_EQ(RoundDownToPowerOfTwo(3), 2u);
  EXPECT_EQ(RoundDownToPowerOfTwo(65536), 65536u);
  EXPECT_EQ(RoundDownToPowerOfTwo(300 << 10), 256u << 10);
  EXPECT_EQ(RoundDownToPowerOfTwo(UINT64_MAX), uint64_t{1} << 63);
}

TEST(EnvLookupTest, MapLookupReturnsOnlyWhatIsSet) {
  EnvLookup env = MapEnvLookup({{"A", "1"}, {"EMPTY", ""}});
  EXPECT_EQ(env("A"), "1");
  EXPECT_EQ(env("EMPTY"), "");
  EXPECT_FALSE(env("B").has_value());
}

TEST(EnvLookupTest, ProcessLookupReadsTheEnvironment) {
  ASSERT_EQ(setenv("LUMOS_ENV_LOOKUP_TEST_PROBE", "probe value", 1), 0);
  EnvLookup env = ProcessEnvLookup();
  EXPECT_EQ(env("LUMOS_ENV_LOOKUP_TEST_PROBE"), "probe value");
  ASSERT_EQ(unsetenv("LUMOS_ENV_LOOKUP_TEST_PROBE"), 0);
  EXPECT_FALSE(env("LUMOS_ENV_LOOKUP_TEST_PROBE").has_value());
}

TEST(EnvLookupTest, ProcessNamesListsTheVariablesWithThePrefix) {
  ASSERT_EQ(setenv("LUMOS_ENV_NAMES_TEST_PROBE", "a=b", 1), 0);
  std::vector<std::string> names = ProcessEnvNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "LUMOS_ENV_NAMES_TEST_PROBE"), names.end());
  for (const std::string& name : names) EXPECT_EQ(name.rfind("LUMOS_", 0), 0u) << name;
  ASSERT_EQ(unsetenv("LUMOS_ENV_NAMES_TEST_PROBE"), 0);
  names = ProcessEnvNames();
  EXPECT_EQ(std::find(names.begin(), names.end(), "LUMOS_ENV_NAMES_TEST_PROBE"), names.end());
}

}  // namespace
}  // namespace lumos::agent
