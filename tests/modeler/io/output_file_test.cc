// io::OutputFile and io::OutputSet on real files, devices, FIFOs and signals (forked children).
#include "modeler/io/output_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/sample_trace.h"

namespace lumos::modeler::io {
namespace {

using ::lumos::testing::ListDir;
using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// These tests are about how files are replaced, not which: every output may replace.
const ReplacePolicy kForce{.force = true};

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

std::unique_ptr<OutputFile> Create(const std::string& path) {
  auto file = OutputFile::Create(path, kForce);
  EXPECT_TRUE(file.ok()) << file.status().message();
  return file.ok() ? std::move(file).value() : nullptr;
}

TEST(OutputFileTest, NewFileAppearsOnlyAtCommit) {
  TempDir dir;
  auto file = Create(dir.File("out.json"));
  ASSERT_NE(file, nullptr);
  EXPECT_FALSE(file->direct());
  EXPECT_EQ(file->write_path().rfind(dir.File("out.json."), 0), 0u) << file->write_path();
  EXPECT_EQ(file->write_path().substr(file->write_path().size() - 4), ".tmp");
  ASSERT_TRUE(file->Write("hello").ok());
  EXPECT_FALSE(Exists(dir.File("out.json")));
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(ReadFileBytes(dir.File("out.json")), "hello");
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"out.json"});
}

TEST(OutputFileTest, DroppedBeforeCommitLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  WriteFileBytes(dir.File("out.json"), "old");
  {
    auto file = Create(dir.File("out.json"));
    ASSERT_NE(file, nullptr);
    ASSERT_TRUE(file->Write("new, but never committed").ok());
    EXPECT_TRUE(Exists(file->write_path()));
  }
  EXPECT_EQ(ReadFileBytes(dir.File("out.json")), "old");
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"out.json"});
}

TEST(OutputFileTest, ReplacementKeepsTheModeOfTheFileItReplaces) {
  TempDir dir;
  WriteFileBytes(dir.File("out.json"), "old");
  ASSERT_EQ(::chmod(dir.File("out.json").c_str(), 0640), 0);
  auto file = Create(dir.File("out.json"));
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->Write("new").ok());
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(ReadFileBytes(dir.File("out.json")), "new");
  EXPECT_EQ(ModeOf(dir.File("out.json")) & 07777, 0640u);
}

TEST(OutputFileTest, TwoOutputsToOneDestinationHaveTheirOwnTemporaries) {
  TempDir dir;
  auto a = Create(dir.File("out.json"));
  auto b = Create(dir.File("out.json"));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a->write_path(), b->write_path());
  ASSERT_TRUE(a->Write("a").ok());
  ASSERT_TRUE(b->Write("b").ok());
  ASSERT_TRUE(a->Commit().ok());
  ASSERT_TRUE(b->Commit().ok());
  EXPECT_EQ(ReadFileBytes(dir.File("out.json")), "b");
  EXPECT_EQ(ListDir(dir.path()).size(), 1u);
}

TEST(OutputFileTest, ASymbolicLinkKeepsPointingAtTheNewOutput) {
  TempDir dir;
  WriteFileBytes(dir.File("target.json"), "old");
  ASSERT_EQ(::symlink("target.json", dir.File("link.json").c_str()), 0);
  auto file = Create(dir.File("link.json"));
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->Write("new").ok());
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_TRUE(S_ISLNK(ModeOf(dir.File("link.json"))));
  EXPECT_EQ(ReadFileBytes(dir.File("target.json")), "new");
}

TEST(OutputFileTest, ALinkToAFifoIsWrittenThroughAndADanglingLinkRefused) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.File("pipe").c_str(), 0600), 0);
  ASSERT_EQ(::symlink("pipe", dir.File("link").c_str()), 0);
  std::string received;
  std::thread reader([&] { received = ReadFileBytes(dir.File("pipe")); });
  {
    auto file = Create(dir.File("link"));
    ASSERT_NE(file, nullptr);
    EXPECT_TRUE(file->direct());
    ASSERT_TRUE(file->Write("via the link").ok());
    ASSERT_TRUE(file->Commit().ok());
  }
  reader.join();
  EXPECT_EQ(received, "via the link");
  EXPECT_TRUE(S_ISLNK(ModeOf(dir.File("link"))));

  ASSERT_EQ(::symlink("missing/file", dir.File("dangling").c_str()), 0);
  auto dangling = OutputFile::Create(dir.File("dangling"), kForce);
  ASSERT_FALSE(dangling.ok());
  EXPECT_NE(dangling.status().message().find("does not exist"), std::string::npos)
      << dangling.status().message();
  EXPECT_EQ(ListDir(dir.path()).size(), 3u);
}

TEST(OutputFileTest, DirectoriesAreRefusedWithTheReason) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.File("d").c_str(), 0755), 0);
  WriteFileBytes(dir.File("d/keep"), "x");
  for (const std::string& path : {dir.File("d"), dir.File("d") + "/", dir.File("new") + "/"}) {
    auto file = OutputFile::Create(path, kForce);
    ASSERT_FALSE(file.ok()) << path;
    EXPECT_NE(file.status().message().find(path), std::string::npos) << file.status().message();
    EXPECT_NE(file.status().message().find("directory"), std::string::npos)
        << file.status().message();
  }
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"d"});
  EXPECT_EQ(ListDir(dir.File("d")), std::vector<std::string>{"keep"});
}

TEST(OutputFileTest, AFifoIsWrittenThroughAndStaysAFifo) {
  TempDir dir;
  const std::string fifo = dir.File("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = ReadFileBytes(fifo); });
  {
    auto file = Create(fifo);  // Opening waits for the reader.
    ASSERT_NE(file, nullptr);
    EXPECT_TRUE(file->direct());
    EXPECT_EQ(file->write_path(), fifo);
    ASSERT_TRUE(file->Write("through the pipe").ok());
    ASSERT_TRUE(file->Commit().ok());
  }
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(S_ISFIFO(ModeOf(fifo)));
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"pipe"});
}

// A private copy of a character device (mknod needs root and a file system without nodev);
// the real /dev/null and /dev/full are never used as outputs by these tests.
std::string MakeCharDevice(const TempDir& dir, const std::string& name, unsigned minor) {
  const std::string path = dir.File(name);
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) return "";
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) {
    ::unlink(path.c_str());
    return "";
  }
  ::close(fd);
  return path;
}

TEST(OutputFileTest, ACharacterDeviceIsWrittenThroughNeverReplaced) {
  TempDir dir;
  const std::string null_device = MakeCharDevice(dir, "null", 3);
  const std::string full_device = MakeCharDevice(dir, "full", 7);
  if (null_device.empty() || full_device.empty()) {
    GTEST_SKIP() << "cannot create a device node here (needs root, and a file system without "
                    "nodev); AFifoIsWrittenThroughAndStaysAFifo covers writing through";
  }
  auto file = Create(null_device);
  ASSERT_NE(file, nullptr);
  EXPECT_TRUE(file->direct());
  ASSERT_TRUE(file->Write("discarded").ok());
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_TRUE(S_ISCHR(ModeOf(null_device)));

  auto full = Create(full_device);
  ASSERT_NE(full, nullptr);
  Status written = full->Write("no room");
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.message(), "writing " + full_device + ": No space left on device");
  full.reset();
  EXPECT_TRUE(S_ISCHR(ModeOf(full_device)));
  EXPECT_EQ(ListDir(dir.path()).size(), 2u);
}

TEST(OutputFileTest, RewordNamesTheDestinationInsteadOfTheTemporary) {
  TempDir dir;
  auto file = Create(dir.File("out.pb.zst"));
  ASSERT_NE(file, nullptr);
  Status status = file->Reword(Status::Error("writing " + file->write_path() + " at byte 7: why"));
  EXPECT_EQ(status.message(), "writing " + dir.File("out.pb.zst") + " at byte 7: why");
}

TEST(OutputSetTest, AllOrNothing) {
  TempDir dir;
  WriteFileBytes(dir.File("a"), "old a");
  {
    OutputSet set;
    for (const char* name : {"a", "b", "c"}) {
      auto file = set.Add(dir.File(name), kForce);
      ASSERT_TRUE(file.ok()) << file.status().message();
      ASSERT_TRUE((*file)->Write(std::string("new ") + name).ok());
      ASSERT_TRUE((*file)->Finish().ok());
    }
    // Dropped without Commit: as if the fourth output had failed.
  }
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"a"});
  EXPECT_EQ(ReadFileBytes(dir.File("a")), "old a");

  OutputSet set;
  for (const char* name : {"a", "b"}) {
    auto file = set.Add(dir.File(name), kForce);
    ASSERT_TRUE(file.ok()) << file.status().message();
    ASSERT_TRUE((*file)->Write(std::string("new ") + name).ok());
  }
  EXPECT_EQ(ListDir(dir.path()).size(), 3u);  // a and two temporary files.
  ASSERT_TRUE(set.Commit().ok());
  EXPECT_EQ(ReadFileBytes(dir.File("a")), "new a");
  EXPECT_EQ(ReadFileBytes(dir.File("b")), "new b");
  EXPECT_EQ(ListDir(dir.path()).size(), 2u);
}

TEST(OutputSetTest, ACreatedDirectoryGoesWithAFailureAndStaysWithACommit) {
  TempDir dir;
  {
    OutputSet set;
    ASSERT_TRUE(set.UseDirectory(dir.File("out")).ok());
    ASSERT_TRUE(set.Add(dir.File("out/x"), kForce).ok());
  }
  EXPECT_FALSE(Exists(dir.File("out")));
  OutputSet set;
  ASSERT_TRUE(set.UseDirectory(dir.File("out")).ok());
  auto file = set.Add(dir.File("out/x"), kForce);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(set.Commit().ok());
  EXPECT_EQ(ListDir(dir.File("out")), std::vector<std::string>{"x"});

  WriteFileBytes(dir.File("plain"), "x");
  Status refused = OutputSet().UseDirectory(dir.File("plain"));
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("not a directory"), std::string::npos) << refused.message();
}

TEST(OutputSetTest, ARenameFailingPartWayNamesWhatWasReplaced) {
  TempDir dir;
  WriteFileBytes(dir.File("a"), "old a");
  OutputSet set;
  for (const char* name : {"a", "b"}) {
    auto file = set.Add(dir.File(name), kForce);
    ASSERT_TRUE(file.ok()) << file.status().message();
  }
  // b's destination becomes a non-empty directory after its output was opened: its rename
  // fails, after a's succeeded.
  ASSERT_EQ(::mkdir(dir.File("b").c_str(), 0755), 0);
  WriteFileBytes(dir.File("b/keep"), "x");
  Status committed = set.Commit();
  ASSERT_FALSE(committed.ok());
  EXPECT_NE(committed.message().find("1 of 2 outputs were already in place: " + dir.File("a") +
                                     " (replaced)"),
            std::string::npos)
      << committed.message();
  EXPECT_EQ(ListDir(dir.File("b")), std::vector<std::string>{"keep"});
  EXPECT_EQ(ListDir(dir.path()).size(), 2u);  // a and b: no temporary file.
}

// Runs `body` in a forked child and returns its wait status.
template <typename Body>
int InChild(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(OutputFileSignalTest, TerminationRemovesTemporariesAndCreatedDirectories) {
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP}) {
    TempDir dir;
    WriteFileBytes(dir.File("old"), "old");
    const int status = InChild([&] {
      auto one = OutputFile::Create(dir.File("old"), kForce);
      OutputSet set;
      if (!one.ok() || !set.UseDirectory(dir.File("new")).ok()) ::_exit(3);
      for (int i = 0; i < 300; ++i) {  // More than one block of the registry.
        if (!set.Add(dir.File("new/" + std::to_string(i))).ok()) ::_exit(4);
      }
      ::raise(signal_number);
      ::_exit(5);  // Not reached: the signal ends the process.
    });
    ASSERT_TRUE(WIFSIGNALED(status)) << signal_number << " " << status;
    EXPECT_EQ(WTERMSIG(status), signal_number);
    EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"old"}) << signal_number;
    EXPECT_EQ(ReadFileBytes(dir.File("old")), "old");
  }
}

TEST(OutputFileSignalTest, AnIgnoredSignalStaysIgnored) {
  TempDir dir;
  const int status = InChild([&] {
    ::signal(SIGINT, SIG_IGN);
    auto file = OutputFile::Create(dir.File("out"), kForce);
    if (!file.ok()) ::_exit(3);
    ::raise(SIGINT);
    ::_exit((*file)->Commit().ok() ? 0 : 4);
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"out"});
}

TEST(OutputFileSignalTest, AFileSizeLimitIsAnErrorNotADeath) {
  TempDir dir;
  const int status = InChild([&] {
    auto created = OutputFile::Create(dir.File("out"), kForce);
    if (!created.ok()) ::_exit(3);
    std::unique_ptr<OutputFile> file = std::move(created).value();
    rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    Status written = file->Write(std::string(8192, 'x'));
    file.reset();  // Removes the temporary file (_exit runs no destructor).
    ::_exit(!written.ok() && written.message() == "writing " + dir.File("out") + ": File too large"
                ? 0
                : 4);
  });
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(ListDir(dir.path()).empty());
}

TEST(SameFileTest, ComparesFilesNotNames) {
  TempDir dir;
  WriteFileBytes(dir.File("a"), "x");
  ASSERT_EQ(::link(dir.File("a").c_str(), dir.File("b").c_str()), 0);
  EXPECT_TRUE(SameFile(dir.File("a"), dir.path() + "/./b"));
  EXPECT_FALSE(SameFile(dir.File("a"), dir.File("missing")));
  WriteFileBytes(dir.File("c"), "x");
  EXPECT_FALSE(SameFile(dir.File("a"), dir.File("c")));
}

// `export rank0.pb.zst -o rank1.pb.zst` (a typo for .json) replaced a trace that was not an
// input with JSON, exit 0. A file lumos-model did not write is refused unless forced; its own
// earlier outputs and empty files are replaced.
TEST(OutputOwnershipTest, OnlyLumosModelsOwnOutputsAreReplaced) {
  TempDir dir;
  const std::string trace =
      std::string("\x50\x2a\x4d\x18\x10\0\0\0LUMOSPB\0\x02\0\0\0\x04\0\0\0", 24) + "frames";
  const std::pair<std::string, std::string> foreign[] = {
      {"rank1.pb.zst", trace},
      {"profile.json", "{\"traceEvents\": []}"},
      {"notes.txt", "my notes"},
      {"trace.json.gz", std::string("\x1f\x8b\x08\0", 4)},
  };
  for (const auto& [name, bytes] : foreign) {
    SCOPED_TRACE(name);
    WriteFileBytes(dir.File(name), bytes);
    auto refused = OutputFile::Create(dir.File(name));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("will not replace " + dir.File(name) + ": it holds "),
              std::string::npos)
        << refused.status().message();
    EXPECT_NE(refused.status().message().find("--force"), std::string::npos);
    EXPECT_EQ(ReadFileBytes(dir.File(name)), bytes);
    auto forced = OutputFile::Create(dir.File(name), kForce);
    ASSERT_TRUE(forced.ok()) << forced.status().message();
    ASSERT_TRUE((*forced)->Write("new").ok());
    ASSERT_TRUE((*forced)->Commit().ok());
    EXPECT_EQ(ReadFileBytes(dir.File(name)), "new");
  }
  WriteFileBytes(dir.File("rank1.pb.zst"), trace);
  EXPECT_NE(OutputFile::Create(dir.File("rank1.pb.zst")).status().message().find("a Lumos trace"),
            std::string::npos);
  // A trace the command says is its own (import's, synth's) is replaced.
  ReplacePolicy own;
  own.own_trace = [](const std::string&) { return true; };
  EXPECT_TRUE(OutputFile::Create(dir.File("rank1.pb.zst"), own).ok());
  // lumos-model's own JSON outputs, a cost model and empty files are replaced.
  for (const std::string& bytes :
       {std::string("{\n\"lumos_output\":\"export\",\n\"traceEvents\":[]}"),
        std::string("{\"format\":\"lumos-cost-model\",\"version\":1}"), std::string()}) {
    WriteFileBytes(dir.File("mine.json"), bytes);
    EXPECT_TRUE(OutputFile::Create(dir.File("mine.json")).ok()) << bytes;
  }
}

// A name of 250 characters is legal (NAME_MAX 255) but its temporary "NAME.XXXXXX.tmp" was not.
TEST(OutputOwnershipTest, ALongLegalNameIsWritten) {
  TempDir dir;
  const std::string path = dir.File(std::string(250, 'n'));
  auto file = OutputFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_TRUE((*file)->Write("long").ok());
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(ReadFileBytes(path), "long");
  EXPECT_EQ(ListDir(dir.path()).size(), 1u);
}

// SIGKILL runs no handler: its temporary stayed forever. Temporaries of the same destination
// older than a day are removed by the next output there; a younger one (a run still writing)
// and other files are left alone.
TEST(OutputOwnershipTest, StaleTemporariesOfTheDestinationAreRemoved) {
  TempDir dir;
  const std::string stale = dir.File("out.json.AbC123.tmp");
  const std::string young = dir.File("out.json.XyZ789.tmp");
  const std::string other = dir.File("other.json.AbC123.tmp");
  for (const std::string& p : {stale, young, other}) WriteFileBytes(p, "partial");
  const timespec two_days_ago[2] = {{::time(nullptr) - 2 * 86400, 0},
                                    {::time(nullptr) - 2 * 86400, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, stale.c_str(), two_days_ago, 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, other.c_str(), two_days_ago, 0), 0);
  auto file = OutputFile::Create(dir.File("out.json"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(young));
  EXPECT_TRUE(std::filesystem::exists(other));
}

}  // namespace
}  // namespace lumos::modeler::io
