#include "modeler/io/byte_source.h"

#include <simdjson.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "base/input_file.h"
#include "base/memory_budget.h"

namespace lumos::modeler::io {

static_assert(kTextPadding >= simdjson::SIMDJSON_PADDING, "simdjson reads past the text end");

void PaddedText::Resize(size_t n) {
  bytes_.resize(n + kTextPadding);
  std::fill(bytes_.begin() + static_cast<std::ptrdiff_t>(n), bytes_.end(), 0);
  size_ = n;
}

void PaddedText::Append(const char* data, size_t n) {
  size_t old = size_;
  Resize(old + n);
  std::memcpy(bytes_.data() + old, data, n);
}

namespace {

constexpr size_t kInputChunk = 1 << 20;

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

// Owns a file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

StatusOr<size_t> ReadFd(int fd, char* data, size_t size, const std::string& path, uint64_t offset) {
  while (true) {
    ssize_t n = ::read(fd, data, size);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) {
      return ErrorStatus("reading %s at byte %llu: %s", path.c_str(), Ull(offset),
                         std::strerror(errno));
    }
  }
}

class FileSource : public ByteSource {
 public:
  FileSource(std::string path, int fd, uint64_t size)
      : ByteSource(std::move(path)), fd_(fd), size_(size) {}
  StatusOr<size_t> Read(char* data, size_t size) override {
    LUMOS_ASSIGN_OR_RETURN(size_t n, ReadFd(fd_.get(), data, size, path(), position_));
    position_ += n;
    return n;
  }
  uint64_t position() const override { return position_; }
  uint64_t size_hint() const override { return size_; }
  bool compressed() const override { return false; }

 private:
  Fd fd_;
  uint64_t size_;
  uint64_t position_ = 0;
};

// Inflates a gzip file (fd >= 0) or an in-memory gzip buffer. Concatenated members are read as
// one stream, as gzip(1) does; bytes after the last member that are not a gzip header are
// ignored (also as gzip(1) does, which warns about "trailing garbage").
class GzipSource : public ByteSource {
 public:
  GzipSource(std::string path, int fd, const char* memory, size_t memory_size, uint64_t hint)
      : ByteSource(std::move(path)),
        fd_(fd),
        memory_(memory),
        memory_size_(memory_size),
        hint_(hint) {}
  ~GzipSource() override {
    if (initialized_) inflateEnd(&zs_);
  }

  Status Init() {
    std::memset(&zs_, 0, sizeof(zs_));
    // 15 + 16: a gzip wrapper with any window size.
    if (inflateInit2(&zs_, 15 + 16) != Z_OK) return ErrorStatus("zlib: out of memory");
    initialized_ = true;
    if (fd_.get() >= 0) input_ = std::make_unique<unsigned char[]>(kInputChunk);
    return Status::Ok();
  }

  StatusOr<size_t> Read(char* data, size_t size) override {
    if (size == 0 || done_) return size_t{0};
    uInt initial = static_cast<uInt>(std::min<size_t>(size, UINT_MAX));
    zs_.next_out = reinterpret_cast<Bytef*>(data);
    zs_.avail_out = initial;
    while (zs_.avail_out == initial && !done_) {
      if (zs_.avail_in == 0) {
        LUMOS_ASSIGN_OR_RETURN(size_t n, Fill());
        if (n == 0) {
          if (in_member_) {
            return ErrorStatus("%s: gzip data truncated at byte %llu (the stream ends early)",
                               path().c_str(), Ull(consumed()));
          }
          done_ = true;
          break;
        }
      }
      if (!in_member_) {
        if (zs_.next_in[0] != 0x1f) {
          done_ = true;
          break;
        }
        inflateReset(&zs_);
        in_member_ = true;
      }
      int ret = inflate(&zs_, Z_NO_FLUSH);
      if (ret == Z_STREAM_END) {
        in_member_ = false;
      } else if (ret == Z_BUF_ERROR && zs_.avail_in == 0) {
        continue;  // Needs more input: refilled at the top of the loop.
      } else if (ret != Z_OK) {
        return ErrorStatus("%s: corrupt gzip data at byte %llu: %s", path().c_str(),
                           Ull(consumed()), zs_.msg != nullptr ? zs_.msg : zError(ret));
      }
    }
    size_t produced = initial - zs_.avail_out;
    position_ += produced;
    return produced;
  }
  uint64_t position() const override { return position_; }
  uint64_t size_hint() const override { return hint_; }
  bool compressed() const override { return true; }

 private:
  uint64_t consumed() const { return read_ - zs_.avail_in; }

  StatusOr<size_t> Fill() {
    if (fd_.get() < 0) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(memory_size_ - read_, UINT_MAX));
      // zlib never writes through next_in; the cast only satisfies its pre-const API.
      zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(memory_ + read_));
      zs_.avail_in = static_cast<uInt>(n);
      read_ += n;
      return n;
    }
    LUMOS_ASSIGN_OR_RETURN(size_t n, ReadFd(fd_.get(), reinterpret_cast<char*>(input_.get()),
                                            kInputChunk, path(), read_));
    zs_.next_in = input_.get();
    zs_.avail_in = static_cast<uInt>(n);
    read_ += n;
    return n;
  }

  Fd fd_;
  const char* memory_;
  size_t memory_size_;
  uint64_t hint_;
  std::unique_ptr<unsigned char[]> input_;
  z_stream zs_;
  bool initialized_ = false;
  bool in_member_ = false;
  bool done_ = false;
  uint64_t read_ = 0;      // Compressed bytes taken from the file.
  uint64_t position_ = 0;  // Uncompressed bytes delivered.
};

// A truncated or damaged file has garbage where the size trailer should be: never believe
// more than deflate's maximum ratio (1032:1), so a bad hint cannot reserve gigabytes.
uint64_t PlausibleSize(uint64_t hint, uint64_t compressed_size) {
  return std::min<uint64_t>(hint, compressed_size * 1032);
}

uint32_t Le32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path) {
  // Only a regular file, checked before anything is read: a FIFO with no writer would block
  // open(2) forever, and inputs are read twice (once to list an archive's traces).
  LUMOS_ASSIGN_OR_RETURN(InputFile file, OpenInputFile(path));
  const int raw_fd = file.fd;
  Fd fd(raw_fd);
  uint64_t size = file.size_bytes;
  unsigned char magic[2] = {0, 0};
  bool gzip =
      size >= 2 && ::pread(raw_fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (!gzip) {
    auto source = std::make_unique<FileSource>(path, fd.Release(), size);
    return std::unique_ptr<ByteSource>(std::move(source));
  }
  // The gzip trailer holds the uncompressed size mod 2^32: good enough to size a buffer.
  uint64_t hint = 0;
  unsigned char trailer[4];
  if (size >= 18 && ::pread(raw_fd, trailer, 4, static_cast<off_t>(size - 4)) == 4) {
    hint = PlausibleSize(Le32(trailer), size);
  }
  auto source = std::make_unique<GzipSource>(path, fd.Release(), nullptr, 0, hint);
  LUMOS_RETURN_IF_ERROR(source->Init());
  return std::unique_ptr<ByteSource>(std::move(source));
}

StatusOr<size_t> ReadFully(ByteSource* source, char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    LUMOS_ASSIGN_OR_RETURN(size_t n, source->Read(data + done, size - done));
    if (n == 0) break;
    done += n;
  }
  return done;
}

uint64_t MaxDocumentBytes() { return MemoryBudget() / 2; }

std::string DescribeMemoryBudget() {
  return FormatBytes(static_cast<double>(MemoryBudget())) +
         (MemoryBudgetWasSet() ? " (LUMOS_MAX_MEMORY)"
                               : " (half of this machine's memory; LUMOS_MAX_MEMORY sets it)");
}

std::string DescribeDocumentBudget() {
  return FormatBytes(static_cast<double>(MaxDocumentBytes())) + ", half of the memory budget of " +
         DescribeMemoryBudget();
}

Status ReadRest(ByteSource* source, PaddedText* text) {
  const uint64_t max_bytes = MaxDocumentBytes();
  uint64_t hint = std::min(source->size_hint(), max_bytes);
  if (hint > text->size()) text->Reserve(hint + 1);
  while (true) {
    size_t old = text->size();
    if (old > max_bytes) {
      // Refused before it is all read: a 14 MB .json.gz can expand to 3 GiB.
      text->Resize(0);
      return Status::Error(source->path() + ": " + (source->compressed() ? "expands" : "amounts") +
                           " to more than " + DescribeDocumentBudget() + ": not read");
    }
    // Grow geometrically; Resize keeps the content, so a realloc copies at most 2x in total.
    size_t room = std::max<size_t>(kInputChunk, old / 2);
    if (hint > old && hint - old + 1 > room) room = hint - old + 1;
    text->Resize(old + room);
    auto n = ReadFully(source, text->data() + old, room);
    if (!n.ok()) {
      text->Resize(old);
      return n.status();
    }
    text->Resize(old + *n);
    if (*n < room) return Status::Ok();
  }
}

namespace {

class MemorySource : public ByteSource {
 public:
  MemorySource(std::string name, const char* data, size_t size)
      : ByteSource(std::move(name)), data_(data), size_(size) {}
  StatusOr<size_t> Read(char* data, size_t size) override {
    const size_t n = std::min<size_t>(size, size_ - position_);
    std::memcpy(data, data_ + position_, n);
    position_ += n;
    return n;
  }
  uint64_t position() const override { return position_; }
  uint64_t size_hint() const override { return size_; }
  bool compressed() const override { return false; }

 private:
  const char* data_;
  size_t size_;
  size_t position_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<ByteSource>> OpenMemorySource(const char* data, size_t size,
                                                       std::string name) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  if (size < 2 || bytes[0] != 0x1f || bytes[1] != 0x8b) {
    return std::unique_ptr<ByteSource>(std::make_unique<MemorySource>(std::move(name), data, size));
  }
  const uint64_t hint = size >= 18 ? PlausibleSize(Le32(bytes + size - 4), size) : 0;
  auto source = std::make_unique<GzipSource>(std::move(name), -1, data, size, hint);
  LUMOS_RETURN_IF_ERROR(source->Init());
  return std::unique_ptr<ByteSource>(std::move(source));
}

Status GunzipBuffer(const char* data, size_t size, const std::string& name, PaddedText* out) {
  uint64_t hint =
      size >= 18
          ? PlausibleSize(Le32(reinterpret_cast<const unsigned char*>(data) + size - 4), size)
          : 0;
  GzipSource source(name, -1, data, size, hint);
  LUMOS_RETURN_IF_ERROR(source.Init());
  return ReadRest(&source, out);
}

}  // namespace lumos::modeler::io
