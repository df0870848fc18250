// Design: Status / StatusOr for code that must not throw (the whole project; see STYLE.md 3.1).
// A Status is OK or carries one human-readable message that already names its context
// (file, byte offset, record). Cheap to move; OK carries no allocation.
#pragma once

#include <cstdarg>
#include <optional>
#include <string>
#include <utility>

namespace lumos {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }
  // An argument that the input shows to be wrong (--job naming no job of the files, --ranks
  // not a multiple of the input's): commands exit 2, as for any bad argument, not 1.
  static Status BadArgument(std::string message) {
    Status status(std::move(message));
    status.bad_argument_ = true;
    return status;
  }
  bool bad_argument() const { return bad_argument_; }

  bool ok() const { return !message_.has_value(); }
  const std::string& message() const {
    static const std::string kOk = "OK";
    return message_ ? *message_ : kOk;
  }
  // Prefix the message with more context ("reading a.pb.zst: " + message).
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    Status status(context + ": " + *message_);
    status.bad_argument_ = bad_argument_;
    return status;
  }
  void IgnoreError() const {}

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
  bool bad_argument_ = false;
};

// printf-style error constructor.
[[nodiscard]] Status ErrorStatus(const char* format, ...) __attribute__((format(printf, 1, 2)));

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace lumos

#define LUMOS_INTERNAL_CONCAT2(a, b) a##b
#define LUMOS_INTERNAL_CONCAT(a, b) LUMOS_INTERNAL_CONCAT2(a, b)

#define LUMOS_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::lumos::Status lumos_status_ = (expr);        \
    if (!lumos_status_.ok()) return lumos_status_; \
  } while (0)

#define LUMOS_INTERNAL_ASSIGN_OR_RETURN(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

#define LUMOS_ASSIGN_OR_RETURN(lhs, expr) \
  LUMOS_INTERNAL_ASSIGN_OR_RETURN(LUMOS_INTERNAL_CONCAT(lumos_statusor_, __LINE__), lhs, expr)
