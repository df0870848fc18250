// Design: a model named by its sizes alone, for planning a run nobody traced (issue 25):
// "gpt:layers=96,hidden=12288,heads=96,seq=2048,vocab=51200[,ffn=F][,kv_heads=K]" or
// "llama:..." (a gated MLP, no biases, rotary positions). Every value is a whole number in
// 1..2^24; heads must divide hidden and kv_heads heads. Errors name the key and the rule.
// Threading: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "modeler/models/memory/memory_model.h"

namespace lumos::modeler::plan {

struct ModelSpec {
  std::string family = "gpt";  // "gpt" or "llama".
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t ffn = 0;  // 0: 4 x hidden (gpt), 8/3 x hidden rounded up to 256 (llama).
  int64_t heads = 0;
  int64_t kv_heads = 0;  // 0: heads.
  int64_t seq = 0;
  int64_t vocab = 0;
  // Dropout in training (its masks stored and moved); unset: the family's (gpt's Megatron
  // default 0.1: on; llama: off). Off for MLPerf's GPT-3 and most pretraining today.
  std::optional<bool> dropout;

  bool gated() const { return family == "llama"; }
  bool has_dropout() const { return dropout.value_or(!gated()); }
  int64_t ffn_size() const;
  int64_t kv_heads_count() const { return kv_heads > 0 ? kv_heads : heads; }
  int64_t head_dim() const { return hidden / heads; }
};

// "FAMILY:K=V,K=V,..." (keys layers, hidden, ffn, heads, kv_heads, seq, vocab, dropout; all but
// ffn, kv_heads and dropout (0 or 1) required).
StatusOr<ModelSpec> ParseModelSpec(std::string_view text);

// The memory model's view of the spec (parallelism and training left at their defaults).
models::MemoryConfig MemoryConfigOf(const ModelSpec& spec);

}  // namespace lumos::modeler::plan
