// Design: the settings of `lumos-model estimate`: `--base K=V,...` (what the trace could not
// tell about the measured run), `--set K=V,...` (the run to estimate) and `--sweep
// 'K=V1,V2;K2=...'` (every combination). Parsing validates each value on its own (a number, in
// range, a GPU or network the specs know); CheckSetup validates a complete configuration (the
// trace's base merged with --set) as a whole (world = dp*tp*pp*cp, heads divisible by tp, ...).
// Every error is one line that names the option, the key and the value.
//
// Keys (SettingKeys() in this order; "setup" keys are allowed in --base, all in --set/--sweep):
//   key                meaning                                          unit / values
//   layers             transformer layers, whole model (all stages)     count > 0     setup
//   hidden             model width h                                    elements > 0  setup
//   ffn                MLP inner width                                  elements > 0  setup
//   heads              attention heads a                                count > 0     setup
//   seq                sequence length s                                tokens > 0    setup
//   mbs                micro-batch size b                               samples > 0   setup
//   micro_batches      micro-batches per iteration per DP rank          count > 0     setup
//   vocab              vocabulary size V                                tokens > 0    setup
//   world              GPUs (ranks) in the job                          count > 0     setup
//   dp, tp, pp, cp, ep data, tensor, pipeline, context, expert degree   count > 0     setup
//   gpu                a GPU of the specs: entry name or CUDA device    SpecTable::FindGpu
//                      name ("H100-SXM5-80GB", "NVIDIA H100 80GB HBM3")
//   net                an inter-node network: a name ("ib400") or       SpecTable::ResolveNetwork
//                      numbers "400Gbps,3us" (its comma is part of the value)
//   net_gbps           inter-node line rate per GPU, one direction      Gbit/s > 0
//   net_us             inter-node one-way latency                       µs >= 0
//   zero               ZeRO stage / distributed optimizer: 0 none,      0..3
//                      1 optimizer states, 2 + gradients, 3 + parameters sharded over dp
//   recompute          activation recomputation                         none|selective|full
//   sequence_parallel  Megatron sequence parallelism (with tp)          0|1
//   host               the host's time for its own work (API calls, the factor > 0
//                      gaps between them, sync overheads) x F: another
//                      CPU, or a run whose host was slower or faster
// net_gbps / net_us replace the bandwidth / latency of `net` (or of the trace's network) when
// both are given; resolving them into one network is the caller's.
//
// Whole numbers are decimal digits only, at most kMaxWholeNumber (so products of a few degrees
// cannot overflow int64: CheckSetup multiplies with overflow checks anyway).
// Threading: pure functions; the key table is immutable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/models/memory/memory_model.h"

namespace lumos::modeler::models {
class SpecTable;
}  // namespace lumos::modeler::models

namespace lumos::modeler::whatif {

enum class SettingKey : uint8_t {
  kLayers,
  kHidden,
  kFfn,
  kHeads,
  kSeq,
  kMbs,
  kMicroBatches,
  kVocab,
  kWorld,
  kDp,
  kTp,
  kPp,
  kCp,
  kEp,
  kGpu,
  kNet,
  kNetGbps,
  kNetUs,
  kZero,
  kRecompute,
  kSequenceParallel,
  kHost,
  kVp,  // Virtual pipeline stages (interleaved schedule): a re-partitioning key.
};
inline constexpr int kSettingKeyCount = 23;
inline constexpr int64_t kMaxWholeNumber = INT32_MAX;
// A sweep of more combinations is refused (each one is a simulation).
inline constexpr uint64_t kMaxSweepCombinations = 100000;

// The memory model's modes (none, selective, full), so a parsed value feeds it directly.
using Recompute = models::Recompute;
using models::RecomputeName;

// Which keys an option allows: kBase (--base) the setup keys, kSet (--set, --sweep) all.
enum class SettingScope : uint8_t { kBase, kSet };

const char* SettingKeyName(SettingKey key);  // "layers", "micro_batches", ...
std::optional<SettingKey> SettingKeyFromName(std::string_view name);
// Every key in enum order; the setup keys first (the 14 of structure::SetupKeys(), same order).
const std::vector<SettingKey>& SettingKeys();
bool IsSetupKey(SettingKey key);
// "layers, hidden, ..." of the keys `scope` allows, for error messages.
std::string SettingKeyNames(SettingScope scope);

// One parsed value. Exactly one of the value fields is meaningful, by key.
struct Setting {
  SettingKey key = SettingKey::kLayers;
  std::string text;     // The value as given, trimmed ("ib400", "400Gbps,3us", "80").
  int64_t integer = 0;  // Setup keys, zero, sequence_parallel; recompute as its enum value.
  double number = 0;    // net_gbps (Gbit/s), net_us (µs), host (factor).
  std::string name;     // gpu: the spec's entry name; net: the network's name (or the numbers).

  Recompute recompute() const { return static_cast<Recompute>(integer); }
  bool operator==(const Setting&) const = default;
};
using SettingList = std::vector<Setting>;  // In the order given; one per key.

// "k=v,k=v". Spaces around items, keys and values are ignored. Errors ("--set KEY=VALUE: why"):
// empty text, an empty item, an item without '=', an unknown key or one the scope does not
// allow (listing the valid ones), a value that is not a number, not whole, or out of range,
// a key given twice, a GPU or network the specs do not know.
StatusOr<SettingList> ParseSettings(std::string_view text, SettingScope scope,
                                    const models::SpecTable& specs);

// "k=v1,v2;k2=v3,v4" (--sweep, all keys): the cartesian product, one SettingList per
// combination, the first dimension varying slowest (nested loops in the order written), values
// in the order written. Errors as ParseSettings per value, plus an empty dimension, a key in two
// dimensions, a value twice in one, and more than kMaxSweepCombinations combinations.
StatusOr<std::vector<SettingList>> ParseSweep(std::string_view text,
                                              const models::SpecTable& specs);

// The value of `key` in `list`, or null.
const Setting* FindSetting(const SettingList& list, SettingKey key);
// `base` with each of `overrides` replacing the value of its key or appended (base order kept).
SettingList MergeSettings(const SettingList& base, const SettingList& overrides);
// "layers=80,gpu=H200-SXM-141GB": the list as ParseSettings reads it back.
std::string FormatSettings(const SettingList& list);

// A complete model and parallel setup (every value known), for CheckSetup.
struct SetupValues {
  int64_t layers = 0, hidden = 0, ffn = 0, heads = 0, seq = 0, mbs = 0, micro_batches = 0,
          vocab = 0;
  int64_t world = 0, dp = 0, tp = 0, pp = 0, cp = 1, ep = 1;
  bool sequence_parallel = false;
};

// `setup` with the setup keys and sequence_parallel of `list` replacing its values (the other
// keys do not belong to SetupValues and are left to the caller).
SetupValues WithSettings(SetupValues setup, const SettingList& list);

// The first inconsistency, as one line naming the values, else OK. The rules (Megatron-LM's
// argument checks): every value > 0; world = dp*tp*pp*cp; heads % tp == 0; hidden % heads == 0;
// ffn % tp == 0; layers % pp == 0 (stages of equal depth); ep divides dp*cp (experts are
// sharded within the data- and context-parallel ranks of a stage); with cp > 1 seq % (2*cp) == 0
// (causal load balancing splits each sequence into 2*cp chunks); with sequence parallelism
// (seq / cp) % tp == 0 (activations are split along the sequence over tp).
Status CheckSetup(const SetupValues& setup);

}  // namespace lumos::modeler::whatif
