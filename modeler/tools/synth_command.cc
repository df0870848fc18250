// `lumos-model synth FILE|DIR|GLOB... -o OUT_DIR --ranks N [--iterations K] [--jitter F]
// [--seed S] [--ranks-per-host H]`: a large job from a real one (modeler/synth/job_synth.h).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "modeler/graph/job.h"
#include "modeler/synth/job_synth.h"
#include "modeler/tools/commands.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler {
namespace {

constexpr const char kHelp[] =
    "usage: lumos-model synth FILE|DIR|GLOB... -o OUT_DIR --ranks N [--iterations K]\n"
    "                         [--jitter F] [--seed S] [--ranks-per-host H]\n"
    "\n"
    "Builds a large job from the traces of a real one (T ranks), to measure the modeler at\n"
    "scale: N (a multiple of T) ranks in N/T groups with their own communicators, rank R in\n"
    "group R mod (N/T), so each group spans hosts; the input\n"
    "repeats K times (default 1) with seq numbers and ids continued; durations shrink by a\n"
    "random factor in [1-F, 1] (default F 0.05, seed S 1); H ranks per host (default 8), each\n"
    "host's clock skewed by 1 ms more than the previous one. Writes one .pb.zst per rank.\n";

bool ParseInt(const std::string& text, long long low, long long high, long long* out) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < low || v > high) return false;
  *out = v;
  return true;
}

}  // namespace

int RunSynth(const Args& args) {
  std::vector<std::string> inputs;
  std::string out_dir;
  SynthOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    const bool takes_value = a == "-o" || a == "--ranks" || a == "--iterations" ||
                             a == "--jitter" || a == "--seed" || a == "--ranks-per-host";
    if (takes_value && i + 1 >= args.size()) {
      std::fprintf(stderr, "lumos-model synth: %s needs a value\n", a.c_str());
      return 2;
    }
    long long v = 0;
    if (a == "-o") {
      out_dir = args[++i];
    } else if (a == "--ranks" || a == "--iterations" || a == "--ranks-per-host" || a == "--seed") {
      const std::string& text = args[++i];
      if (!ParseInt(text, a == "--seed" ? 0 : 1, a == "--seed" ? INT64_MAX : 1 << 20, &v)) {
        std::fprintf(stderr, "lumos-model synth: %s '%s' is not a valid number\n", a.c_str(),
                     text.c_str());
        return 2;
      }
      if (a == "--ranks") options.ranks = static_cast<int32_t>(v);
      if (a == "--iterations") options.iterations = static_cast<int32_t>(v);
      if (a == "--ranks-per-host") options.ranks_per_host = static_cast<int32_t>(v);
      if (a == "--seed") options.seed = static_cast<uint64_t>(v);
    } else if (a == "--jitter") {
      const std::string& text = args[++i];
      char* end = nullptr;
      options.jitter = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(options.jitter >= 0 && options.jitter < 1)) {
        std::fprintf(stderr, "lumos-model synth: --jitter '%s' must be in [0, 1)\n", text.c_str());
        return 2;
      }
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "lumos-model synth: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.empty() || out_dir.empty()) {
    std::fprintf(stderr, "lumos-model synth: needs input traces and -o OUT_DIR (see --help)\n");
    return 2;
  }
  auto paths = ExpandTracePaths(inputs);
  if (!paths.ok()) {
    std::fprintf(stderr, "lumos-model synth: %s\n", paths.status().message().c_str());
    return 1;
  }
  auto job = LoadJob(*paths);
  if (!job.ok()) {
    std::fprintf(stderr, "lumos-model synth: %s\n", job.status().message().c_str());
    return 1;
  }
  auto result = SynthesizeJob(*job, options, out_dir);
  if (!result.ok()) {
    std::fprintf(stderr, "lumos-model synth: %s\n", result.status().message().c_str());
    return 1;
  }
  std::printf("%s: %" PRIu64 " files, %" PRIu64 " events, %.1f MB\n", out_dir.c_str(),
              result->files, result->events, static_cast<double>(result->bytes) / 1e6);
  return 0;
}

}  // namespace lumos::modeler
