// Window files on a real file system: stamps (against gmtime), paths, directory creation, the
// rename that never overwrites, orphan recovery with really dead and live processes (and a
// truncated real trace that the modeler's reader then reads), and the disk quota (oldest first,
// what it must never delete, totals, several processes at once).
#include "agent/control/window_output.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/core/file_names.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/sample_trace.h"
#include "tests/testing/trace_frames.h"

namespace lumos::agent::control {
namespace {

using ::lumos::testing::ListDir;
using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

constexpr int64_t kSecondNs = 1'000'000'000;
constexpr char kHost[] = "node-a";

bool Exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// A pid that really no longer exists: a child that exited and was reaped.
pid_t DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  EXPECT_GT(child, 0);
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  return child;
}

std::string TraceName(const std::string& job, const std::string& host, pid_t pid, int rank) {
  RankInfo info;
  info.rank = rank;
  return TraceFileName(job, host, static_cast<uint32_t>(pid), info);
}

// The "%Y%m%dT%H%M%SZ" of gmtime_r: the oracle for WindowStamp.
std::string GmtimeStamp(int64_t seconds) {
  const time_t t = static_cast<time_t>(seconds);
  tm parts{};
  gmtime_r(&t, &parts);
  char text[32];
  strftime(text, sizeof(text), "%Y%m%dT%H%M%SZ", &parts);
  return text;
}

TEST(WindowOutputTest, StampsAreGmtimesSecondAndRoundTrip) {
  // Leap days, century years, the epoch, before it, and the end of int64 ns.
  const int64_t seconds[] = {0,          -1,         951782400,  951868799,   4107542399,
                             1796168396, 1709164800, 1709251199, -2208988800, 9223372035};
  for (int64_t s : seconds) {
    const std::string stamp = WindowStamp(s * kSecondNs);
    EXPECT_EQ(stamp, GmtimeStamp(s)) << s;
    EXPECT_EQ(ParseWindowStamp(stamp), s * kSecondNs) << stamp;
    EXPECT_EQ(stamp.find(':'), std::string::npos);
  }
  // The sub-second part is dropped, towards the past (before 1970 too).
  EXPECT_EQ(WindowStamp(1796168396 * kSecondNs + 999'999'999), GmtimeStamp(1796168396));
  EXPECT_EQ(WindowStamp(-1), GmtimeStamp(-1));
  EXPECT_EQ(WindowStamp(1796168396 * kSecondNs), "20261201T233956Z");  // The example.
}

TEST(WindowOutputTest, StampsSortAsTimes) {
  std::vector<std::string> stamps;
  for (int64_t s = 946684700; s < 4102444800; s += 86'399'997) {
    stamps.push_back(WindowStamp(s * kSecondNs));
  }
  EXPECT_TRUE(std::is_sorted(stamps.begin(), stamps.end()));
  EXPECT_EQ(std::adjacent_find(stamps.begin(), stamps.end()), stamps.end());
}

TEST(WindowOutputTest, ParseRejectsWhatIsNotAStamp) {
  for (const char* bad :
       {"", "20261201T233956", "20261201T233956z", "20261201t233956Z", "2026-12-01T23:39:56Z",
        "20261301T000000Z", "20261200T000000Z", "20260230T000000Z", "21000229T000000Z",
        "20261201T240000Z", "20261201T236000Z", "20261201T235960Z", "2026120AT000000Z",
        "20261201T233956Z ", "+2026121T233956Z", "99991231T235959Z"}) {
    EXPECT_EQ(ParseWindowStamp(bad), std::nullopt) << bad;
  }
  EXPECT_TRUE(ParseWindowStamp("20240229T000000Z").has_value());
  EXPECT_TRUE(ParseWindowStamp("20000229T235959Z").has_value());
}

TEST(WindowOutputTest, PathsNameJobStampAndFile) {
  const int64_t t = 1796168396 * kSecondNs + 5;
  const std::string file = TraceName("job42", kHost, 7, 3);
  WindowPaths paths = MakeWindowPaths("/out", "job42", t, file);
  EXPECT_EQ(paths.directory, "/out/job42/20261201T233956Z");
  EXPECT_EQ(paths.final_path, "/out/job42/20261201T233956Z/job42.node-a.7.rank3.pb.zst");
  EXPECT_EQ(paths.partial_path, paths.final_path + ".partial");
  EXPECT_EQ(MakeWindowPaths("/out//", "job42", t, file).directory, paths.directory);
  EXPECT_EQ(MakeWindowPaths("", "", t, "f").directory, "./nojob/20261201T233956Z");
  EXPECT_EQ(MakeWindowPaths("/", "", t, "f").final_path, "/nojob/20261201T233956Z/f");
  // The job part stays one path part below DIR.
  EXPECT_EQ(MakeWindowPaths("d", "a/../b c", t, "f").directory, "d/a_.._b_c/20261201T233956Z");
  EXPECT_EQ(MakeWindowPaths("d", "..", t, "f").directory, "d/__/20261201T233956Z");
  EXPECT_EQ(MakeWindowPaths("d", ".", t, "f").directory, "d/_/20261201T233956Z");
}

TEST(WindowOutputTest, CreatesTheDirectoryOnceAndRefusesAFileInTheWay) {
  TempDir dir;
  const std::string window = MakeWindowPaths(dir.path(), "job", 0, "f").directory;
  ASSERT_TRUE(CreateWindowDirectory(window).ok());
  ASSERT_TRUE(CreateWindowDirectory(window + "/").ok());  // Another rank made it already.
  struct stat st {};
  ASSERT_EQ(stat(window.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0755 & ~mask);

  WriteFileBytes(dir.File("blocked"), "user data");
  Status status = CreateWindowDirectory(dir.File("blocked") + "/20261201T233956Z");
  EXPECT_EQ(status.message(), "cannot create window directory " + dir.File("blocked") +
                                  "/20261201T233956Z: " + dir.File("blocked") +
                                  " is not a directory");
  EXPECT_EQ(ReadFileBytes(dir.File("blocked")), "user data");
}

TEST(WindowOutputTest, FinishNeverOverwritesAnExistingFile) {
  TempDir dir;
  const std::string final_path = dir.File("job.node-a.7.rank0.pb.zst");
  const std::string partial = final_path + ".partial";
  WriteFileBytes(partial, "first");
  StatusOr<std::string> first = FinishWindowFile(partial, final_path);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, final_path);
  WriteFileBytes(partial, "second");
  StatusOr<std::string> second = FinishWindowFile(partial, final_path);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(*second, dir.File("job.node-a.7.rank0.w1.pb.zst"));
  WriteFileBytes(partial, "third");
  EXPECT_EQ(FinishWindowFile(partial, final_path).value(),
            dir.File("job.node-a.7.rank0.w2.pb.zst"));
  EXPECT_EQ(ReadFileBytes(final_path), "first");
  EXPECT_EQ(ReadFileBytes(*second), "second");
  EXPECT_FALSE(Exists(partial));
  // The lowest free N: a gap is filled first.
  ASSERT_EQ(unlink(second->c_str()), 0);
  WriteFileBytes(partial, "fourth");
  EXPECT_EQ(FinishWindowFile(partial, final_path).value(), *second);

  // A name without .pb.zst gets .w<N> at its end; a missing partial file is an error.
  WriteFileBytes(dir.File("plain.partial"), "a");
  WriteFileBytes(dir.File("plain"), "b");
  EXPECT_EQ(FinishWindowFile(dir.File("plain.partial"), dir.File("plain")).value(),
            dir.File("plain.w1"));
  StatusOr<std::string> missing = FinishWindowFile(dir.File("gone.partial"), final_path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot rename " + dir.File("gone.partial") + " to " +
                                            final_path + ": No such file or directory");
  EXPECT_EQ(ReadFileBytes(final_path), "first");
}

TEST(WindowOutputTest, RecoversOnlyDeadProcessesOfThisHost) {
  TempDir dir;
  const pid_t dead = DeadPid();
  const pid_t live = getpid();
  const int64_t t = 1796168396 * kSecondNs;
  const std::string window = MakeWindowPaths(dir.path(), "job", t, "f").directory;
  const std::string nojob = MakeWindowPaths(dir.path(), "", t, "f").directory;
  ASSERT_TRUE(CreateWindowDirectory(window).ok());
  ASSERT_TRUE(CreateWindowDirectory(nojob).ok());
  auto put = [](const std::string& path) { WriteFileBytes(path, "frames"); };
  const std::string dead_file = TraceName("job", kHost, dead, 0);
  put(window + "/" + dead_file + ".partial");
  put(window + "/" + TraceName("job", kHost, live, 1) + ".partial");     // Alive.
  put(window + "/" + TraceName("job", "node-b", dead, 2) + ".partial");  // Another host.
  put(window + "/" + TraceName("other", kHost, dead, 3) + ".partial");   // Not this window's job.
  put(window + "/" + TraceName("", kHost, dead, 4) + ".partial");        // No job, job window.
  put(window + "/" + "notes.partial");
  put(window + "/" + "job.node-a.x.rank0.pb.zst.partial");
  put(window + "/" + "job.node-a.0.rank0.pb.zst.partial");  // pid 0 is never a process.
  const std::string nojob_file = TraceFileName("", kHost, static_cast<uint32_t>(dead), RankInfo{});
  put(nojob + "/" + nojob_file + ".partial");
  // Outside a window (not a stamp directory): left alone.
  ASSERT_EQ(mkdir(dir.File("job/not-a-stamp").c_str(), 0755), 0);
  put(dir.File("job/not-a-stamp/" + dead_file + ".partial"));

  RecoveryResult result = RecoverOrphans(dir.path(), kHost);
  EXPECT_EQ(result.errors, std::vector<std::string>{});
  EXPECT_EQ(result.recovered,
            (std::vector<std::string>{window + "/" + dead_file, nojob + "/" + nojob_file}));
  EXPECT_EQ(ReadFileBytes(window + "/" + dead_file), "frames");
  EXPECT_EQ(Sorted(ListDir(window)),
            Sorted({dead_file, TraceName("job", kHost, live, 1) + ".partial",
                    TraceName("job", "node-b", dead, 2) + ".partial",
                    TraceName("other", kHost, dead, 3) + ".partial",
                    TraceName("", kHost, dead, 4) + ".partial", "notes.partial",
                    "job.node-a.x.rank0.pb.zst.partial", "job.node-a.0.rank0.pb.zst.partial"}));
  EXPECT_TRUE(Exists(dir.File("job/not-a-stamp/" + dead_file + ".partial")));

  // Run again (another rank of the host): nothing left to do. Another host's run takes its own.
  EXPECT_EQ(RecoverOrphans(dir.path(), kHost).recovered.size(), 0u);
  EXPECT_EQ(RecoverOrphans(dir.path(), "node-b").recovered,
            std::vector<std::string>{window + "/" + TraceName("job", "node-b", dead, 2)});
  // A final name already taken: .w1, nothing overwritten.
  put(window + "/" + dead_file + ".partial");
  EXPECT_EQ(RecoverOrphans(dir.path(), kHost).recovered,
            std::vector<std::string>{window + "/job.node-a." + std::to_string(dead) +
                                     ".rank0.w1.pb.zst"});
}

// What a SIGKILL mid-window leaves: a real trace cut inside a frame, recovered and read.
TEST(WindowOutputTest, ARecoveredTruncatedTraceReadsUpToTheCut) {
  TempDir dir;
  const pid_t dead = DeadPid();
  const WindowPaths paths =
      MakeWindowPaths(dir.path(), "job", 1796168396 * kSecondNs, TraceName("job", kHost, dead, 0));
  ASSERT_TRUE(CreateWindowDirectory(paths.directory).ok());
  ::lumos::testing::WriteSampleTrace(dir.File("whole.pb.zst"), 400, /*frame_bytes=*/1024);
  const std::string bytes = ReadFileBytes(dir.File("whole.pb.zst"));
  const std::vector<size_t> frames = ::lumos::testing::FrameStarts(bytes);
  ASSERT_GE(frames.size(), 6u);
  const size_t cut = (frames[frames.size() - 3] + frames[frames.size() - 2]) / 2;
  WriteFileBytes(paths.partial_path, bytes.substr(0, cut));
  WriteFileBytes(dir.File("prefix.pb.zst"), bytes.substr(0, frames[frames.size() - 3]));

  ASSERT_EQ(RecoverOrphans(dir.path(), kHost).recovered,
            std::vector<std::string>{paths.final_path});
  auto count_kernels = [](const std::string& path, modeler::ReadResult* result) {
    auto reader = modeler::TraceReader::Open(path);
    EXPECT_TRUE(reader.ok()) << reader.status().message();
    if (!reader.ok()) return uint64_t{0};
    EXPECT_EQ((*reader)->header().job_id(), "sample-job");
    uint64_t kernels = 0;
    EXPECT_TRUE((*reader)
                    ->ReadPackets(
                        [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext&) {
                          kernels += packet.has_kernel();
                          return Status::Ok();
                        },
                        result)
                    .ok());
    return kernels;
  };
  modeler::ReadResult recovered, prefix;
  const uint64_t kernels = count_kernels(paths.final_path, &recovered);
  // Every whole frame before the cut, nothing invented; the cut frame reported, not fatal.
  EXPECT_EQ(kernels, count_kernels(dir.File("prefix.pb.zst"), &prefix));
  EXPECT_GT(kernels, 200u);
  EXPECT_LT(kernels, 400u);
  EXPECT_FALSE(recovered.has_trailer);
  EXPECT_EQ(recovered.bytes_read, frames[frames.size() - 3]);
  EXPECT_NE(recovered.damage.message().find("truncated frame"), std::string::npos)
      << recovered.damage.message();
}

// A job directory with windows at t0 + i seconds, each holding one Lumos file of `bytes`.
std::vector<std::string> MakeWindows(const std::string& dir, const std::string& job, int count,
                                     int64_t first_second, size_t bytes) {
  std::vector<std::string> windows;
  for (int i = 0; i < count; ++i) {
    const WindowPaths paths =
        MakeWindowPaths(dir, job, (first_second + i) * kSecondNs, TraceName(job, kHost, 1, i));
    EXPECT_TRUE(CreateWindowDirectory(paths.directory).ok());
    WriteFileBytes(paths.final_path, std::string(bytes, 'x'));
    windows.push_back(paths.directory);
  }
  return windows;
}

TEST(WindowOutputTest, QuotaDeletesTheOldestWindowsAcrossJobs) {
  TempDir dir;
  // Job b's windows interleave with job a's in time: a at 100, 102, 104; b at 101, 103.
  std::vector<std::string> a, b;
  for (int i = 0; i < 3; ++i) a.push_back(MakeWindows(dir.path(), "a", 1, 100 + 2 * i, 1000)[0]);
  for (int i = 0; i < 2; ++i) b.push_back(MakeWindows(dir.path(), "b", 1, 101 + 2 * i, 1000)[0]);
  WriteFileBytes(dir.File("continuous.node-a.1.rank0.pb.zst"), std::string(5000, 'x'));

  QuotaResult none = EnforceDiskQuota(dir.path(), kHost, 0, "");  // 0: no quota.
  EXPECT_EQ(none.windows_deleted, 0u);
  EXPECT_EQ(none.bytes_remaining, 5000u);  // The windows only, not DIR's own files.

  QuotaResult result = EnforceDiskQuota(dir.path(), kHost, 2500, "");
  EXPECT_EQ(result.errors, std::vector<std::string>{});
  EXPECT_EQ(result.windows_deleted, 3u);
  EXPECT_EQ(result.bytes_freed, 3000u);
  EXPECT_EQ(result.bytes_remaining, 2000u);
  EXPECT_FALSE(Exists(a[0]));
  EXPECT_FALSE(Exists(b[0]));
  EXPECT_FALSE(Exists(a[1]));
  EXPECT_TRUE(Exists(b[1]));
  EXPECT_TRUE(Exists(a[2]));
  EXPECT_TRUE(Exists(dir.File("continuous.node-a.1.rank0.pb.zst")));
  // Under the quota: nothing more goes. At it exactly: nothing either.
  EXPECT_EQ(EnforceDiskQuota(dir.path(), kHost, 2000, "").windows_deleted, 0u);
  // A job directory left empty goes too.
  EXPECT_EQ(EnforceDiskQuota(dir.path(), kHost, 1000, "").windows_deleted, 1u);
  EXPECT_FALSE(Exists(dir.File("b")));
  EXPECT_TRUE(Exists(a[2]));
}

TEST(WindowOutputTest, QuotaKeepsTheWindowBeingWrittenAndLiveOnes) {
  TempDir dir;
  const std::vector<std::string> w = MakeWindows(dir.path(), "job", 6, 100, 1000);
  const pid_t dead = DeadPid();
  // w[1]: a live process's .partial; w[2]: another host's (cannot be checked: kept); w[3]: a
  // dead process of this host (deletable, counted).
  WriteFileBytes(w[1] + "/" + TraceName("job", kHost, getpid(), 9) + ".partial", "");
  WriteFileBytes(w[2] + "/" + TraceName("job", "node-b", dead, 9) + ".partial", "");
  WriteFileBytes(w[3] + "/" + TraceName("job", kHost, dead, 9) + ".partial", std::string(500, 'x'));
  // Kept: w[0], the window being written (spelt with a trailing '/').
  QuotaResult result = EnforceDiskQuota(dir.path(), kHost, 4000, w[0] + "/");
  EXPECT_EQ(result.errors, std::vector<std::string>{});
  EXPECT_EQ(result.windows_deleted, 2u);  // w[3], then w[4]: 6500 -> 4000.
  EXPECT_EQ(result.bytes_freed, 1500u + 1000u);
  EXPECT_EQ(result.bytes_remaining, 4000u);
  EXPECT_TRUE(Exists(w[0]));
  EXPECT_TRUE(Exists(w[1]));
  EXPECT_TRUE(Exists(w[2]));
  EXPECT_FALSE(Exists(w[3]));
  EXPECT_FALSE(Exists(w[4]));
  EXPECT_TRUE(Exists(w[5]));
  // Nothing else may go: the remaining total stays over the quota, and says so.
  QuotaResult again = EnforceDiskQuota(dir.path(), kHost, 1000, w[5]);
  EXPECT_EQ(again.windows_deleted, 1u);  // w[0] is no longer protected.
  EXPECT_EQ(again.bytes_remaining, 3000u);
  EXPECT_FALSE(Exists(w[0]));
}

TEST(WindowOutputTest, QuotaDeletesOnlyLumosFiles) {
  TempDir dir;
  const std::vector<std::string> w = MakeWindows(dir.path(), "job", 3, 100, 1000);
  WriteFileBytes(w[0] + "/README", std::string(100000, 'r'));
  WriteFileBytes(w[0] + "/notes.pb.zst.txt", "mine");
  WriteFileBytes(w[0] + "/old.pb.zst", std::string(1000, 'x'));  // A Lumos name: counted.
  // A window that is a link to a directory elsewhere is not followed.
  TempDir elsewhere;
  WriteFileBytes(elsewhere.File("t.pb.zst"), std::string(10000, 'x'));
  ASSERT_EQ(symlink(elsewhere.path().c_str(), dir.File("job/20000101T000000Z").c_str()), 0);

  QuotaResult result = EnforceDiskQuota(dir.path(), kHost, 1500, "");
  EXPECT_EQ(result.errors, std::vector<std::string>{});
  EXPECT_EQ(result.windows_deleted, 2u);
  EXPECT_EQ(result.bytes_freed, 3000u);
  EXPECT_EQ(result.bytes_remaining, 1000u);
  EXPECT_EQ(Sorted(ListDir(w[0])), (std::vector<std::string>{"README", "notes.pb.zst.txt"}));
  EXPECT_FALSE(Exists(w[1]));
  EXPECT_TRUE(Exists(w[2]));
  EXPECT_EQ(ReadFileBytes(elsewhere.File("t.pb.zst")).size(), 10000u);
}

// Every rank of a host enforces the quota at a window's end: several processes at once, on
// windows of many files, delete exactly what one would (oldest first), and report no error.
TEST(WindowOutputTest, QuotaRunsConcurrentlyInSeveralProcesses) {
  TempDir dir;
  constexpr int kWindows = 40, kFiles = 50;
  std::vector<std::string> windows;
  for (int i = 0; i < kWindows; ++i) {
    const WindowPaths paths =
        MakeWindowPaths(dir.path(), i % 2 ? "a" : "b", (100 + i) * kSecondNs, "f");
    ASSERT_TRUE(CreateWindowDirectory(paths.directory).ok());
    for (int f = 0; f < kFiles; ++f) {
      WriteFileBytes(paths.directory + "/" + TraceName("j", kHost, 1, f), std::string(100, 'x'));
    }
    windows.push_back(paths.directory);
  }
  constexpr uint64_t kMax = uint64_t{10} * kFiles * 100;  // The newest 10 windows stay.
  std::vector<pid_t> children;
  for (int c = 0; c < 3; ++c) {
    const pid_t child = fork();
    if (child == 0) {
      const QuotaResult r = EnforceDiskQuota(dir.path(), kHost, kMax, "");
      _exit(r.errors.empty() && r.bytes_remaining <= kMax ? 0 : 1);
    }
    children.push_back(child);
  }
  const QuotaResult mine = EnforceDiskQuota(dir.path(), kHost, kMax, "");
  EXPECT_EQ(mine.errors, std::vector<std::string>{});
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int i = 0; i < kWindows; ++i) EXPECT_EQ(Exists(windows[i]), i >= kWindows - 10) << i;
  const QuotaResult after = EnforceDiskQuota(dir.path(), kHost, kMax, "");
  EXPECT_EQ(after.bytes_remaining, kMax);
  EXPECT_EQ(after.windows_deleted, 0u);
}

}  // namespace
}  // namespace lumos::agent::control
