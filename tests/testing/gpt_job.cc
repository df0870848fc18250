#include "tests/testing/gpt_job.h"

#include <gtest/gtest.h>

#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/synth/gpt_synth.h"

namespace lumos::testing {

std::vector<std::string> WriteGptJob(const std::string& dir, const GptJobOptions& options) {
  modeler::GptConfig config;
  config.seed = options.seed;
  config.nvtx = options.nvtx;
  config.forward_only = options.forward_only;
  Status set = modeler::ApplyGptSettings(kSmallGptSettings, &config);
  if (set.ok()) set = modeler::ApplyGptSettings(options.settings, &config);
  if (!set.ok()) {
    ADD_FAILURE() << set.message();
    return {};
  }
  auto written = modeler::SynthesizeGpt(config, modeler::models::SpecTable::Builtin(), {}, dir);
  if (!written.ok()) {
    ADD_FAILURE() << written.status().message();
    return {};
  }
  std::vector<std::string> paths;
  for (int64_t r = 0; r < config.world(); ++r) {
    paths.push_back(dir + "/gpt.rank" + std::to_string(r) + ".pb.zst");
  }
  return paths;
}

}  // namespace lumos::testing
