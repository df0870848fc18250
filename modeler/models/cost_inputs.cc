// The inputs of `costs fit`: tables and traces; see cost_inputs.h.
#include "modeler/models/cost_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <utility>

#include "modeler/graph/job.h"
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
  if (job->sized == 0) return Status::Ok();  // Nothing to place.
  const std::string what = "job " + job->job_id;
  if (first_unknown != nullptr) {
    return UnknownGpu(unknown, specs).WithContext(first_unknown->path + ": " + what);
  }
  if (gpus.empty()) {
    return ErrorStatus(
        "%s: %s: the trace headers name no GPU device, so its collectives cannot be placed on a "
        "fabric",
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

}  // namespace

StatusOr<CostInputs> ExpandCostInputs(const std::vector<std::string>& inputs,
                                      std::vector<std::string>* problems) {
  CostInputs out;
  for (const std::string& input : inputs) LUMOS_RETURN_IF_ERROR(AddInput(input, &out, problems));
  std::sort(out.traces.begin(), out.traces.end());
  out.traces.erase(std::unique(out.traces.begin(), out.traces.end()), out.traces.end());
  return out;
}

std::string TraceCalibration::Describe() const {
  std::string out = "job " + job_id + " (" + std::to_string(ranks) + " rank(s)";
  if (hosts > 1) out += " on " + std::to_string(hosts) + " hosts";
  out += ", " + (device.empty() ? std::string("no GPU named") : device) + "): ";
  if (stats.operations == 0) {
    return out +
           "no collective operations: calibrates nothing; GEMM kernels are not read from "
           "traces yet";
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
  return out + "; GEMM kernels are not read from traces yet";
}

StatusOr<std::vector<TraceCalibration>> ReadTraceCalibrations(
    const std::vector<std::string>& traces, const SpecTable& specs,
    std::vector<std::string>* problems) {
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
    TraceCalibration c;
    c.job_id = job_id;
    c.ranks = job->ranks.size();
    std::set<std::string> hosts;
    for (const RankTrace& rank : job->ranks) {
      if (!rank.host.empty()) hosts.insert(rank.host);
    }
    c.hosts = hosts.size();
    c.collectives = CalibrationFromJob(*job, &c.stats);
    for (const CalibrationPoint& p : c.collectives.points) {
      if (p.bytes == 0 || p.time_ns <= 0) continue;
      ++c.sized;
      if (p.nodes > 1) ++c.multi_node;
    }
    // GEMM kernels: not calibrated from traces yet. Traces carry GEMM shapes since schema 2.2
    // (the cublas channel, Kineto imports with record_shapes: RankTrace::GemmOf). This is where
    // the job's GEMM kernels are to become GemmPoints (shape, dtype, measured duration) on
    // c.gpu, for FitCostInputs (cost_queries.cc) to fit beside the tables' rows.
    LUMOS_RETURN_IF_ERROR(PlaceJob(headers, specs, &c));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace lumos::modeler::models
