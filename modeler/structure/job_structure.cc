#include "modeler/structure/job_structure.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/analysis/iteration_ranges.h"
#include "modeler/models/kernels/kernel_class.h"
#include "modeler/models/kernels/kernel_op_link.h"
#include "modeler/structure/structure_internal.h"

namespace lumos::modeler::structure {

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kOptimizer:
      return "optimizer";
    case Phase::kOther:
      return "other";
  }
  return "other";
}

const char* OriginName(Origin origin) {
  switch (origin) {
    case Origin::kUnknown:
      return "unknown";
    case Origin::kTrace:
      return "trace";
    case Origin::kGiven:
      return "given";
    case Origin::kDerived:
      return "derived";
  }
  return "unknown";
}

const char* GroupRoleName(GroupRole role) {
  switch (role) {
    case GroupRole::kData:
      return "data";
    case GroupRole::kTensor:
      return "tensor";
    case GroupRole::kPipeline:
      return "pipeline";
    case GroupRole::kContext:
      return "context";
    case GroupRole::kExpert:
      return "expert";
    case GroupRole::kWorld:
      return "world";
    case GroupRole::kUnknown:
      return "unknown";
  }
  return "unknown";
}

const std::vector<std::string_view>& SetupKeys() {
  static const std::vector<std::string_view> kKeys = {
      "layers", "hidden", "ffn", "heads", "seq", "mbs", "micro_batches",
      "vocab",  "world",  "dp",  "tp",    "pp",  "cp",  "ep"};
  return kKeys;
}

Value* SetupField(Setup* s, std::string_view key) {
  Value* fields[] = {
      &s->layers, &s->hidden, &s->ffn, &s->heads, &s->seq, &s->mbs, &s->micro_batches,
      &s->vocab,  &s->world,  &s->dp,  &s->tp,    &s->pp,  &s->cp,  &s->ep};
  const auto& keys = SetupKeys();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return fields[i];
  }
  return nullptr;
}

const Value* SetupField(const Setup& setup, std::string_view key) {
  return SetupField(const_cast<Setup*>(&setup), key);
}

namespace {

// Kernel classes of every GPU op, with the launching cpu_op where the trace has one (the
// innermost kCpuOp host range on the launching thread around the launch call).
void Classify(const Job& job, const ExecutionGraph& g, std::vector<NodeInfo>* nodes) {
  std::vector<std::map<uint32_t, models::NestedRanges>> ops(job.ranks.size());
  for (size_t r = 0; r < job.ranks.size(); ++r) {
    const RankTrace& trace = job.ranks[r];
    for (size_t i = 0; i < trace.host_ranges.size(); ++i) {
      const schema::HostRangeEvent& h = trace.host_ranges[i];
      if (h.category != schema::HostRangeCategory::kCpuOp) continue;
      ops[r][h.thread_id].Add(h.start_ns, h.start_ns + static_cast<int64_t>(h.duration_ns),
                              static_cast<uint32_t>(i));
    }
    for (auto& [thread, ranges] : ops[r]) ranges.Build();
  }
  models::KernelClassCache cache;  // Node names view the Job's pool: one call per (name, op).
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    models::KernelClass& c = (*nodes)[n].kernel_class;
    if (node.kind == NodeKind::kApiCall) {
      c = models::KernelClass::kOther;
    } else if (node.kind == NodeKind::kMemcpy) {
      c = models::KernelClass::kMemcpy;
    } else if (node.kind == NodeKind::kMemset) {
      c = models::KernelClass::kMemset;
    } else if (node.collective != kNoNode || node.work == WorkClass::kCommunication) {
      c = models::KernelClass::kCommunication;
    } else {
      std::string_view op;
      if (node.launch != kNoNode) {
        const RankTrace& trace = job.ranks[node.rank_index];
        const uint32_t source = g.node_source[node.launch];
        const auto& threads = ops[node.rank_index];
        if (source < trace.api_calls.size()) {
          const schema::ApiCallEvent& call = trace.api_calls[source];
          if (auto t = threads.find(call.thread_id); t != threads.end()) {
            const int64_t i = t->second.Innermost(
                call.start_ns, call.start_ns + static_cast<int64_t>(call.duration_ns));
            if (i >= 0) op = trace.host_ranges[static_cast<size_t>(i)].name;
          }
        }
      }
      c = cache.Get(node.name, op);
    }
  }
}

std::string IterationMethod(IterationSource source, const StructureOptions& options) {
  switch (source) {
    case IterationSource::kRanges:
      return options.iteration_pattern.empty()
                 ? "ProfilerStep ranges"
                 : "ranges matching '" + options.iteration_pattern + "'";
    case IterationSource::kDetected:
      return "kernel repetition";
    case IterationSource::kWholeTrace:
      return "whole trace";
    case IterationSource::kNone:
      return "none (no nodes)";
  }
  return "none";
}

std::string JoinUnique(const std::vector<std::string>& items) {
  std::vector<std::string> seen;
  for (const std::string& s : items) {
    if (std::find(seen.begin(), seen.end(), s) == seen.end()) seen.push_back(s);
  }
  std::string out;
  for (const std::string& s : seen) out += (out.empty() ? "" : " | ") + s;
  return out;
}

}  // namespace

StatusOr<JobStructure> RecoverStructure(const Job& job, const ExecutionGraph& g,
                                        const StructureOptions& options) {
  if (g.node_source.size() != g.nodes.size()) {
    return Status::Error("structure: the graph was built without GraphOptions::record_sources");
  }
  AnalysisOptions analysis;
  if (!options.iteration_pattern.empty()) {
    LUMOS_RETURN_IF_ERROR(SetIterationPattern(options.iteration_pattern, &analysis));
  }
  JobStructure out;
  out.nodes.resize(g.nodes.size());
  Classify(job, g, &out.nodes);
  const std::vector<internal::RankNodes> index = internal::IndexRanks(g, job.ranks.size());
  std::vector<uint8_t> in_iteration(g.nodes.size(), 0);
  std::vector<std::string> iteration_methods, phase_methods, layer_methods;
  for (uint32_t r = 0; r < job.ranks.size(); ++r) {
    RankStructure rs;
    rs.rank_index = r;
    rs.rank = job.ranks[r].rank;
    const RankIterations found = FindIterations(job, g, r, analysis);
    iteration_methods.push_back(IterationMethod(found.source, options));
    for (const IterationRange& range : found.ranges) {
      Segment s = internal::MakeSegment(g, index[r], r, range.start_ns, range.end_ns, {});
      s.iteration = static_cast<uint32_t>(rs.iterations.size());
      for (uint32_t n : s.nodes) in_iteration[n] = 1;
      rs.iterations.push_back(std::move(s));
    }
    std::string method;
    rs.phases = internal::FindPhases(job, g, r, index[r], rs.iterations, out.nodes, &method);
    phase_methods.push_back(method);
    for (const Segment& s : rs.phases) {
      for (uint32_t n : s.nodes) out.nodes[n].phase = s.phase;
    }
    rs.layers = internal::FindLayers(job, g, r, index[r], rs.phases, out.nodes, &method);
    layer_methods.push_back(method);
    for (const Segment& s : rs.layers) {
      for (uint32_t n : s.nodes) out.nodes[n].layer = s.layer;
    }
    out.ranks.push_back(std::move(rs));
  }
  out.iteration_method = JoinUnique(iteration_methods);
  out.phase_method = JoinUnique(phase_methods);
  out.layer_method = JoinUnique(layer_methods);
  bool phases_known = false, layers_known = false;
  for (const RankStructure& rs : out.ranks) {
    phases_known = phases_known || !rs.phases.empty();
    layers_known = layers_known || !rs.layers.empty();
  }
  out.groups = internal::FindGroups(job, g, out.nodes, in_iteration, phases_known, layers_known);
  internal::SetCoordinates(job, out.groups, &out.ranks);
  // Layer counts that differ between forward phases (pipeline stages differ by design; a rank
  // whose phases differ is worth a look).
  std::set<size_t> counts;
  for (const RankStructure& rs : out.ranks) {
    std::map<std::pair<uint32_t, uint32_t>, size_t> per_phase;
    for (const Segment& l : rs.layers) {
      if (l.phase == Phase::kForward) ++per_phase[{l.iteration, l.micro_batch}];
    }
    for (const auto& [key, count] : per_phase) counts.insert(count);
  }
  if (counts.size() > 1) {
    out.notes.push_back(
        "layer instances per forward phase differ: " + std::to_string(*counts.begin()) + " to " +
        std::to_string(*counts.rbegin()));
  }
  size_t unknown_roles = 0;
  for (const CommGroup& group : out.groups) unknown_roles += group.role == GroupRole::kUnknown;
  if (unknown_roles > 0) {
    out.notes.push_back(std::to_string(unknown_roles) +
                        " communicator(s) of unknown role: degrees derived as 1 (tp, pp, ep) "
                        "assume none of them is tensor, pipeline or expert parallel");
  }
  out.setup = internal::SetupFromTrace(job, g, out);
  LUMOS_RETURN_IF_ERROR(internal::MergeSetup(options.base, &out.setup, &out.unknowns, &out.notes));
  // A dimension of size 1 has every rank at 0.
  for (RankStructure& rs : out.ranks) {
    const std::pair<const Value*, int32_t*> dims[] = {{&out.setup.dp, &rs.dp_rank},
                                                      {&out.setup.tp, &rs.tp_rank},
                                                      {&out.setup.pp, &rs.pp_rank},
                                                      {&out.setup.cp, &rs.cp_rank},
                                                      {&out.setup.ep, &rs.ep_rank}};
    for (const auto& [degree, coordinate] : dims) {
      if (degree->known() && degree->value == 1 && *coordinate < 0) *coordinate = 0;
    }
  }
  return out;
}

}  // namespace lumos::modeler::structure
