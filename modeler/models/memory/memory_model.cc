#include "modeler/models/memory/memory_model.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "modeler/models/hardware/hardware_specs.h"

namespace lumos::modeler::models {
namespace {

// Beyond this a product of sizes is no longer exact in a double, nor a count of bytes anyone has.
constexpr double kMaxBytes = 9.0e18;
// A bound on parameter counts, far above any model, below where int64 products could wrap.
constexpr double kMaxParameters = 1e15;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

std::string GiB(double bytes) { return Format("%.2f GiB", bytes / (1024.0 * 1024 * 1024)); }

Status Check(const MemoryConfig& c) {
  const std::pair<const char*, int64_t> positive[] = {
      {"layers", c.layers}, {"hidden", c.hidden},
      {"ffn", c.ffn},       {"heads", c.heads},
      {"seq", c.seq},       {"mbs", c.mbs},
      {"vocab", c.vocab},   {"micro_batches", c.micro_batches},
      {"dp", c.dp},         {"tp", c.tp},
      {"pp", c.pp},         {"cp", c.cp},
      {"vp", c.vp},         {"vocab_multiple", c.vocab_multiple}};
  for (const auto& [name, value] : positive) {
    if (value <= 0) {
      return ErrorStatus("memory model: %s=%lld must be > 0", name, static_cast<long long>(value));
    }
    if (value > INT32_MAX) {
      return ErrorStatus("memory model: %s=%lld is beyond %d", name, static_cast<long long>(value),
                         INT32_MAX);
    }
  }
  if (c.vp > 1 && c.pp == 1) {
    return ErrorStatus("memory model: vp=%lld needs pp > 1 (virtual stages split pipeline stages)",
                       static_cast<long long>(c.vp));
  }
  if (c.kv_heads < 0 || c.kv_heads > c.heads) {
    return ErrorStatus("memory model: kv_heads=%lld must be from 0 (= heads) to heads=%lld",
                       static_cast<long long>(c.kv_heads), static_cast<long long>(c.heads));
  }
  // Parameter counts are exact integers: bound them (in doubles) before counting in int64.
  const double h = static_cast<double>(c.hidden);
  const double approximate =
      static_cast<double>(c.layers) * (4 * h * h + 3 * h * static_cast<double>(c.ffn)) +
      (2 * static_cast<double>(c.vocab) + static_cast<double>(c.seq)) * h;
  if (approximate > kMaxParameters) {
    return ErrorStatus(
        "memory model: more than 10^15 parameters (hidden=%lld, ffn=%lld, "
        "layers=%lld, vocab=%lld)",
        static_cast<long long>(c.hidden), static_cast<long long>(c.ffn),
        static_cast<long long>(c.layers), static_cast<long long>(c.vocab));
  }
  if (c.zero_stage < 0 || c.zero_stage > 3) {
    return ErrorStatus("memory model: zero=%d must be 0..3", c.zero_stage);
  }
  for (const auto& [name, value] : {std::pair{"param_bytes", c.param_bytes},
                                    {"grad_bytes", c.grad_bytes},
                                    {"optimizer_bytes", c.optimizer_bytes}}) {
    if (value < 0 || value > 64) {
      return ErrorStatus("memory model: %s=%lld must be 0..64", name,
                         static_cast<long long>(value));
    }
  }
  return Status::Ok();
}

struct LayerParts {
  double replicated = 0;  // Bytes not split over tp (without sequence parallelism).
  double split = 0;       // Bytes split over tp.
  double scores = 0;      // Attention scores, split over tp; 0 when not stored.
};

// Korthikanti et al. 2022, §4.1, by parts (see the header).
LayerParts LayerActivationParts(const MemoryConfig& c, bool scores_stored) {
  const double s = static_cast<double>(c.seq) / static_cast<double>(c.cp);
  const double b = static_cast<double>(c.mbs);
  const double h = static_cast<double>(c.hidden);
  const double f = static_cast<double>(c.ffn);
  const double a = static_cast<double>(c.heads);
  const double kv_heads = static_cast<double>(c.kv_heads == 0 ? c.heads : c.kv_heads);
  const double k = kv_heads * h / a;
  // Bytes an element of a GEMM's saved input, and the dropout masks' bytes an element.
  const double input = c.fp8_gemm_inputs ? 1 : 2;
  const double mask = c.dropout ? 1 : 0;
  LayerParts parts;
  // Two norm inputs, the QKV and fc1 inputs, the two residual dropout masks.
  parts.replicated = s * b * h * (2 + 2 + 2 * input + 2 * mask);
  // Q, K and V; attention's output (the projection's input, and with FP8 the projection's own
  // FP8 copy); the MLP: GeLU's input (gated: fc1's two halves) and fc2's input.
  parts.split = s * b * (2 * h + 4 * k + 2 * h + (c.fp8_gemm_inputs ? h : 0)) +
                s * b * f * ((c.gated_mlp ? 4 : 2) + input);
  // Softmax output, and with dropout its mask and output.
  if (scores_stored) parts.scores = (2 + 3 * mask) * a * s * static_cast<double>(c.seq) * b;
  return parts;
}

double Sum(const LayerParts& parts, const MemoryConfig& c) {
  const double t = static_cast<double>(c.tp);
  if (c.sequence_parallel) return (parts.replicated + parts.split + parts.scores) / t;
  return parts.replicated + (parts.split + parts.scores) / t;
}

// One layer's activations as stored under no recompute (the working set of full recompute).
double FullLayerBytes(const MemoryConfig& c) {
  return Sum(LayerActivationParts(c, !c.flash_attention), c);
}

struct ParameterCounts {
  int64_t layer = 0;      // One layer's parameters on one tensor-parallel rank.
  int64_t embedding = 0;  // Stage 0: word (vocab-parallel) and position embeddings.
  int64_t head = 0;       // Last stage: final norm and the LM head (when it has its own).
};

ParameterCounts CountParameters(const MemoryConfig& c, int64_t tp, int64_t vocab, bool own_head) {
  const int64_t h = c.hidden;
  const int64_t f = c.ffn;
  const int64_t kv_heads = c.kv_heads == 0 ? c.heads : c.kv_heads;
  const int64_t k = kv_heads * (h / c.heads);
  const int64_t bias = c.biases ? 1 : 0;
  const int64_t fc1_width = c.gated_mlp ? 2 * f : f;
  const int64_t norm = c.biases ? 2 * h : h;
  ParameterCounts counts;
  counts.layer = CeilDiv(h * (h + 2 * k) + bias * (h + 2 * k), tp)  // QKV, column parallel.
                 + CeilDiv(h * h, tp) + bias * h                    // Projection, row parallel.
                 + CeilDiv(h * fc1_width + bias * fc1_width, tp)    // fc1, column parallel.
                 + CeilDiv(f * h, tp) + bias * h                    // fc2, row parallel.
                 + 2 * norm;
  counts.embedding = CeilDiv(vocab * h, tp) + (c.learned_positions ? c.seq * h : 0);
  counts.head = norm + (own_head ? CeilDiv(vocab * h, tp) : 0);
  return counts;
}

struct InFlight {
  int64_t chunks = 0;         // Model chunks whose activations are held.
  int64_t micro_batches = 0;  // Micro-batches with at least one chunk held.
  int64_t first_chunks = 0;   // Micro-batches whose first chunk (the stage's chunk 0) is held.
  int64_t last_chunks = 0;    // Micro-batches whose last chunk (chunk vp - 1) is held.
};

// What pipeline stage `stage` holds at its peak: the forwards it runs before its first backward
// (Megatron-LM's schedules.py: 1F1B's pp - stage - 1 warm-up forwards, the interleaved
// schedule's (pp - stage - 1)·2 + (vp - 1)·pp, each plus the steady state's first forward),
// never more than all of them. Interleaved forwards run in groups of pp micro-batches, chunk 0
// of the group, then chunk 1, and so on (Megatron-LM since late 2024; before, with as many
// micro-batches as stages, every forward ran in the warm-up, which the cap gives too).
InFlight HeldAtPeak(const MemoryConfig& c, int64_t stage) {
  InFlight held;
  if (c.vp == 1) {
    held.chunks = std::min(c.pp - stage, c.micro_batches);
    held.micro_batches = held.first_chunks = held.last_chunks = held.chunks;
    return held;
  }
  const int64_t all = c.micro_batches * c.vp;
  held.chunks = std::min((c.pp - stage - 1) * 2 + (c.vp - 1) * c.pp + 1, all);
  const int64_t group = c.pp * c.vp;  // Forwards of one group of pp micro-batches.
  const int64_t full_groups = held.chunks / group;
  const int64_t rest = held.chunks % group;
  // Micro-batches whose chunk k has run its forward among the held ones.
  auto of_chunk = [&](int64_t k) {
    return std::min(full_groups * c.pp + std::clamp<int64_t>(rest - k * c.pp, 0, c.pp),
                    c.micro_batches);
  };
  held.first_chunks = of_chunk(0);
  held.last_chunks = of_chunk(c.vp - 1);
  held.micro_batches = held.first_chunks;
  return held;
}

// The layers whose activations `stage` holds at its peak: each held chunk's own layers. Chunks
// split a stage's layers evenly, except with ends_in_split, where the model's first chunk (stage
// 0's chunk 0) and last (the last stage's chunk vp - 1) hold one layer fewer.
double HeldLayers(const MemoryConfig& c, int64_t stage, int64_t layers, const InFlight& held) {
  if (!c.ends_in_split || c.pp == 1) {
    return static_cast<double>(layers) * static_cast<double>(held.chunks) /
           static_cast<double>(c.vp);
  }
  const int64_t per_chunk = (c.layers + 2) / (c.pp * c.vp);
  return static_cast<double>(held.chunks * per_chunk - (stage == 0 ? held.first_chunks : 0) -
                             (stage == c.pp - 1 ? held.last_chunks : 0));
}

StatusOr<int64_t> Bytes(double bytes, const char* what) {
  if (!(bytes >= 0) || bytes > kMaxBytes) {
    return ErrorStatus("memory model: %s would be %.3g bytes, beyond what is countable", what,
                       bytes);
  }
  return static_cast<int64_t>(std::ceil(bytes));
}

}  // namespace

const char* RecomputeName(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "none";
}

double LayerActivationBytes(const MemoryConfig& c) {
  if (c.recompute == Recompute::kFull) {
    const double input = 2.0 * static_cast<double>(c.seq) / static_cast<double>(c.cp) *
                         static_cast<double>(c.mbs) * static_cast<double>(c.hidden);
    return c.sequence_parallel ? input / static_cast<double>(c.tp) : input;
  }
  const bool scores = c.recompute == Recompute::kNone && !c.flash_attention;
  return Sum(LayerActivationParts(c, scores), c);
}

StatusOr<MemoryEstimate> EstimateMemory(const MemoryConfig& c, const GpuSpec* gpu) {
  LUMOS_RETURN_IF_ERROR(Check(c));
  MemoryEstimate estimate;
  const int64_t multiple = c.vocab_multiple * c.tp;
  estimate.padded_vocab = CeilDiv(c.vocab, multiple) * multiple;
  {
    const ParameterCounts whole = CountParameters(c, 1, c.vocab, !c.tied_embeddings);
    estimate.model_parameters = whole.layer * c.layers + whole.embedding + whole.head;
  }
  const ParameterCounts shard =
      CountParameters(c, c.tp, estimate.padded_vocab, !c.tied_embeddings || c.pp > 1);
  const int64_t shards = c.dp * c.cp;  // Ranks holding copies of the same parameters.
  const double s = static_cast<double>(c.seq) / static_cast<double>(c.cp);
  const double b = static_cast<double>(c.mbs);
  const double h = static_cast<double>(c.hidden);
  const double t = static_cast<double>(c.tp);
  const double layer_bytes = LayerActivationBytes(c);

  std::vector<int64_t> stage_indices = {0};
  if (c.ends_in_split && c.pp > 2) stage_indices.push_back(1);
  if (c.pp > 1) stage_indices.push_back(c.pp - 1);
  for (int64_t index : stage_indices) {
    StageMemory stage;
    stage.stage = index;
    const bool first = index == 0;
    const bool last = index == c.pp - 1;
    // Stages of equal depth; the remainder, if any, on the first stages (the largest count).
    stage.layers = c.layers / c.pp + (index < c.layers % c.pp ? 1 : 0);
    if (c.ends_in_split && c.pp > 1) {
      stage.layers = (c.layers + 2) / c.pp - (first ? 1 : 0) - (last ? 1 : 0);
    }
    stage.parameters =
        shard.layer * stage.layers + (first ? shard.embedding : 0) + (last ? shard.head : 0);
    const double p = static_cast<double>(stage.parameters);
    const double d = static_cast<double>(shards);
    LUMOS_ASSIGN_OR_RETURN(stage.parameter_bytes, Bytes(p * static_cast<double>(c.param_bytes) /
                                                            (c.zero_stage >= 3 ? d : 1),
                                                        "the parameters"));
    LUMOS_ASSIGN_OR_RETURN(stage.gradient_bytes, Bytes(p * static_cast<double>(c.grad_bytes) /
                                                           (c.zero_stage >= 2 ? d : 1),
                                                       "the gradients"));
    LUMOS_ASSIGN_OR_RETURN(stage.optimizer_bytes, Bytes(p * static_cast<double>(c.optimizer_bytes) /
                                                            (c.zero_stage >= 1 ? d : 1),
                                                        "the optimizer states"));
    const InFlight held = HeldAtPeak(c, index);
    stage.chunks_in_flight = held.chunks;
    stage.micro_batches_in_flight = held.micro_batches;
    LUMOS_ASSIGN_OR_RETURN(stage.layer_activation_bytes,
                           Bytes(layer_bytes, "a layer's activations"));
    LUMOS_ASSIGN_OR_RETURN(
        stage.activation_bytes,
        Bytes(layer_bytes * HeldLayers(c, index, stage.layers, held), "the activations"));
    if (c.recompute == Recompute::kFull) {
      LUMOS_ASSIGN_OR_RETURN(stage.recompute_working_bytes,
                             Bytes(FullLayerBytes(c), "the recomputed layer"));
    }
    const double sp_split = c.sequence_parallel ? t : 1;
    if (first && c.dropout) {
      LUMOS_ASSIGN_OR_RETURN(stage.embedding_activation_bytes,
                             Bytes(s * b * h / sp_split * static_cast<double>(held.first_chunks),
                                   "the embedding's activations"));
    }
    if (last) {
      const double logits = 4 * s * b * static_cast<double>(estimate.padded_vocab) / t;
      LUMOS_ASSIGN_OR_RETURN(stage.output_activation_bytes,
                             Bytes(4 * s * b * h / sp_split + logits, "the output's activations"));
    }
    const double total =
        static_cast<double>(stage.parameter_bytes) + static_cast<double>(stage.gradient_bytes) +
        static_cast<double>(stage.optimizer_bytes) + static_cast<double>(stage.activation_bytes) +
        static_cast<double>(stage.recompute_working_bytes) +
        static_cast<double>(stage.embedding_activation_bytes) +
        static_cast<double>(stage.output_activation_bytes);
    LUMOS_ASSIGN_OR_RETURN(stage.total_bytes, Bytes(total, "the total"));
    estimate.stages.push_back(stage);
  }
  for (size_t i = 1; i < estimate.stages.size(); ++i) {
    if (estimate.stages[i].total_bytes > estimate.stages[estimate.largest].total_bytes) {
      estimate.largest = i;
    }
  }
  if (gpu != nullptr && gpu->hbm_bytes) {
    estimate.capacity_bytes = static_cast<int64_t>(std::llround(*gpu->hbm_bytes));
    estimate.fits = estimate.total_bytes() <= *estimate.capacity_bytes;
    estimate.shortfall_bytes =
        estimate.fits ? 0 : estimate.total_bytes() - *estimate.capacity_bytes;
  }

  std::vector<std::string>& lines = estimate.assumptions;
  lines.push_back(Format(
      "parameters: %s transformer, %lld layers on %lld pipeline stage(s), %s, %s MLP; tp=%lld "
      "splits attention, MLP and the word embedding (row-parallel biases and norms replicated); "
      "vocab %lld padded to %lld (a multiple of %lld x tp)",
      c.biases ? "GPT (biases, LayerNorm)" : "Llama-style (no biases, RMSNorm)",
      static_cast<long long>(c.layers), static_cast<long long>(c.pp),
      c.kv_heads == 0 || c.kv_heads == c.heads
          ? "multi-head attention"
          : Format("grouped-query attention (%lld kv heads)", static_cast<long long>(c.kv_heads))
                .c_str(),
      c.gated_mlp ? "gated" : "GeLU", static_cast<long long>(c.tp), static_cast<long long>(c.vocab),
      static_cast<long long>(estimate.padded_vocab), static_cast<long long>(c.vocab_multiple)));
  lines.push_back(Format(
      "embedding: %s%s; stage 0 holds it, the last stage the final norm and the LM head%s",
      c.tied_embeddings ? "tied to the LM head" : "separate from the LM head",
      c.learned_positions ? ", learned positions" : ", no position table (rotary)",
      c.tied_embeddings && c.pp > 1 ? " (its own copy of the tied embedding, as Megatron keeps)"
                                    : ""));
  lines.push_back(Format(
      "bytes per parameter: %lld weights, %lld gradients, %lld optimizer (Adam: fp32 master "
      "weights, momentum, variance); %s",
      static_cast<long long>(c.param_bytes), static_cast<long long>(c.grad_bytes),
      static_cast<long long>(c.optimizer_bytes),
      c.zero_stage == 0 ? "no ZeRO: every data-parallel rank holds all of them"
                        : Format("ZeRO stage %d shards %s over dp*cp = %lld ranks", c.zero_stage,
                                 c.zero_stage == 1 ? "the optimizer states (distributed optimizer)"
                                 : c.zero_stage == 2 ? "optimizer states and gradients"
                                                     : "optimizer states, gradients and weights",
                                 static_cast<long long>(shards))
                              .c_str()));
  lines.push_back(Format(
      "activations: Korthikanti et al. 2022 (Table 2), 16-bit %s%s, recompute %s, "
      "sequence parallel %s%s%s: %s per layer per micro-batch",
      c.dropout ? "with dropout masks" : "without dropout (no masks)",
      c.fp8_gemm_inputs ? ", GEMM inputs saved as FP8 (Transformer Engine)" : "",
      RecomputeName(c.recompute), c.sequence_parallel ? "on" : "off",
      c.flash_attention ? ", flash attention (no scores stored)" : "",
      c.cp > 1 ? Format(", cp=%lld splits the sequence", static_cast<long long>(c.cp)).c_str() : "",
      GiB(layer_bytes).c_str()));
  if (c.recompute == Recompute::kFull) {
    lines.push_back(
        Format("full recompute: the layer being recomputed holds %s more during its "
               "backward",
               GiB(FullLayerBytes(c)).c_str()));
  }
  if (c.vp > 1 && c.pp > 1) {
    const StageMemory& first = estimate.stages.front();
    lines.push_back(Format(
        "pipeline: interleaved (vp=%lld), stage i holds min((pp - i - 1)*2 + (vp - 1)*pp + 1, "
        "micro_batches*vp) chunks of layers/vp layers (Megatron's warm-up): stage 0 holds %lld, "
        "%.2fx the %lld micro-batches 1F1B would",
        static_cast<long long>(c.vp), static_cast<long long>(first.chunks_in_flight),
        static_cast<double>(first.chunks_in_flight) /
            static_cast<double>(c.vp * std::min(c.pp, c.micro_batches)),
        static_cast<long long>(std::min(c.pp, c.micro_batches))));
  } else {
    lines.push_back(Format(
        "pipeline: 1F1B, stage i holds min(pp - i, micro_batches) micro-batches of activations: "
        "stage 0 holds %lld",
        static_cast<long long>(estimate.stages.front().micro_batches_in_flight)));
  }
  lines.push_back(
      "output: the last stage holds one micro-batch's final-norm and LM-head inputs "
      "and its fp32 logits (4*s*b*V/tp bytes) for the loss");
  lines.push_back(
      "not counted: CUDA context, NCCL and cuBLAS workspaces, allocator fragmentation, temporary "
      "buffers; experts (ep): a dense model");
  if (estimate.capacity_bytes) {
    lines.push_back(Format("capacity: %s's HBM as its spec gives it, %s (%.0f GB)",
                           gpu->name.c_str(),
                           GiB(static_cast<double>(*estimate.capacity_bytes)).c_str(),
                           static_cast<double>(*estimate.capacity_bytes) / 1e9));
  } else {
    lines.push_back(gpu == nullptr ? "capacity: no GPU given"
                                   : "capacity: " + gpu->name + "'s spec gives no HBM size");
  }
  return estimate;
}

}  // namespace lumos::modeler::models
