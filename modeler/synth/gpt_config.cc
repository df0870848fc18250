#include "modeler/synth/gpt_config.h"

#include <charconv>

#include "modeler/models/hardware/hardware_specs.h"

namespace lumos::modeler {
namespace {

constexpr int64_t kMaxValue = int64_t{1} << 31;

struct Key {
  std::string_view name;
  int64_t GptConfig::*field;
  int64_t min;
};

constexpr Key kKeys[] = {
    {"layers", &GptConfig::layers, 1},
    {"hidden", &GptConfig::hidden, 1},
    {"ffn", &GptConfig::ffn, 1},
    {"heads", &GptConfig::heads, 1},
    {"seq", &GptConfig::seq, 1},
    {"mbs", &GptConfig::mbs, 1},
    {"micro_batches", &GptConfig::micro_batches, 1},
    {"vocab", &GptConfig::vocab, 1},
    {"tp", &GptConfig::tp, 1},
    {"dp", &GptConfig::dp, 1},
    {"pp", &GptConfig::pp, 1},
    {"iterations", &GptConfig::iterations, 1},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::string_view GptSettingNames() {
  return "layers, hidden, ffn, heads, seq, mbs, micro_batches, vocab, tp, dp, pp, iterations, "
         "gpu";
}

Status ApplyGptSettings(std::string_view text, GptConfig* config) {
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      return ErrorStatus("--set: '%.*s' is not KEY=VALUE", static_cast<int>(item.size()),
                         item.data());
    }
    const std::string_view key = Trim(item.substr(0, equals));
    const std::string_view value = Trim(item.substr(equals + 1));
    if (key == "gpu") {
      if (value.empty()) return Status::Error("--set: gpu needs a name");
      config->gpu = std::string(value);
      continue;
    }
    const Key* found = nullptr;
    for (const Key& k : kKeys) {
      if (k.name == key) found = &k;
    }
    if (found == nullptr) {
      return ErrorStatus("--set: unknown key '%.*s' (known: %.*s)", static_cast<int>(key.size()),
                         key.data(), static_cast<int>(GptSettingNames().size()),
                         GptSettingNames().data());
    }
    int64_t number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size() || number < found->min ||
        number > kMaxValue) {
      return ErrorStatus("--set: %.*s: '%.*s' is not a whole number in [%lld, %lld]",
                         static_cast<int>(key.size()), key.data(), static_cast<int>(value.size()),
                         value.data(), static_cast<long long>(found->min),
                         static_cast<long long>(kMaxValue));
    }
    config->*(found->field) = number;
  }
  return Status::Ok();
}

Status CheckGptConfig(const GptConfig& c, const models::SpecTable& specs) {
  auto divides = [](int64_t a, int64_t b) { return b % a == 0; };
  if (c.pp != 1) {
    return ErrorStatus("--set: pp=%lld: only pp=1 is supported (no pipeline parallelism yet)",
                       static_cast<long long>(c.pp));
  }
  if (!divides(c.heads, c.hidden)) {
    return ErrorStatus("--set: heads=%lld does not divide hidden=%lld",
                       static_cast<long long>(c.heads), static_cast<long long>(c.hidden));
  }
  if (!divides(c.tp, c.heads)) {
    return ErrorStatus("--set: tp=%lld does not divide heads=%lld", static_cast<long long>(c.tp),
                       static_cast<long long>(c.heads));
  }
  if (!divides(c.tp, c.ffn_size())) {
    return ErrorStatus("--set: tp=%lld does not divide ffn=%lld", static_cast<long long>(c.tp),
                       static_cast<long long>(c.ffn_size()));
  }
  if (!divides(c.tp, c.vocab)) {
    return ErrorStatus("--set: tp=%lld does not divide vocab=%lld", static_cast<long long>(c.tp),
                       static_cast<long long>(c.vocab));
  }
  // Sizes a GEMM shape and the byte counts hold (the models refuse dimensions above 2^31).
  constexpr int64_t kMaxDim = int64_t{1} << 24;
  if (c.hidden > kMaxDim || c.ffn_size() > kMaxDim || c.vocab > kMaxDim || c.tokens() > kMaxDim) {
    return ErrorStatus("--set: hidden, ffn, vocab and mbs x seq must be at most %lld",
                       static_cast<long long>(kMaxDim));
  }
  // Every rank's events are held until all are written (the ranks are timed together): about
  // 13 KB a layer, micro-batch and iteration per rank.
  constexpr int64_t kMaxLayerSteps = 200'000;
  const double steps = static_cast<double>(c.world()) * static_cast<double>(c.layers) *
                       static_cast<double>(c.micro_batches) * static_cast<double>(c.iterations);
  if (steps > static_cast<double>(kMaxLayerSteps)) {
    return ErrorStatus(
        "--set: tp x dp x layers x micro_batches x iterations = %.0f: at most %lld (the "
        "traces of all ranks are built in memory together)",
        steps, static_cast<long long>(kMaxLayerSteps));
  }
  if (c.slow_rank >= c.world()) {
    return ErrorStatus("--slow-rank %lld: the job has ranks 0..%lld (tp x dp)",
                       static_cast<long long>(c.slow_rank), static_cast<long long>(c.world() - 1));
  }
  const models::GpuSpec* gpu = specs.FindGpu(c.gpu);
  if (gpu == nullptr) return models::UnknownGpu(c.gpu, specs);
  if (gpu->devices.empty()) {
    return ErrorStatus("--set: gpu %s has no CUDA device name in the specs", c.gpu.c_str());
  }
  return Status::Ok();
}

}  // namespace lumos::modeler
