// Wide NVTX strings as UTF-8: every encoded length, invalid values, and the bounded form that
// the hot-path W handlers use (never a split code point, always terminated).
#include "agent/nvtx/wide_text.h"

#include <gtest/gtest.h>

#include <cstring>

namespace lumos::agent {
namespace {

TEST(WideTextTest, EncodesEveryLengthAsUtf8) {
  EXPECT_EQ(WideToUtf8(L"step"), "step");
  EXPECT_EQ(WideToUtf8(L"\u00fc"), "\xc3\xbc");              // ü: two bytes.
  EXPECT_EQ(WideToUtf8(L"\u20ac"), "\xe2\x82\xac");          // €: three bytes.
  EXPECT_EQ(WideToUtf8(L"\U0001F680"), "\xf0\x9f\x9a\x80");  // 🚀: four bytes.
  EXPECT_EQ(WideToUtf8(static_cast<const wchar_t*>(nullptr)), "");
}

TEST(WideTextTest, ReplacesValuesThatAreNotCodePoints) {
  const wchar_t surrogate[] = {static_cast<wchar_t>(0xD800), L'a', 0};
  const wchar_t too_large[] = {static_cast<wchar_t>(0x110000), 0};
  EXPECT_EQ(WideToUtf8(surrogate),
            "\xef\xbf\xbd"
            "a");
  EXPECT_EQ(WideToUtf8(too_large), "\xef\xbf\xbd");
}

TEST(WideTextTest, BoundedFormStopsBeforeACodePointThatDoesNotFit) {
  char out[6];
  EXPECT_EQ(WideToUtf8(L"ab\u20ac", out, sizeof(out)), 5u);  // 1 + 1 + 3, then the NUL.
  EXPECT_STREQ(out, "ab\xe2\x82\xac");
  EXPECT_EQ(WideToUtf8(L"abcd\u20ac", out, sizeof(out)), 4u);  // The € would not fit.
  EXPECT_STREQ(out, "abcd");
  EXPECT_EQ(WideToUtf8(nullptr, out, sizeof(out)), 0u);
  EXPECT_STREQ(out, "");
  EXPECT_EQ(WideToUtf8(L"x", out, 0), 0u);  // No room even for the NUL: nothing written.
  EXPECT_STREQ(ShortUtf8(L"r\u00e9sum\u00e9").c_str(), "r\xc3\xa9sum\xc3\xa9");
}

}  // namespace
}  // namespace lumos::agent
