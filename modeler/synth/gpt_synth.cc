#include "modeler/synth/gpt_synth.h"

#include <memory>

#include "modeler/io/output_file.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/synth/gpt_costs.h"
#include "modeler/synth/gpt_program.h"
#include "modeler/synth/gpt_timeline.h"
#include "schema/writer/trace_file_writer.h"

namespace lumos::modeler {
namespace {

std::string SettingsText(const GptConfig& c) {
  auto kv = [](const char* key, int64_t value) {
    return std::string(key) + "=" + std::to_string(value) + ",";
  };
  std::string text = kv("layers", c.layers) + kv("hidden", c.hidden) + kv("ffn", c.ffn_size()) +
                     kv("heads", c.heads) + kv("seq", c.seq) + kv("mbs", c.mbs) +
                     kv("micro_batches", c.micro_batches) + kv("vocab", c.vocab) + kv("tp", c.tp) +
                     kv("dp", c.dp) + kv("pp", c.pp) + kv("iterations", c.iterations) +
                     "gpu=" + c.gpu;
  return text;
}

// The periodic window the files are (GptConfig::window_realtime_ns): as the agent names it in
// the header (duration 0, no iterations counted yet) and at the close (`duration_ns` > 0).
schema::CaptureWindowEvent Window(const GptConfig& c, uint64_t duration_ns) {
  schema::CaptureWindowEvent w;
  w.start_ns = GptTimeline::kStartNs;
  w.duration_ns = duration_ns;
  w.trigger = schema::WindowTrigger::kPeriodic;
  w.first_iteration = 0;
  w.iteration_count = duration_ns > 0 ? static_cast<uint64_t>(c.iterations) : 0;
  w.iteration_marker = "ProfilerStep*";
  w.target = "synth gpt --window";
  w.start_realtime_ns = c.window_realtime_ns;
  w.requested_iterations = static_cast<uint64_t>(c.iterations);
  return w;
}

schema::HeaderInfo Header(const GptConfig& c, const models::GpuSpec& gpu, int32_t rank) {
  const int32_t per_host = gpu.nvlink_domain_gpus.value_or(8);
  schema::HeaderInfo h;
  h.agent_version = "synth-gpt";
  h.producer = schema::Producer::kSynthetic;
  h.host_name = "gpt-node" + std::to_string(rank / per_host);
  h.pid = 4200 + static_cast<uint32_t>(rank);
  h.job_id = kGptJobId;
  h.has_rank = h.has_local_rank = h.has_world_size = true;
  h.rank = rank;
  h.local_rank = rank % per_host;
  h.world_size = static_cast<int32_t>(c.world());
  schema::DeviceInfo device;
  device.device_id = 0;
  device.name = gpu.devices.front();
  device.sm_count = static_cast<uint32_t>(gpu.sms);
  device.sm_clock_khz = static_cast<uint32_t>(gpu.boost_clock_mhz.value_or(0) * 1000);
  device.memory_bytes = static_cast<uint64_t>(gpu.hbm_bytes.value_or(0));
  device.compute_major = static_cast<uint32_t>(gpu.compute_capability.value_or(0) / 10);
  device.compute_minor = static_cast<uint32_t>(gpu.compute_capability.value_or(0) % 10);
  device.pci_bus_id = "0000:" + std::to_string(10 + h.local_rank) + ":00.0";
  h.devices.push_back(device);
  h.clock_domains.push_back({schema::ClockId::kMonotonic, "monotonic", 1});
  h.default_clock_id = schema::ClockId::kMonotonic;
  h.source_path =
      "lumos-model synth gpt: a test double for a GPU run of Megatron-style GPT training "
      "(durations from the cost models, not a measurement)";
  h.command_line = "lumos-model synth gpt --set " + SettingsText(c) + " --seed " +
                   std::to_string(c.seed) + (c.nvtx ? "" : " --no-nvtx") +
                   (c.forward_only ? " --forward-only" : "");
  h.start_time_ns = static_cast<uint64_t>(GptTimeline::kStartNs);
  if (c.window_realtime_ns != 0) {
    h.has_capture_window = true;
    h.capture_window = Window(c, 0);
  }
  return h;
}

template <typename Event>
void AddAll(schema::TraceFileWriter* w, const std::vector<Event>& events) {
  for (const Event& e : events) w->Add(e);
}

}  // namespace

StatusOr<SynthResult> SynthesizeGpt(const GptConfig& config, const models::SpecTable& specs,
                                    models::CostModel costs, const std::string& out_dir,
                                    bool force) {
  LUMOS_RETURN_IF_ERROR(CheckGptConfig(config, specs));
  const models::GpuSpec& gpu = *specs.FindGpu(config.gpu);
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<GptCosts> model,
                         GptCosts::Make(gpu, specs, std::move(costs)));
  GptTimeline timeline(config);
  LUMOS_RETURN_IF_ERROR(RunGptProgram(config, *model, &timeline));
  std::vector<GptRankEvents>& ranks = timeline.Finish();

  io::OutputSet outputs;
  LUMOS_RETURN_IF_ERROR(outputs.UseDirectory(out_dir));
  SynthResult result;
  for (int32_t r = 0; r < static_cast<int32_t>(ranks.size()); ++r) {
    const GptRankEvents& e = ranks[static_cast<size_t>(r)];
    std::string path = out_dir;
    if (path.back() != '/') path += '/';
    path += "gpt.rank" + std::to_string(r) + ".pb.zst";
    LUMOS_ASSIGN_OR_RETURN(io::OutputFile * file, outputs.Add(path, SynthReplacePolicy(force)));
    schema::WriterOptions options;
    options.header_in_own_frame = false;
    options.log_failures = false;
    auto created =
        schema::TraceFileWriter::Create(file->write_path(), Header(config, gpu, r), options);
    if (!created.ok()) return file->Reword(created.status());
    std::unique_ptr<schema::TraceFileWriter> w = std::move(created).value();
    w->AddThread({timeline.thread_id(r, false), "python", 4200 + static_cast<uint32_t>(r)});
    w->AddThread({timeline.thread_id(r, true), "pt_autograd_0", 4200 + static_cast<uint32_t>(r)});
    AddAll(w.get(), e.communicators);
    AddAll(w.get(), e.api_calls);
    AddAll(w.get(), e.kernels);
    AddAll(w.get(), e.memsets);
    AddAll(w.get(), e.syncs);
    AddAll(w.get(), e.cuda_events);
    AddAll(w.get(), e.collectives);
    AddAll(w.get(), e.gemms);
    AddAll(w.get(), e.nvtx);
    AddAll(w.get(), e.host_ranges);
    if (config.window_realtime_ns != 0) {
      w->Add(Window(config, static_cast<uint64_t>(e.end_ns - GptTimeline::kStartNs)));
    }
    schema::TrailerInfo trailer;
    trailer.has_rank = trailer.has_world_size = true;
    trailer.rank = r;
    trailer.world_size = static_cast<int32_t>(ranks.size());
    // As CloseComplete(), with the NCCL world's rank and size in the trailer.
    LUMOS_RETURN_IF_ERROR(file->Reword(w->Close(static_cast<uint64_t>(e.end_ns + 1000), trailer)));
    if (w->stats().events_lost != 0) {
      return file->Reword(ErrorStatus("writing %s: %llu events could not be written", path.c_str(),
                                      static_cast<unsigned long long>(w->stats().events_lost)));
    }
    LUMOS_RETURN_IF_ERROR(file->Finish());
    result.events += w->stats().events;
    result.bytes += w->stats().bytes_written;
    ++result.files;
  }
  LUMOS_RETURN_IF_ERROR(outputs.Commit());
  return result;
}

}  // namespace lumos::modeler
