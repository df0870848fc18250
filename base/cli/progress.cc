#include "base/cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

namespace lumos::cli {

Progress::Progress(std::string program, std::FILE* err)
    : program_(std::move(program)), err_(err), enabled_(isatty(fileno(err)) != 0) {}

void Progress::Step(const char* what) {
  Clear();
  what_ = what;
  start_ = std::chrono::steady_clock::now();
  drawn_ = start_;
}

void Progress::Update(double done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) ||
      (shown_ && now - drawn_ < std::chrono::milliseconds(100))) {
    return;
  }
  drawn_ = now;
  shown_ = true;
  if (done < 0) {
    std::fprintf(err_, "\r%s: %s...\033[K", program_.c_str(), what_);
  } else {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(std::min(1.0, done) * kWidth);
    std::fprintf(err_, "\r%s: %s [%.*s%.*s] %3d%%\033[K", program_.c_str(), what_, filled,
                 "##############################", kWidth - filled,
                 "..............................", static_cast<int>(done * 100));
  }
  std::fflush(err_);
}

void Progress::Clear() {
  if (shown_) std::fprintf(err_, "\r\033[K");
  shown_ = false;
}

}  // namespace lumos::cli
