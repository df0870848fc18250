#include "modeler/whatif/settings.h"

#include <array>
#include <charconv>
#include <cmath>
#include <system_error>

#include "modeler/models/hardware/hardware_specs.h"

namespace lumos::modeler::whatif {
namespace {

enum class ValueKind : uint8_t {
  kPositive,
  kZeroStage,
  kFlag,
  kRecompute,
  kGpu,
  kNet,
  kGbps,
  kUs,
  kFactor
};

struct KeyInfo {
  SettingKey key;
  const char* name;
  ValueKind kind;
  bool setup;
};

constexpr std::array<KeyInfo, kSettingKeyCount> kKeys = {{
    {SettingKey::kLayers, "layers", ValueKind::kPositive, true},
    {SettingKey::kHidden, "hidden", ValueKind::kPositive, true},
    {SettingKey::kFfn, "ffn", ValueKind::kPositive, true},
    {SettingKey::kHeads, "heads", ValueKind::kPositive, true},
    {SettingKey::kSeq, "seq", ValueKind::kPositive, true},
    {SettingKey::kMbs, "mbs", ValueKind::kPositive, true},
    {SettingKey::kMicroBatches, "micro_batches", ValueKind::kPositive, true},
    {SettingKey::kVocab, "vocab", ValueKind::kPositive, true},
    {SettingKey::kWorld, "world", ValueKind::kPositive, true},
    {SettingKey::kDp, "dp", ValueKind::kPositive, true},
    {SettingKey::kTp, "tp", ValueKind::kPositive, true},
    {SettingKey::kPp, "pp", ValueKind::kPositive, true},
    {SettingKey::kCp, "cp", ValueKind::kPositive, true},
    {SettingKey::kEp, "ep", ValueKind::kPositive, true},
    {SettingKey::kGpu, "gpu", ValueKind::kGpu, false},
    {SettingKey::kNet, "net", ValueKind::kNet, false},
    {SettingKey::kNetGbps, "net_gbps", ValueKind::kGbps, false},
    {SettingKey::kNetUs, "net_us", ValueKind::kUs, false},
    {SettingKey::kZero, "zero", ValueKind::kZeroStage, false},
    {SettingKey::kRecompute, "recompute", ValueKind::kRecompute, false},
    {SettingKey::kSequenceParallel, "sequence_parallel", ValueKind::kFlag, false},
    {SettingKey::kHost, "host", ValueKind::kFactor, false},
    {SettingKey::kVp, "vp", ValueKind::kPositive, false},
}};

const KeyInfo& Info(SettingKey key) { return kKeys[static_cast<int>(key)]; }

const char* OptionName(SettingScope scope) {
  return scope == SettingScope::kBase ? "--base" : "--set";
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

bool EndsWithNoCase(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  text = text.substr(text.size() - suffix.size());
  for (size_t i = 0; i < suffix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

// A network given as numbers, "400Gbps,3us", holds the separator of the lists: a piece ending in
// "us" right after a piece ending in "gbps" is glued back onto it.
bool ContinuesNetNumbers(std::string_view previous, std::string_view piece) {
  return EndsWithNoCase(Trim(previous), "gbps") && EndsWithNoCase(Trim(piece), "us") &&
         piece.find('=') == std::string_view::npos;
}

std::string Quoted(std::string_view key, std::string_view value) {
  return std::string(key) + "=" + std::string(value);
}

// Which option is parsed: its name (errors start with it) and the keys it allows.
struct Option {
  const char* name;
  SettingScope scope;
};

Status ValueError(const Option& option, std::string_view key, std::string_view value,
                  const std::string& why) {
  return Status::Error(std::string(option.name) + " " + Quoted(key, value) + ": " + why);
}

// Digits only; "not a number" / "not a whole number" / "out of range" otherwise.
StatusOr<int64_t> ParseWhole(const Option& option, std::string_view key, std::string_view value,
                             int64_t min, int64_t max) {
  const std::string range =
      "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  if (value.empty()) return ValueError(option, key, value, "no value (expected " + range + ")");
  bool digits = true;
  for (char c : value) digits = digits && c >= '0' && c <= '9';
  if (!digits) {
    double number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    const bool is_number =
        ec == std::errc() && end == value.data() + value.size() && std::isfinite(number);
    if (is_number && number < static_cast<double>(min)) {
      return ValueError(option, key, value, "out of range (expected " + range + ")");
    }
    return ValueError(option, key, value,
                      std::string(is_number ? "not a whole number" : "not a number") +
                          " (expected " + range + ")");
  }
  int64_t number = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (ec != std::errc() || number < min || number > max) {
    return ValueError(option, key, value, "out of range (expected " + range + ")");
  }
  return number;
}

StatusOr<double> ParseReal(const Option& option, std::string_view key, std::string_view value,
                           bool zero_allowed, const char* unit) {
  const std::string expected =
      std::string("expected ") + (zero_allowed ? ">= 0" : "> 0") + " " + unit;
  double number = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
      !std::isfinite(number)) {
    return ValueError(option, key, value, "not a number (" + expected + ")");
  }
  if (number < 0 || (!zero_allowed && number == 0)) {
    return ValueError(option, key, value, "out of range (" + expected + ")");
  }
  return number;
}

StatusOr<Setting> ParseValue(const Option& option, const KeyInfo& info, std::string_view value,
                             const models::SpecTable& specs) {
  Setting setting;
  setting.key = info.key;
  setting.text = std::string(value);
  switch (info.kind) {
    case ValueKind::kPositive: {
      LUMOS_ASSIGN_OR_RETURN(setting.integer,
                             ParseWhole(option, info.name, value, 1, kMaxWholeNumber));
      break;
    }
    case ValueKind::kZeroStage: {
      LUMOS_ASSIGN_OR_RETURN(setting.integer, ParseWhole(option, info.name, value, 0, 3));
      break;
    }
    case ValueKind::kFlag: {
      LUMOS_ASSIGN_OR_RETURN(setting.integer, ParseWhole(option, info.name, value, 0, 1));
      break;
    }
    case ValueKind::kRecompute: {
      if (value == "none") {
        setting.integer = static_cast<int64_t>(Recompute::kNone);
      } else if (value == "selective") {
        setting.integer = static_cast<int64_t>(Recompute::kSelective);
      } else if (value == "full") {
        setting.integer = static_cast<int64_t>(Recompute::kFull);
      } else {
        return ValueError(option, info.name, value,
                          "unknown mode (expected none, selective, full)");
      }
      break;
    }
    case ValueKind::kGpu: {
      const models::GpuSpec* gpu = specs.FindGpu(value);
      if (gpu == nullptr) {
        return ValueError(option, info.name, value, models::UnknownGpu(value, specs).message());
      }
      setting.name = gpu->name;
      break;
    }
    case ValueKind::kNet: {
      StatusOr<models::NetworkSpec> network = specs.ResolveNetwork(value);
      if (!network.ok()) return ValueError(option, info.name, value, network.status().message());
      setting.name = network->name;
      break;
    }
    case ValueKind::kGbps: {
      LUMOS_ASSIGN_OR_RETURN(setting.number, ParseReal(option, info.name, value, false, "Gbit/s"));
      break;
    }
    case ValueKind::kUs: {
      LUMOS_ASSIGN_OR_RETURN(setting.number, ParseReal(option, info.name, value, true, "µs"));
      break;
    }
    case ValueKind::kFactor: {
      LUMOS_ASSIGN_OR_RETURN(setting.number,
                             ParseReal(option, info.name, value, false, "x the measured time"));
      break;
    }
  }
  return setting;
}

StatusOr<const KeyInfo*> LookUpKey(const Option& option, std::string_view key,
                                   std::string_view value) {
  const std::optional<SettingKey> found = SettingKeyFromName(key);
  if (!found) {
    return ValueError(
        option, key, value,
        "unknown key '" + std::string(key) + "' (valid: " + SettingKeyNames(option.scope) + ")");
  }
  const KeyInfo& info = Info(*found);
  if (option.scope == SettingScope::kBase && !info.setup) {
    return ValueError(option, key, value,
                      "'" + std::string(key) +
                          "' describes a run to estimate, not the traced one: give it with --set "
                          "(--base takes: " +
                          SettingKeyNames(option.scope) + ")");
  }
  return &info;
}

// Splits "k=v,k=v" into items, gluing "400Gbps,3us" of a net value back together.
std::vector<std::string_view> Items(std::string_view text) {
  std::vector<std::string_view> items;
  for (std::string_view piece : Split(text, ',')) {
    if (!items.empty() && ContinuesNetNumbers(items.back(), piece) &&
        Trim(items.back().substr(0, items.back().find('='))) == "net") {
      items.back() =
          std::string_view(items.back().data(),
                           static_cast<size_t>(piece.data() + piece.size() - items.back().data()));
      continue;
    }
    items.push_back(piece);
  }
  return items;
}

// The values of one sweep dimension, gluing net numbers as Items does.
std::vector<std::string_view> Values(std::string_view text, bool net) {
  std::vector<std::string_view> values;
  for (std::string_view piece : Split(text, ',')) {
    if (net && !values.empty() && ContinuesNetNumbers(values.back(), piece)) {
      values.back() =
          std::string_view(values.back().data(),
                           static_cast<size_t>(piece.data() + piece.size() - values.back().data()));
      continue;
    }
    values.push_back(piece);
  }
  return values;
}

std::string Neighbours(const std::vector<std::string_view>& items, size_t index) {
  if (items.size() == 1) return "";
  if (index == 0) return " (before '" + std::string(Trim(items[1])) + "')";
  if (index + 1 == items.size()) return " (after '" + std::string(Trim(items[index - 1])) + "')";
  return " (between '" + std::string(Trim(items[index - 1])) + "' and '" +
         std::string(Trim(items[index + 1])) + "')";
}

bool MulChecked(int64_t a, int64_t b, int64_t* product) {
  return !__builtin_mul_overflow(a, b, product);
}

}  // namespace

const char* SettingKeyName(SettingKey key) { return Info(key).name; }

std::optional<SettingKey> SettingKeyFromName(std::string_view name) {
  for (const KeyInfo& info : kKeys) {
    if (name == info.name) return info.key;
  }
  return std::nullopt;
}

const std::vector<SettingKey>& SettingKeys() {
  static const std::vector<SettingKey> keys = [] {
    std::vector<SettingKey> all;
    all.reserve(kKeys.size());
    for (const KeyInfo& info : kKeys) all.push_back(info.key);
    return all;
  }();
  return keys;
}

bool IsSetupKey(SettingKey key) { return Info(key).setup; }

std::string SettingKeyNames(SettingScope scope) {
  std::string names;
  for (const KeyInfo& info : kKeys) {
    if (scope == SettingScope::kBase && !info.setup) continue;
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

StatusOr<SettingList> ParseSettings(std::string_view text, SettingScope scope,
                                    const models::SpecTable& specs) {
  const Option option{OptionName(scope), scope};
  if (Trim(text).empty()) {
    return Status::Error(std::string(option.name) +
                         ": no settings (expected KEY=VALUE,...; keys: " + SettingKeyNames(scope) +
                         ")");
  }
  const std::vector<std::string_view> items = Items(text);
  SettingList list;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string_view item = Trim(items[i]);
    if (item.empty()) {
      return Status::Error(std::string(option.name) + " '" + std::string(text) + "': empty item" +
                           Neighbours(items, i));
    }
    const size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      return Status::Error(std::string(option.name) + " '" + std::string(item) +
                           "': expected KEY=VALUE");
    }
    const std::string_view key = Trim(item.substr(0, equals));
    const std::string_view value = Trim(item.substr(equals + 1));
    LUMOS_ASSIGN_OR_RETURN(const KeyInfo* info, LookUpKey(option, key, value));
    if (const Setting* earlier = FindSetting(list, info->key)) {
      return ValueError(
          option, key, value,
          "'" + std::string(key) + "' given twice (first " + Quoted(key, earlier->text) + ")");
    }
    LUMOS_ASSIGN_OR_RETURN(Setting setting, ParseValue(option, *info, value, specs));
    list.push_back(std::move(setting));
  }
  return list;
}

StatusOr<std::vector<SettingList>> ParseSweep(std::string_view text,
                                              const models::SpecTable& specs) {
  constexpr SettingScope kScope = SettingScope::kSet;
  const Option option{"--sweep", kScope};
  if (Trim(text).empty()) {
    return Status::Error("--sweep: no settings (expected 'KEY=V1,V2;KEY2=V3,...'; keys: " +
                         SettingKeyNames(kScope) + ")");
  }
  const std::vector<std::string_view> dimensions_text = Split(text, ';');
  std::vector<SettingList> dimensions;
  uint64_t combinations = 1;
  for (size_t i = 0; i < dimensions_text.size(); ++i) {
    const std::string_view dimension = Trim(dimensions_text[i]);
    if (dimension.empty()) {
      return Status::Error("--sweep '" + std::string(text) + "': empty dimension" +
                           Neighbours(dimensions_text, i));
    }
    const size_t equals = dimension.find('=');
    if (equals == std::string_view::npos) {
      return Status::Error("--sweep '" + std::string(dimension) + "': expected KEY=V1,V2,...");
    }
    const std::string_view key = Trim(dimension.substr(0, equals));
    const std::string_view values_text = Trim(dimension.substr(equals + 1));
    LUMOS_ASSIGN_OR_RETURN(const KeyInfo* info, LookUpKey(option, key, values_text));
    for (const SettingList& earlier : dimensions) {
      if (earlier.front().key == info->key) {
        return Status::Error("--sweep " + std::string(dimension) + ": '" + std::string(key) +
                             "' is swept twice");
      }
    }
    const std::vector<std::string_view> values = Values(values_text, info->key == SettingKey::kNet);
    SettingList dimension_values;
    for (size_t v = 0; v < values.size(); ++v) {
      const std::string_view value = Trim(values[v]);
      if (value.empty()) {
        return Status::Error("--sweep " + std::string(dimension) + ": empty value" +
                             Neighbours(values, v));
      }
      LUMOS_ASSIGN_OR_RETURN(Setting setting, ParseValue(option, *info, value, specs));
      for (const Setting& earlier : dimension_values) {
        // Two spellings of one GPU or network ("H100-SXM5-80GB", "NVIDIA H100 80GB HBM3") are
        // the same value too.
        const bool same = earlier.integer == setting.integer && earlier.number == setting.number &&
                          earlier.name == setting.name;
        if (same) {
          return Status::Error("--sweep " + std::string(dimension) + ": value '" +
                               std::string(value) + "' given twice (first '" + earlier.text + "')");
        }
      }
      dimension_values.push_back(std::move(setting));
    }
    combinations *= dimension_values.size();  // At most kMaxSweepCombinations before: no wrap.
    if (combinations > kMaxSweepCombinations) {
      return Status::Error("--sweep '" + std::string(text) + "': more than " +
                           std::to_string(kMaxSweepCombinations) + " combinations");
    }
    dimensions.push_back(std::move(dimension_values));
  }
  std::vector<SettingList> product(1);
  for (const SettingList& dimension : dimensions) {
    std::vector<SettingList> next;
    next.reserve(product.size() * dimension.size());
    for (const SettingList& prefix : product) {
      for (const Setting& value : dimension) {
        next.push_back(prefix);
        next.back().push_back(value);
      }
    }
    product = std::move(next);
  }
  return product;
}

const Setting* FindSetting(const SettingList& list, SettingKey key) {
  for (const Setting& setting : list) {
    if (setting.key == key) return &setting;
  }
  return nullptr;
}

SettingList MergeSettings(const SettingList& base, const SettingList& overrides) {
  SettingList merged = base;
  for (const Setting& setting : overrides) {
    bool replaced = false;
    for (Setting& existing : merged) {
      if (existing.key == setting.key) {
        existing = setting;
        replaced = true;
      }
    }
    if (!replaced) merged.push_back(setting);
  }
  return merged;
}

std::string FormatSettings(const SettingList& list) {
  std::string text;
  for (const Setting& setting : list) {
    if (!text.empty()) text += ",";
    text += Quoted(SettingKeyName(setting.key), setting.text);
  }
  return text;
}

SetupValues WithSettings(SetupValues setup, const SettingList& list) {
  for (const Setting& setting : list) {
    int64_t* field = nullptr;
    switch (setting.key) {
      case SettingKey::kLayers:
        field = &setup.layers;
        break;
      case SettingKey::kHidden:
        field = &setup.hidden;
        break;
      case SettingKey::kFfn:
        field = &setup.ffn;
        break;
      case SettingKey::kHeads:
        field = &setup.heads;
        break;
      case SettingKey::kSeq:
        field = &setup.seq;
        break;
      case SettingKey::kMbs:
        field = &setup.mbs;
        break;
      case SettingKey::kMicroBatches:
        field = &setup.micro_batches;
        break;
      case SettingKey::kVocab:
        field = &setup.vocab;
        break;
      case SettingKey::kWorld:
        field = &setup.world;
        break;
      case SettingKey::kDp:
        field = &setup.dp;
        break;
      case SettingKey::kTp:
        field = &setup.tp;
        break;
      case SettingKey::kPp:
        field = &setup.pp;
        break;
      case SettingKey::kCp:
        field = &setup.cp;
        break;
      case SettingKey::kEp:
        field = &setup.ep;
        break;
      case SettingKey::kSequenceParallel:
        setup.sequence_parallel = setting.integer != 0;
        break;
      default:
        break;
    }
    if (field != nullptr) *field = setting.integer;
  }
  return setup;
}

Status CheckSetup(const SetupValues& setup) {
  const std::array<std::pair<const char*, int64_t>, 14> values = {{
      {"layers", setup.layers},
      {"hidden", setup.hidden},
      {"ffn", setup.ffn},
      {"heads", setup.heads},
      {"seq", setup.seq},
      {"mbs", setup.mbs},
      {"micro_batches", setup.micro_batches},
      {"vocab", setup.vocab},
      {"world", setup.world},
      {"dp", setup.dp},
      {"tp", setup.tp},
      {"pp", setup.pp},
      {"cp", setup.cp},
      {"ep", setup.ep},
  }};
  for (const auto& [name, value] : values) {
    if (value <= 0) {
      return ErrorStatus("%s=%lld: must be a whole number > 0", name,
                         static_cast<long long>(value));
    }
  }
  const auto ll = [](int64_t v) { return static_cast<long long>(v); };
  for (const auto& [name, degree] :
       {std::pair{"dp", setup.dp}, {"tp", setup.tp}, {"pp", setup.pp}, {"cp", setup.cp}}) {
    if (setup.world % degree != 0) {
      return ErrorStatus("%s=%lld does not divide world=%lld", name, ll(degree), ll(setup.world));
    }
  }
  int64_t product = setup.dp;
  const bool overflow = !MulChecked(product, setup.tp, &product) ||
                        !MulChecked(product, setup.pp, &product) ||
                        !MulChecked(product, setup.cp, &product);
  if (overflow || product != setup.world) {
    const std::string product_text = overflow ? "more than 2^63" : std::to_string(product);
    return ErrorStatus("world=%lld is not dp*tp*pp*cp = %lld*%lld*%lld*%lld = %s", ll(setup.world),
                       ll(setup.dp), ll(setup.tp), ll(setup.pp), ll(setup.cp),
                       product_text.c_str());
  }
  if (setup.heads % setup.tp != 0) {
    return ErrorStatus(
        "heads=%lld is not divisible by tp=%lld (each tensor-parallel rank holds "
        "whole heads)",
        ll(setup.heads), ll(setup.tp));
  }
  if (setup.hidden % setup.heads != 0) {
    return ErrorStatus("hidden=%lld is not divisible by heads=%lld (the head size is hidden/heads)",
                       ll(setup.hidden), ll(setup.heads));
  }
  if (setup.ffn % setup.tp != 0) {
    return ErrorStatus("ffn=%lld is not divisible by tp=%lld (the MLP is split by columns over tp)",
                       ll(setup.ffn), ll(setup.tp));
  }
  if (setup.layers % setup.pp != 0) {
    return ErrorStatus("layers=%lld is not divisible by pp=%lld (pipeline stages of equal depth)",
                       ll(setup.layers), ll(setup.pp));
  }
  if ((setup.dp * setup.cp) % setup.ep != 0) {
    return ErrorStatus(
        "ep=%lld does not divide dp*cp = %lld*%lld (experts are sharded within the "
        "data- and context-parallel ranks)",
        ll(setup.ep), ll(setup.dp), ll(setup.cp));
  }
  if (setup.cp > 1 && setup.seq % (2 * setup.cp) != 0) {
    return ErrorStatus(
        "seq=%lld is not divisible by 2*cp = %lld (context parallelism splits each "
        "sequence into 2*cp chunks)",
        ll(setup.seq), ll(2 * setup.cp));
  }
  if (setup.sequence_parallel && (setup.seq / setup.cp) % setup.tp != 0) {
    return ErrorStatus(
        "seq/cp = %lld/%lld is not divisible by tp=%lld (sequence parallelism "
        "splits the sequence over tp)",
        ll(setup.seq), ll(setup.cp), ll(setup.tp));
  }
  return Status::Ok();
}

}  // namespace lumos::modeler::whatif
