// Design: the settings of `lumos-model synth gpt` (gpt_synth.h): the shape of a Megatron-style
// GPT training job (layers, hidden size, heads, sequence, batch, vocabulary), its parallelism
// (tensor and data parallel; pipeline parallel only 1) and the GPU, from "--set K=V,K=V" text.
// Parsing checks every value: an unknown key, a value that is not a whole number in range,
// heads not dividing hidden, tp not dividing heads, ffn or vocab, pp other than 1, sizes above
// 2^24, a job too large to build in memory (tp x dp x layers x micro_batches x iterations above
// 200000) or a GPU the specs do not know is one error naming it. Threading: plain values and pure
// functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/io/name_pattern.h"

namespace lumos::modeler::models {
class SpecTable;
}

namespace lumos::modeler {

struct GptConfig {
  int64_t layers = 4;
  int64_t hidden = 1024;
  int64_t ffn = 0;  // 0: 4 x hidden.
  int64_t heads = 16;
  int64_t seq = 1024;
  int64_t mbs = 2;            // Micro-batch size (sequences).
  int64_t micro_batches = 2;  // Gradient accumulation steps per iteration.
  int64_t vocab = 32000;
  int64_t tp = 2;  // Tensor parallel ranks (one communicator per data-parallel replica).
  int64_t dp = 2;  // Data parallel replicas.
  int64_t pp = 1;  // Pipeline stages: only 1.
  int64_t iterations = 3;
  std::string gpu = "H100-SXM5-80GB";  // A GPU entry of the specs (hardware_specs.h).
  uint64_t seed = 1;
  bool nvtx = true;  // NVTX ranges (forward, backward, optimizer, layers.<i>).
  // A forward-only profile (Megatron's forward benchmark, inference): per iteration the
  // micro-batches' forwards and the loss sync; no zero-grad, backward or optimizer.
  bool forward_only = false;
  // What an operator looks for, put in on purpose (summarize's tests): a straggler, slower
  // kernels, a slower link. Factors multiply the modelled durations after the jitter (the
  // random draws stay the same, so everything else is unchanged).
  int64_t slow_rank = -1;  // This rank's kernels and memsets take slow_rank_factor as long.
  double slow_rank_factor = 1.0;
  struct KernelScale {
    std::string pattern;  // RE2, searched in the kernel name.
    NamePattern regex;
    double factor = 1.0;
  };
  std::vector<KernelScale> kernel_scales;  // Kernels whose name matches (factors multiply).
  double comm_factor = 1.0;                // Collective transfer times.
  // A periodic capture window's coordinated start (CLOCK_REALTIME ns, a window stamp's second):
  // the headers say the files are one window of `iterations` iterations, as the agent writes
  // them, and each file ends with the CaptureWindow; 0: a whole run (no window).
  uint64_t window_realtime_ns = 0;

  int64_t world() const { return tp * dp; }
  int64_t ffn_size() const { return ffn > 0 ? ffn : 4 * hidden; }
  int64_t head_dim() const { return hidden / heads; }
  int64_t tokens() const { return mbs * seq; }  // Rows of every activation GEMM.
};

// "layers, hidden, ffn, heads, seq, mbs, micro_batches, vocab, tp, dp, pp, iterations, gpu".
std::string_view GptSettingNames();

// Applies "K=V,K=V,..." to `config` (keys as in GptSettingNames). Later keys win.
Status ApplyGptSettings(std::string_view text, GptConfig* config);

// Whether the whole configuration can be built (divisibility, pp, the GPU in `specs`).
Status CheckGptConfig(const GptConfig& config, const models::SpecTable& specs);

}  // namespace lumos::modeler
