// Design: test support. A small GPT training job written by `synth gpt` (modeler/synth/
// gpt_synth.h: a test double for a GPU run, durations from the cost models' defaults) into a
// directory, for tests that need a transformer's traces (structure recovery, estimation):
// generated each time, never committed. Defaults: 2 layers, hidden 512, 8 heads, seq 512,
// mbs 2, 2 micro-batches, vocab 8000, tp 2, dp 2, 2 iterations, H100; `settings` ("K=V,...",
// the keys of `synth gpt --set`) overrides them. Fails the calling test on an error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lumos::testing {

inline constexpr const char kSmallGptSettings[] =
    "layers=2,hidden=512,heads=8,seq=512,mbs=2,micro_batches=2,vocab=8000,tp=2,dp=2,"
    "iterations=2";

struct GptJobOptions {
  std::string settings;  // Applied after kSmallGptSettings.
  uint64_t seed = 1;
  bool nvtx = true;
  bool forward_only = false;  // GptConfig::forward_only.
};

// Writes `dir`/gpt.rank<R>.pb.zst for every rank; returns the paths, by rank (empty on error,
// which is also a test failure).
std::vector<std::string> WriteGptJob(const std::string& dir, const GptJobOptions& options = {});

}  // namespace lumos::testing
