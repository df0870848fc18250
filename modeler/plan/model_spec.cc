#include "modeler/plan/model_spec.h"

#include <charconv>
#include <vector>

namespace lumos::modeler::plan {
namespace {

constexpr int64_t kLargest = int64_t{1} << 24;

}  // namespace

int64_t ModelSpec::ffn_size() const {
  if (ffn > 0) return ffn;
  if (!gated()) return 4 * hidden;
  const int64_t f = (8 * hidden + 2) / 3;  // SwiGLU's 2/3 of 4h, rounded up to 256.
  return (f + 255) / 256 * 256;
}

StatusOr<ModelSpec> ParseModelSpec(std::string_view text) {
  ModelSpec spec;
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return ErrorStatus("--model '%.*s': expected FAMILY:K=V,... (gpt or llama)",
                       static_cast<int>(text.size()), text.data());
  }
  spec.family = std::string(text.substr(0, colon));
  if (spec.family != "gpt" && spec.family != "llama") {
    return ErrorStatus("--model: unknown family '%s' (gpt or llama)", spec.family.c_str());
  }
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return ErrorStatus("--model: '%.*s' is not K=V", static_cast<int>(item.size()), item.data());
    }
    const std::string key(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    if (key == "dropout") {
      if (value != "0" && value != "1") {
        return ErrorStatus("--model: dropout=%.*s: 0 (none) or 1 (masks stored)",
                           static_cast<int>(value.size()), value.data());
      }
      spec.dropout = value == "1";
      continue;
    }
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 1 || v > kLargest) {
      return ErrorStatus("--model: %s=%.*s: must be a whole number in 1..%lld", key.c_str(),
                         static_cast<int>(value.size()), value.data(),
                         static_cast<long long>(kLargest));
    }
    if (key == "layers") {
      spec.layers = v;
    } else if (key == "hidden") {
      spec.hidden = v;
    } else if (key == "ffn") {
      spec.ffn = v;
    } else if (key == "heads") {
      spec.heads = v;
    } else if (key == "kv_heads") {
      spec.kv_heads = v;
    } else if (key == "seq") {
      spec.seq = v;
    } else if (key == "vocab") {
      spec.vocab = v;
    } else {
      return ErrorStatus(
          "--model: unknown key '%s' (layers, hidden, ffn, heads, kv_heads, seq, vocab, dropout)",
          key.c_str());
    }
  }
  const std::vector<std::pair<const char*, int64_t>> required = {{"layers", spec.layers},
                                                                 {"hidden", spec.hidden},
                                                                 {"heads", spec.heads},
                                                                 {"seq", spec.seq},
                                                                 {"vocab", spec.vocab}};
  for (const auto& [key, value] : required) {
    if (value == 0) return ErrorStatus("--model: %s= is required", key);
  }
  if (spec.hidden % spec.heads != 0) {
    return ErrorStatus("--model: heads (%lld) must divide hidden (%lld)",
                       static_cast<long long>(spec.heads), static_cast<long long>(spec.hidden));
  }
  if (spec.kv_heads > 0 && spec.heads % spec.kv_heads != 0) {
    return ErrorStatus("--model: kv_heads (%lld) must divide heads (%lld)",
                       static_cast<long long>(spec.kv_heads), static_cast<long long>(spec.heads));
  }
  return spec;
}

models::MemoryConfig MemoryConfigOf(const ModelSpec& spec) {
  models::MemoryConfig c;
  c.layers = spec.layers;
  c.hidden = spec.hidden;
  c.ffn = spec.ffn_size();
  c.heads = spec.heads;
  c.kv_heads = spec.kv_heads;
  c.seq = spec.seq;
  c.vocab = spec.vocab;
  c.gated_mlp = spec.gated();
  c.biases = !spec.gated();
  c.learned_positions = !spec.gated();
  c.tied_embeddings = !spec.gated();
  c.dropout = spec.has_dropout();  // Llama trains without (Megatron's llama configs: 0).
  c.flash_attention = true;
  return c;
}

}  // namespace lumos::modeler::plan
