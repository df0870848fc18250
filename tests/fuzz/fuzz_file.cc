#include "tests/fuzz/fuzz_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "modeler/trace/trace_reader.h"

namespace lumos::fuzz {

FuzzFile::FuzzFile() {
  fd_ = static_cast<int>(::memfd_create("lumos_fuzz_trace", MFD_CLOEXEC));
  if (fd_ >= 0) {
    path_ = "/proc/self/fd/" + std::to_string(fd_);
    return;
  }
  const char* dir = std::getenv("TMPDIR");
  path_ = std::string(dir != nullptr && dir[0] != '\0' ? dir : "/tmp") + "/lumos_fuzz_" +
          std::to_string(::getpid()) + ".pb.zst";
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  unlink_ = true;
}

FuzzFile::~FuzzFile() {
  if (fd_ >= 0) ::close(fd_);
  if (unlink_) ::unlink(path_.c_str());
}

bool FuzzFile::Write(const uint8_t* data, size_t size) {
  if (fd_ < 0 || ::ftruncate(fd_, 0) != 0) return false;
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void ReadWholeTrace(const std::string& path) {
  StatusOr<std::unique_ptr<modeler::TraceReader>> reader = modeler::TraceReader::Open(path);
  if (!reader.ok()) return;
  modeler::ReadResult result;
  uint64_t sum = 0;
  uint64_t delivered = 0;
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext& context) {
        ++delivered;
        sum += static_cast<uint64_t>(context.start_ns) + context.frame_index;
        if (packet.has_kernel()) sum += context.String(packet.kernel().name_iid()).size();
        if (packet.has_api_call()) sum += context.String(packet.api_call().name_iid()).size();
        if (packet.has_nvtx()) {
          sum += context.String(packet.nvtx().name_iid()).size();
          sum += context.String(packet.nvtx().domain_iid()).size();
        }
        if (packet.has_host_range()) sum += context.String(packet.host_range().name_iid()).size();
        return Status::Ok();
      },
      &result);
  // The callback never fails, so neither may ReadPackets; damage goes to result.damage.
  if (!status.ok()) __builtin_trap();
  if (result.packets != delivered) __builtin_trap();
  if (result.bytes_read > result.file_bytes) __builtin_trap();
  if (result.damage.ok() && result.bytes_read != result.file_bytes) __builtin_trap();
  // Keep the reads above from being optimised away.
  __asm__ volatile("" : : "g"(sum) : "memory");
}

}  // namespace lumos::fuzz
