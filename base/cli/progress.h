// Design: a progress bar on stderr for steps that take over a second, only when stderr is a
// terminal: "lumos-model replay: loading [########............]  40%", redrawn at most every
// 100 ms, cleared before anything else is printed (Clear, or the next Step).
// Threading: one thread.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace lumos::cli {

class Progress {
 public:
  // `program`: the prefix ("lumos-model replay").
  Progress(std::string program, std::FILE* err);
  void Step(const char* what);
  // `done` in [0, 1]; negative: unknown (the label alone).
  void Update(double done);
  void Clear();

 private:
  std::string program_;
  std::FILE* err_;
  bool enabled_;
  const char* what_ = "";
  std::chrono::steady_clock::time_point start_, drawn_;
  bool shown_ = false;
};

}  // namespace lumos::cli
