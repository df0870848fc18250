#include "base/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace lumos {
namespace {

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/lumos-input-file-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const char* name : {"/file", "/fifo"}) unlink((dir_ + name).c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_;
};

TEST_F(InputFileTest, OpensARegularFile) {
  const std::string path = dir_ + "/file";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("hello", f);
  std::fclose(f);
  StatusOr<InputFile> file = OpenInputFile(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->size_bytes, 5u);
  char buffer[8] = {};
  EXPECT_EQ(read(file->fd, buffer, sizeof(buffer)), 5);
  close(file->fd);
}

// open(2) of a FIFO with no writer blocks: in a child that an alarm ends, so a regression fails
// instead of hanging.
TEST_F(InputFileTest, RefusesAFifoWithoutBlocking) {
  const std::string path = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);
    StatusOr<InputFile> file = OpenInputFile(path);
    _exit(!file.ok() && file.status().message() == path + ": not a regular file (a FIFO)" ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << " (blocked?)";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(InputFileTest, NamesWhatIsWrong) {
  StatusOr<InputFile> dir = OpenInputFile(dir_);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().message(), dir_ + ": not a regular file (a directory)");
  StatusOr<InputFile> missing = OpenInputFile(dir_ + "/missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), dir_ + "/missing: cannot open: No such file or directory");
  StatusOr<InputFile> device = OpenInputFile("/dev/null");
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().message(), "/dev/null: not a regular file (a character device)");
}

}  // namespace
}  // namespace lumos
