// Design: `lumos-model synth gpt`: traces of a Megatron-style GPT training job that never ran,
// a test double standing in for a GPU run (no GPU, no measurement): tp x dp ranks, each trace
// what the agent (liblumos_agent.so) would record for that rank of a PyTorch + Megatron job
// (the program: gpt_program.h; its timeline and records: gpt_timeline.h), with every duration
// from the project's cost models on the configured GPU (gpt_costs.h) times a seeded jitter.
// Header: producer SYNTHETIC, agent_version "synth-gpt", source_path saying it is a test
// double, job id "gpt_synth", hosts of nvlink_domain_gpus ranks each; the trailer has the
// rank and world size. So structure recovery, estimation and replay have a realistic
// transformer trace to work on. Files "<out_dir>/gpt.rank<R>.pb.zst", all or none
// (io::OutputSet, as job_synth.h writes); existing files of those names are replaced only
// once every rank is written, other files in out_dir are left alone.
// Deterministic: the same config, seed and cost model give byte-identical files.
// Threading: single-threaded.
#pragma once

#include <string>

#include "base/status.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/synth/gpt_config.h"
#include "modeler/synth/job_synth.h"

namespace lumos::modeler {

inline constexpr const char kGptJobId[] = "gpt_synth";

// `config` must have passed CheckGptConfig(config, specs); `costs` may be empty (defaults).
// `force`: replace files in out_dir that lumos-model did not write (SynthReplacePolicy).
StatusOr<SynthResult> SynthesizeGpt(const GptConfig& config, const models::SpecTable& specs,
                                    models::CostModel costs, const std::string& out_dir,
                                    bool force = false);

}  // namespace lumos::modeler
