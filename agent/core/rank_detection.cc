#include "agent/core/rank_detection.h"

#include <limits>
#include <string>
#include <string_view>
#include <utility>

namespace lumos::agent {
namespace {

struct Source {
  const char* rank;
  const char* local_rank;
  const char* world_size;
};

constexpr Source kSources[] = {
    {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
};
constexpr size_t kSourceCount = sizeof(kSources) / sizeof(kSources[0]);

void Warn(RankInfo* info, const char* name, std::string_view value, std::string_view why,
          std::string_view used) {
  std::string line = std::string(name) + "=" + internal::QuoteForLog(value) + ": ";
  line.append(why).append("; using ").append(used);
  info->warnings.push_back(std::move(line));
}

// The value of `name` if set (non-empty) and an integer in [min, int32 max]; a set but bad value
// warns with `fallback` as what is used instead.
std::optional<int32_t> ReadInt(const EnvLookup& env, const char* name, int64_t min,
                               std::string_view fallback, RankInfo* info) {
  std::optional<std::string> text = env(name);
  if (!text || internal::TrimSpaces(*text).empty()) return std::nullopt;
  std::optional<int64_t> value = internal::ParseInt64(*text);
  if (!value || *value < min || *value > std::numeric_limits<int32_t>::max()) {
    Warn(info, name, *text,
         min == 0 ? "not a non-negative 32-bit integer" : "not a positive 32-bit integer",
         fallback);
    return std::nullopt;
  }
  return static_cast<int32_t>(*value);
}

}  // namespace

RankInfo DetectRank(const EnvLookup& env) {
  RankInfo info;
  for (size_t i = 0; i < kSourceCount; ++i) {
    const Source& source = kSources[i];
    const std::string next = i + 1 < kSourceCount
                                 ? std::string("the next source (") + kSources[i + 1].rank + ")"
                                 : std::string("an unknown rank");
    std::optional<int32_t> rank = ReadInt(env, source.rank, 0, next, &info);
    if (!rank) continue;
    info.rank = rank;
    info.source = source.rank;
    info.world_size = ReadInt(env, source.world_size, 1, "an unknown world size", &info);
    if (info.world_size && *info.rank >= *info.world_size) {
      Warn(&info, source.world_size, std::to_string(*info.world_size),
           std::string("not above ") + source.rank + "=" + std::to_string(*info.rank),
           "an unknown world size");
      info.world_size.reset();
    }
    info.local_rank = ReadInt(env, source.local_rank, 0, "an unknown local rank", &info);
    if (info.local_rank && info.world_size && *info.local_rank >= *info.world_size) {
      Warn(&info, source.local_rank, std::to_string(*info.local_rank),
           std::string("not below ") + source.world_size + "=" + std::to_string(*info.world_size),
           "an unknown local rank");
      info.local_rank.reset();
    }
    return info;
  }
  return info;
}

void FillHeaderRank(const RankInfo& rank, schema::HeaderInfo* header) {
  header->has_rank = rank.rank.has_value();
  header->rank = rank.rank.value_or(0);
  header->has_local_rank = rank.local_rank.has_value();
  header->local_rank = rank.local_rank.value_or(0);
  header->has_world_size = rank.world_size.has_value();
  header->world_size = rank.world_size.value_or(0);
}

}  // namespace lumos::agent
