// The inputs of `costs fit`: tables and traces; see cost_inputs.h.
#include "modeler/models/costs/cost_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "modeler/graph/job.h"
#include "modeler/models/kernels/kernel_trace.h"
#include "modeler/trace/trace_reader.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler::models {
namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool IsTraceName(std::string_view path) { return EndsWith(path, ".pb.zst"); }

// Every *.csv under `dir` (by name) and every trace (trace_set.h).
Status AddDirectory(const std::string& dir, CostInputs* out, std::vector<std::string>* problems) {
  namespace fs = std::filesystem;
  std::vector<std::string> tables;
  std::error_code error;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, error);
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    const std::string path = it->path().string();
    if (EndsWith(path, ".csv") && it->is_regular_file(error)) tables.push_back(path);
  }
  if (error) return ErrorStatus("%s: cannot list: %s", dir.c_str(), error.message().c_str());
  std::sort(tables.begin(), tables.end());
  std::vector<std::string> unreadable;
  StatusOr<std::vector<std::string>> traces = ExpandTracePaths({dir}, &unreadable);
  if (tables.empty() && !traces.ok()) {
    return ErrorStatus("%s: no *.csv table or *.pb.zst trace inside", dir.c_str());
  }
  out->tables.insert(out->tables.end(), tables.begin(), tables.end());
  if (traces.ok()) {
    out->traces.insert(out->traces.end(), traces->begin(), traces->end());
    problems->insert(problems->end(), unreadable.begin(), unreadable.end());
  }
  return Status::Ok();
}

Status AddInput(const std::string& input, CostInputs* out, std::vector<std::string>* problems) {
  struct stat st {};
  if (stat(input.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return AddDirectory(input, out, problems);
    (IsTraceName(input) ? out->traces : out->tables).push_back(input);
    return Status::Ok();
  }
  const int error = errno;
  if (input.find_first_of("*?[") != std::string::npos) {
    std::vector<std::string> unreadable;
    StatusOr<std::vector<std::string>> matches = ExpandTracePaths({input}, &unreadable);
    if (!matches.ok()) {
      if (!IsTraceName(input)) return matches.status();
      problems->push_back(matches.status().message());
      return Status::Ok();
    }
    problems->insert(problems->end(), unreadable.begin(), unreadable.end());
    for (const std::string& match : *matches) {
      if (match.find_first_of("*?[") != std::string::npos) {  // A name with a * in it.
        (IsTraceName(match) ? out->traces : out->tables).push_back(match);
        continue;
      }
      LUMOS_RETURN_IF_ERROR(AddInput(match, out, problems));
    }
    return Status::Ok();
  }
  if (IsTraceName(input)) {
    if (error == ENOENT || error == ENOTDIR) {
      problems->push_back(input + ": no such file or directory");
    } else {
      out->traces.push_back(input);  // Named with the reason when it is opened.
    }
    return Status::Ok();
  }
  return ErrorStatus("%s: %s", input.c_str(),
                     error == ENOENT ? "no such file or directory" : std::strerror(error));
}

struct TraceHeader {
  std::string path;
  std::string host;
  std::vector<std::string> devices;
};

// The GPU of a job: what its headers' device names map to.
Status PlaceJob(const std::vector<TraceHeader>& headers, const SpecTable& specs,
                TraceCalibration* job) {
  std::set<std::string> names;
  const TraceHeader* first_unknown = nullptr;
  std::string unknown;
  std::map<std::string, const GpuSpec*> gpus;  // By spec name.
  for (const TraceHeader& h : headers) {
    for (const std::string& device : h.devices) {
      if (device.empty() || !names.insert(device).second) continue;
      const GpuSpec* gpu = specs.FindGpu(device);
      if (gpu != nullptr) {
        gpus.emplace(gpu->name, gpu);
      } else if (first_unknown == nullptr) {
        first_unknown = &h;
        unknown = device;
      }
    }
  }
  if (!names.empty()) job->device = *names.begin();
  if (gpus.size() == 1 && first_unknown == nullptr) job->gpu = gpus.begin()->second;
  if (job->sized == 0 && job->gemms.empty()) return Status::Ok();  // Nothing to place.
  const std::string what = "job " + job->job_id;
  if (first_unknown != nullptr) {
    return UnknownGpu(unknown, specs).WithContext(first_unknown->path + ": " + what);
  }
  if (gpus.empty()) {
    return ErrorStatus(
        "%s: %s: the trace headers name no GPU device, so its collectives and GEMMs cannot be "
        "placed on a GPU (--gpu NAME says which)",
        headers.front().path.c_str(), what.c_str());
  }
  if (gpus.size() > 1) {
    std::string list;
    for (const auto& [name, gpu] : gpus) list += (list.empty() ? "" : ", ") + name;
    return ErrorStatus("%s: its ranks ran on GPUs of %zu kinds (%s): calibrate one kind per job",
                       what.c_str(), gpus.size(), list.c_str());
  }
  return Status::Ok();
}

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The job's traced GEMMs as points per dtype (without their GPU: PlaceJob finds it).
void ReadTracedGemms(const Job& job, TraceCalibration* c) {
  // One GEMM: a call as the program made it (an imported operator writes one GemmCall per
  // launch, all with its thread, span and External id; the agent one per cuBLAS call).
  using GemmKey =
      std::tuple<size_t, uint32_t, int64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, int>;
  struct Gemm {
    const schema::GemmCallEvent* call = nullptr;
    uint64_t duration_ns = 0;
    bool tf32_kernel = false;
  };
  std::map<GemmKey, Gemm> gemms;
  for (size_t r = 0; r < job.ranks.size(); ++r) {
    const RankTrace& rank = job.ranks[r];
    for (size_t i = 0; i < rank.kernels.size(); ++i) {
      const schema::GemmCallEvent* call = rank.GemmOf(i);
      if (call == nullptr || call->api == schema::GemmApi::kFrameworkAttention ||
          call->api == schema::GemmApi::kFrameworkAttentionBackward) {
        continue;
      }
      ++c->gemm_stats.kernels;
      const GemmKey key{r,
                        call->thread_id,
                        call->start_ns,
                        call->external_id,
                        call->m,
                        call->n,
                        call->k,
                        call->batch_count,
                        static_cast<int>(call->a_type)};
      Gemm& gemm = gemms[key];
      gemm.call = call;
      gemm.duration_ns += rank.kernels[i].duration_ns;
      const std::string_view name = rank.kernels[i].name;
      gemm.tf32_kernel |= Contains(name, "s1688gemm") || Contains(name, "tf32");
    }
  }
  std::map<std::pair<int, std::tuple<int64_t, int64_t, int64_t>>, std::vector<uint64_t>> shapes;
  for (const auto& [key, gemm] : gemms) {
    ++c->gemm_stats.calls;
    if (gemm.call->batch_count > 1) {
      ++c->gemm_stats.batched;
      continue;
    }
    const std::optional<DType> dtype = GemmDType(*gemm.call, gemm.tf32_kernel);
    const GemmShape shape{static_cast<int64_t>(gemm.call->m), static_cast<int64_t>(gemm.call->n),
                          static_cast<int64_t>(gemm.call->k), 1};
    if (!dtype || gemm.duration_ns == 0 || !CheckGemmShape(shape).ok()) {
      ++c->gemm_stats.other_dtype;
      continue;
    }
    shapes[{static_cast<int>(*dtype), {shape.m, shape.n, shape.k}}].push_back(gemm.duration_ns);
  }
  for (auto& [key, durations] : shapes) {
    const DType dtype = static_cast<DType>(key.first);
    if (c->gemms.empty() || c->gemms.back().dtype != dtype) {
      c->gemms.push_back(TracedGemms{nullptr, dtype, {}, "job " + c->job_id, 0});
    }
    c->gemms.back().calls += durations.size();
    std::sort(durations.begin(), durations.end());
    const size_t half = durations.size() / 2;
    const uint64_t median = durations.size() % 2 == 1
                                ? durations[half]
                                : (durations[half - 1] + durations[half] + 1) / 2;
    const auto& [m, n, k] = key.second;
    c->gemms.back().points.push_back(
        GemmPoint{GemmShape{m, n, k, 1}, static_cast<int64_t>(median)});
  }
}

// Points on a dtype the job's GPU has no peak for are left out (counted).
void PlaceGemms(TraceCalibration* c) {
  if (c->gpu == nullptr) return;
  std::erase_if(c->gemms, [c](const TracedGemms& g) {
    if (c->gpu->PeakFlops(g.dtype) > 0) return false;
    c->gemm_stats.other_dtype += g.calls;
    return true;
  });
  for (TracedGemms& g : c->gemms) g.gpu = c->gpu;
}

// The job's non-GEMM GPU work of known work, per key (cost_inputs.h), once its GPU is placed.
bool BackwardAttention(std::string_view name) {
  return Contains(name, "bprop") || Contains(name, "bwd") || Contains(name, "backward");
}

void ReadTracedKernels(const Job& job, TraceCalibration* c, const AttentionShape* attention) {
  std::map<std::string, TraceCalibration::KernelSamples> by_key;  // By KeyName: a stable order.
  // Attention kernels by direction and name: durations (CostInputs::attention).
  std::map<std::pair<bool, std::string_view>, std::vector<int64_t>> attention_kernels;
  for (const RankTrace& rank : job.ranks) {
    for (const TraceGpuWork& w : ClassifyRank(rank)) {
      if (w.key.kind == KernelClass::kGemm || w.key.kind == KernelClass::kCommunication) continue;
      ++c->gpu_records;
      if (attention != nullptr && c->gpu != nullptr && w.key.kind == KernelClass::kAttention &&
          w.duration_ns > 0) {
        attention_kernels[{BackwardAttention(w.name), w.name}].push_back(w.duration_ns);
        continue;
      }
      if (c->gpu == nullptr || w.duration_ns <= 0 || w.bytes == 0 ||
          (w.key.kind != KernelClass::kMemcpy && w.key.kind != KernelClass::kMemset)) {
        ++c->without_work;
        continue;
      }
      TraceCalibration::KernelSamples& k = by_key[KeyName(w.key)];
      k.key = w.key;
      k.samples.push_back(KernelSample{KernelWork{0, static_cast<double>(w.bytes)}, w.duration_ns});
    }
  }
  // Per direction the name with the most time is the attention; the others are its helpers.
  for (const bool backward : {false, true}) {
    const std::vector<int64_t>* main = nullptr;
    int64_t most = 0;
    uint64_t launches = 0;
    for (const auto& [key, durations] : attention_kernels) {
      if (key.first != backward) continue;
      launches += durations.size();
      int64_t total = 0;
      for (int64_t d : durations) total += d;
      if (main == nullptr || total > most) {
        main = &durations;
        most = total;
      }
    }
    if (main == nullptr) continue;
    c->attention_auxiliary += launches - main->size();
    AttentionShape shape = *attention;
    shape.backward = backward;
    StatusOr<KernelWork> work = AttentionWork(shape, DType::kBf16);
    if (!work.ok()) {
      c->without_work += launches;
      continue;
    }
    TraceCalibration::KernelSamples& k = by_key["attention"];
    k.key.kind = KernelClass::kAttention;
    for (int64_t d : *main) k.samples.push_back(KernelSample{*work, d});
  }
  c->without_work += c->attention_auxiliary;
  for (auto& [name, k] : by_key) c->kernel_samples.push_back(std::move(k));
}

}  // namespace

std::optional<DType> GemmDType(const schema::GemmCallEvent& call, bool tf32_kernel) {
  using schema::DataType;
  switch (call.a_type) {
    case DataType::kBfloat16:
      return DType::kBf16;
    case DataType::kFloat16:
      return DType::kFp16;
    case DataType::kFloat8E4m3:
    case DataType::kFloat8E5m2:
      return DType::kFp8;
    case DataType::kFloat32:
      if (tf32_kernel || call.math_mode == schema::GemmMathMode::kTf32TensorOp ||
          call.compute_type == schema::GemmComputeType::kFloat32FastTf32) {
        return DType::kTf32;
      }
      return DType::kFp32;
    default:
      return std::nullopt;
  }
}

StatusOr<CostInputs> ExpandCostInputs(const std::vector<std::string>& inputs,
                                      std::vector<std::string>* problems) {
  CostInputs out;
  for (const std::string& input : inputs) LUMOS_RETURN_IF_ERROR(AddInput(input, &out, problems));
  std::sort(out.traces.begin(), out.traces.end());
  out.traces.erase(std::unique(out.traces.begin(), out.traces.end()), out.traces.end());
  return out;
}

uint64_t TraceCalibration::GemmPoints() const {
  uint64_t n = 0;
  for (const TracedGemms& g : gemms) n += g.points.size();
  return n;
}

namespace {

// "; GEMM: ..." of Describe().
std::string DescribeGemms(const TraceCalibration& c) {
  const TraceCalibration::GemmStats& s = c.gemm_stats;
  if (s.kernels == 0) return "; GEMM: no kernel with a GEMM shape";
  std::string out = "; GEMM: " + std::to_string(s.calls) + " call(s) (" +
                    std::to_string(s.kernels) + " kernel(s))";
  std::string left_out;
  if (s.batched > 0) left_out += std::to_string(s.batched) + " batched";
  if (s.other_dtype > 0) {
    left_out += (left_out.empty() ? "" : ", ") + std::to_string(s.other_dtype) +
                " in a dtype without a peak on this GPU or not modelled";
  }
  if (!left_out.empty()) out += " (left out: " + left_out + ")";
  if (c.gemms.empty()) return out + ": calibrates nothing";
  out += ": " + std::to_string(c.GemmPoints()) + " point(s) (one per shape, the median of its " +
         "calls) on " + c.gemms.front().gpu->name;
  for (size_t i = 0; i < c.gemms.size(); ++i) {
    out += (i == 0 ? " " : ", ") + std::string(DTypeName(c.gemms[i].dtype)) + " " +
           std::to_string(c.gemms[i].points.size());
  }
  return out;
}

// "; kernels: ..." of Describe().
std::string DescribeKernels(const TraceCalibration& c) {
  if (c.gpu_records == 0) return "";  // No GPU work besides GEMMs and collectives: nothing to say.
  std::string out = "; kernels: " + std::to_string(c.gpu_records) + " GPU record(s), " +
                    std::to_string(c.without_work) + " without work";
  if (c.gpu == nullptr) return out + " (no GPU of the specs: calibrates nothing)";
  if (c.kernel_samples.empty()) return out + ": calibrates nothing";
  uint64_t samples = 0;
  std::string keys;
  for (const TraceCalibration::KernelSamples& k : c.kernel_samples) {
    samples += k.samples.size();
    keys += (keys.empty() ? "" : ", ") + KeyName(k.key) + " " + std::to_string(k.samples.size());
  }
  out += ": " + std::to_string(samples) + " sample(s) on " + c.gpu->name + " (" + keys + ")";
  if (c.attention_auxiliary > 0) {
    out += ", " + std::to_string(c.attention_auxiliary) +
           " attention helper kernel(s) left out (not the direction's main kernel)";
  }
  return out;
}

}  // namespace

std::string TraceCalibration::Describe() const {
  std::string out = "job " + job_id + " (" + std::to_string(ranks) + " rank(s)";
  if (hosts > 1) out += " on " + std::to_string(hosts) + " hosts";
  out += ", " + (device.empty() ? std::string("no GPU named") : device) + "): ";
  if (stats.operations == 0) {
    return out + "no collective operations" + DescribeGemms(*this) + DescribeKernels(*this);
  }
  out += std::to_string(stats.operations) + " collective operation(s)";
  std::string left_out;
  auto note = [&left_out](uint64_t n, const char* what) {
    if (n == 0) return;
    left_out += (left_out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  note(stats.incomplete, "with a rank's record missing");
  note(stats.fused, "fused with others");
  note(stats.no_transfer, "without a transfer time");
  if (!left_out.empty()) out += " (" + left_out + ")";
  if (sized == 0) {
    out += stats.points == 0 ? ", none usable" : ", none with a message size";
    out += ": calibrates nothing";
  } else {
    out += ": " + std::to_string(sized) + " calibration point(s) for the collective model on " +
           (gpu != nullptr ? gpu->name : device);
    if (multi_node > 0) {
      out += " (" + std::to_string(multi_node) + " across hosts: measurements only)";
    }
    if (sized < stats.points) {
      out += ", " + std::to_string(stats.points - sized) + " without a message size";
    }
  }
  return out + DescribeGemms(*this) + DescribeKernels(*this);
}

namespace {

// What one loaded job calibrates, its GPU from `headers`' device names.
StatusOr<TraceCalibration> CalibrateLoaded(const Job& job, const std::vector<TraceHeader>& headers,
                                           const SpecTable& specs,
                                           const AttentionShape* attention) {
  TraceCalibration c;
  c.job_id = job.job_id;
  c.ranks = job.ranks.size();
  std::set<std::string> hosts;
  for (const RankTrace& rank : job.ranks) {
    if (!rank.host.empty()) hosts.insert(rank.host);
  }
  c.hosts = hosts.size();
  c.collectives = CalibrationFromJob(job, &c.stats);
  for (const CalibrationPoint& p : c.collectives.points) {
    if (p.bytes == 0 || p.time_ns <= 0) continue;
    ++c.sized;
    if (p.nodes > 1) ++c.multi_node;
  }
  ReadTracedGemms(job, &c);
  LUMOS_RETURN_IF_ERROR(PlaceJob(headers, specs, &c));
  PlaceGemms(&c);
  ReadTracedKernels(job, &c, attention);
  return c;
}

}  // namespace

StatusOr<TraceCalibration> CalibrateJob(const Job& job, const SpecTable& specs,
                                        const AttentionShape* attention) {
  std::vector<TraceHeader> headers;
  for (const RankTrace& rank : job.ranks) {
    headers.push_back({rank.path, rank.host, {}});
    if (!rank.device.empty()) headers.back().devices.push_back(rank.device);
  }
  return CalibrateLoaded(job, headers, specs, attention);
}

StatusOr<std::vector<TraceCalibration>> ReadTraceCalibrations(
    const std::vector<std::string>& traces, const SpecTable& specs,
    std::vector<std::string>* problems, const std::string& unnamed_gpu,
    const AttentionShape* attention) {
  // The headers first (cheap): which files make which job, and on what GPUs.
  std::map<std::string, std::vector<TraceHeader>> jobs;
  for (const std::string& path : traces) {
    StatusOr<std::unique_ptr<TraceReader>> opened = TraceReader::Open(path);
    if (!opened.ok()) {
      problems->push_back(opened.status().message() + " (skipped)");
      continue;
    }
    const pb::TraceHeader& h = (*opened)->header();
    TraceHeader header{path, h.host_name(), {}};
    for (const pb::Device& d : h.devices()) header.devices.push_back(d.name());
    jobs[h.job_id()].push_back(std::move(header));
  }
  std::vector<TraceCalibration> out;
  for (const auto& [job_id, headers] : jobs) {
    std::vector<std::string> paths;
    for (const TraceHeader& h : headers) paths.push_back(h.path);
    LoadOptions options;
    options.job_id = job_id;
    StatusOr<Job> job = LoadJob(paths, options);
    if (!job.ok()) {
      problems->push_back("job " + job_id + ": " + job.status().message() + " (skipped)");
      continue;
    }
    problems->insert(problems->end(), job->input_problems.begin(), job->input_problems.end());
    // A header written before the job's first context names no device; its trailer may (schema
    // 2.4), and the loaded rank has it from there.
    std::vector<TraceHeader> named = headers;
    for (TraceHeader& h : named) {
      if (!h.devices.empty()) continue;
      for (const RankTrace& rank : job->ranks) {
        if (rank.path == h.path && !rank.device.empty()) h.devices.push_back(rank.device);
      }
      if (h.devices.empty() && !unnamed_gpu.empty()) h.devices.push_back(unnamed_gpu);
    }
    LUMOS_ASSIGN_OR_RETURN(TraceCalibration c, CalibrateLoaded(*job, named, specs, attention));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace lumos::modeler::models
