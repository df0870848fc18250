#include "base/status.h"

#include <gtest/gtest.h>

#include <string>

namespace lumos {
namespace {

// ErrorStatus formatted into 1024 bytes: a long path cut the reason after it off.
TEST(StatusTest, ErrorStatusKeepsTheWholeMessage) {
  const std::string path(5000, 'p');
  Status status = ErrorStatus("%s: cannot open: %s", path.c_str(), "File name too long");
  EXPECT_EQ(status.message(), path + ": cannot open: File name too long");
  EXPECT_EQ(ErrorStatus("short %d", 7).message(), "short 7");
  EXPECT_EQ(ErrorStatus("%s", std::string(1023, 'x').c_str()).message(), std::string(1023, 'x'));
  EXPECT_EQ(ErrorStatus("%s", std::string(1024, 'x').c_str()).message(), std::string(1024, 'x'));
}

}  // namespace
}  // namespace lumos
