#include "base/logging.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace lumos {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What LUMOS_LOG writes to stderr while `log` runs.
template <typename Log>
std::string CaptureStderr(Log log) {
  std::FILE* file = std::tmpfile();
  EXPECT_NE(file, nullptr);
  const int saved = dup(STDERR_FILENO);
  dup2(fileno(file), STDERR_FILENO);
  log();
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::string text;
  std::rewind(file);
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
  std::fclose(file);
  return text;
}

// A line longer than the 1024-byte buffer lost its end: the reason after a long path.
TEST(LoggingTest, LongLinesAreWrittenWhole) {
  const std::string path(5000, 'p');
  std::string line =
      CaptureStderr([&] { LUMOS_LOG(Warn, "cannot create %s: %s", path.c_str(), "No space"); });
  EXPECT_EQ(line.rfind("[lumos ", 0), 0u) << line;
  EXPECT_TRUE(EndsWith(line, "] warning: cannot create " + path + ": No space\n"));
  // A short one as before.
  line = CaptureStderr([] { LUMOS_LOG(Warn, "short %d", 7); });
  EXPECT_EQ(line.rfind("[lumos ", 0), 0u) << line;
  EXPECT_TRUE(EndsWith(line, "] warning: short 7\n")) << line;
}

}  // namespace
}  // namespace lumos
