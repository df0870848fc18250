#include "modeler/trace/trace_set.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

TEST(TraceSetTest, ExpandsFilesDirectoriesAndGlobsSortedOnce) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("job/sub"));
  WriteFileBytes(dir.File("job/r1.pb.zst"), "x");
  WriteFileBytes(dir.File("job/r0.pb.zst"), "x");
  WriteFileBytes(dir.File("job/sub/r2.pb.zst"), "x");
  WriteFileBytes(dir.File("job/notes.txt"), "x");
  auto paths =
      ExpandTracePaths({dir.File("job"), dir.File("job/r*.pb.zst"), dir.File("job/r0.pb.zst")});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  EXPECT_EQ(*paths, (std::vector<std::string>{dir.File("job/r0.pb.zst"), dir.File("job/r1.pb.zst"),
                                              dir.File("job/sub/r2.pb.zst")}));
}

TEST(TraceSetTest, NothingMatchingIsAnError) {
  TempDir dir;
  EXPECT_FALSE(ExpandTracePaths({dir.File("missing.pb.zst")}).ok());
  EXPECT_FALSE(ExpandTracePaths({dir.File("*.pb.zst")}).ok());
  auto empty_dir = ExpandTracePaths({dir.path()});
  ASSERT_FALSE(empty_dir.ok());
  EXPECT_NE(empty_dir.status().message().find("no *.pb.zst files"), std::string::npos);
}

TEST(TraceSetTest, WithProblemsWhatNamesNothingIsNotedAndTheRestReturned) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("job"));
  std::filesystem::create_directories(dir.File("empty"));
  WriteFileBytes(dir.File("job/r0.pb.zst"), "x");
  std::vector<std::string> problems;
  auto paths = ExpandTracePaths(
      {dir.File("job"), dir.File("missing.pb.zst"), dir.File("none*.pb.zst"), dir.File("empty")},
      &problems);
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  EXPECT_EQ(*paths, std::vector<std::string>{dir.File("job/r0.pb.zst")});
  EXPECT_EQ(problems, (std::vector<std::string>{
                          dir.File("missing.pb.zst") + ": no such file or directory",
                          dir.File("none*.pb.zst") + ": the pattern matches no file",
                          dir.File("empty") + ": no *.pb.zst files in this directory"}));

  // Nothing found at all: one argument's problem is the error; several stay listed.
  problems.clear();
  auto one = ExpandTracePaths({dir.File("missing.pb.zst")}, &problems);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().message(), dir.File("missing.pb.zst") + ": no such file or directory");
  EXPECT_TRUE(problems.empty());
  auto two = ExpandTracePaths({dir.File("a.pb.zst"), dir.File("b.pb.zst")}, &problems);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().message(), "none of the 2 inputs names a trace file");
  EXPECT_EQ(problems.size(), 2u);
}

// ExpandTracePaths(args) in a child process without privileges (root reads every directory,
// whatever its mode): the paths it returns, one per line, or "error: <message>".
std::string ExpandUnprivileged(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "pipe failed";
  pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    constexpr uid_t kNobody = 65534;
    if (geteuid() == 0 &&
        (setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0 ||
         setresuid(kNobody, kNobody, kNobody) != 0)) {
      _exit(2);
    }
    auto paths = ExpandTracePaths(args);
    std::string text;
    if (!paths.ok()) text = "error: " + paths.status().message() + "\n";
    if (paths.ok()) {
      for (const std::string& p : *paths) text += p + "\n";
    }
    bool written =
        write(pipe_fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size());
    _exit(written ? 0 : 3);
  }
  close(pipe_fds[1]);
  std::string text;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed";
  return text;
}

// An unreadable subdirectory stopped the walk: the files listed after it were dropped (their
// ranks "missing") and nothing was said. Now it is returned, so the command names it, and the
// walk goes on.
TEST(TraceSetTest, UnreadableSubdirectoryIsReturnedAndTheWalkGoesOn) {
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);  // Reachable without privileges.
  for (const char* sub : {"job/a", "job/locked", "job/m", "job/z"}) {
    std::filesystem::create_directories(dir.File(sub));
  }
  for (const char* file : {"job/r0.pb.zst", "job/a/r1.pb.zst", "job/locked/r2.pb.zst",
                           "job/m/r3.pb.zst", "job/z/r4.pb.zst"}) {
    WriteFileBytes(dir.File(file), "x");
  }
  ASSERT_EQ(chmod(dir.File("job/locked").c_str(), 0), 0);
  EXPECT_EQ(ExpandUnprivileged({dir.File("job")}),
            dir.File("job/a/r1.pb.zst") + "\n" + dir.File("job/locked") + "\n" +
                dir.File("job/m/r3.pb.zst") + "\n" + dir.File("job/r0.pb.zst") + "\n" +
                dir.File("job/z/r4.pb.zst") + "\n");
  // A pattern through it names it too.
  EXPECT_EQ(ExpandUnprivileged({dir.File("job/*/r*.pb.zst")}),
            dir.File("job/a/r1.pb.zst") + "\n" + dir.File("job/locked") + "\n" +
                dir.File("job/m/r3.pb.zst") + "\n" + dir.File("job/z/r4.pb.zst") + "\n");
  ASSERT_EQ(chmod(dir.File("job/locked").c_str(), 0755), 0);  // So TempDir can remove it.
}

// Entries named like traces that cannot be read as one (a FIFO, a dangling link) were skipped
// silently: they are returned, and opening them says why.
TEST(TraceSetTest, TraceNamedEntriesOfAnyTypeAreReturned) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("job"));
  WriteFileBytes(dir.File("job/r0.pb.zst"), "x");
  ASSERT_EQ(mkfifo(dir.File("job/r1.pb.zst").c_str(), 0600), 0);
  std::filesystem::create_symlink(dir.File("job/gone"), dir.File("job/r2.pb.zst"));
  std::filesystem::create_symlink(dir.File("job"), dir.File("job/loop"));  // Not followed.
  auto paths = ExpandTracePaths({dir.File("job")});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  EXPECT_EQ(*paths, (std::vector<std::string>{dir.File("job/r0.pb.zst"), dir.File("job/r1.pb.zst"),
                                              dir.File("job/r2.pb.zst")}));
}

// A path the system refuses (longer than PATH_MAX) is not "missing": opening it gives the reason.
TEST(TraceSetTest, UnreachablePathIsReturnedNotCalledMissing) {
  std::string deep;
  for (int i = 0; i < 1100; ++i) deep += "dir/";
  deep += "r0.pb.zst";
  auto paths = ExpandTracePaths({deep});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  EXPECT_EQ(*paths, std::vector<std::string>{deep});
}

}  // namespace
}  // namespace lumos::modeler
