// main() of the Lumos benchmark binaries: Google Benchmark's, plus context lines that say how
// the numbers were made (build type, the event mix) so a pasted result explains itself.
#include <benchmark/benchmark.h>

#include <string>

#include "bench/event_mix.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("lumos_build_type", LUMOS_BUILD_TYPE);
  lumos::bench::MixOptions defaults;
  benchmark::AddCustomContext(
      "lumos_event_mix", "FSDP transformer step, " + std::to_string(defaults.layers) + " layers, " +
                             std::to_string(defaults.host_threads) + " host threads, " +
                             std::to_string(defaults.streams) + " streams, seed " +
                             std::to_string(defaults.seed) + " (docs/performance.md)");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
