#include "modeler/structure/structure_report.h"

#include <cinttypes>

#include "modeler/io/json_writer.h"

namespace lumos::modeler::structure {
namespace {

struct PhaseTimes {
  size_t count[4] = {};
  int64_t ns[4] = {};
};

PhaseTimes TimesOf(const std::vector<Segment>& segments) {
  PhaseTimes t;
  for (const Segment& s : segments) {
    ++t.count[static_cast<int>(s.phase)];
    t.ns[static_cast<int>(s.phase)] += s.end_ns - s.begin_ns;
  }
  return t;
}

double Ms(int64_t ns, size_t per) {
  return per > 0 ? static_cast<double>(ns) / 1e6 / static_cast<double>(per) : 0.0;
}

std::string Coordinates(const RankStructure& r) {
  auto one = [](const char* name, int32_t v) {
    return std::string(name) + "=" + (v < 0 ? std::string("?") : std::to_string(v));
  };
  return one("dp", r.dp_rank) + " " + one("tp", r.tp_rank) + " " + one("pp", r.pp_rank) + " " +
         one("ep", r.ep_rank);
}

std::string RankList(const std::vector<int32_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) {
    // Runs of consecutive ranks as a-b.
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j;
  }
  return out;
}

}  // namespace

void WriteStructureText(const StructureReport& report, std::FILE* f) {
  const JobStructure& s = *report.structure;
  std::fprintf(f, "job %s: %zu rank(s)\n", report.job_id.c_str(), s.ranks.size());
  std::fprintf(f, "iterations: %s\nphases: %s\nlayers: %s\n\n", s.iteration_method.c_str(),
               s.phase_method.c_str(), s.layer_method.c_str());
  std::fprintf(f, "setup          value  origin   how\n");
  for (std::string_view key : SetupKeys()) {
    const Value& v = *SetupField(s.setup, key);
    const std::string value = v.known() ? std::to_string(v.value) : "?";
    std::fprintf(f, "  %-13.*s %6s  %-8s %s\n", static_cast<int>(key.size()), key.data(),
                 value.c_str(), OriginName(v.origin), v.how.c_str());
  }
  std::fprintf(f, "\ngroups (%zu)\n", s.groups.size());
  for (const CommGroup& g : s.groups) {
    std::fprintf(f, "  comm %016" PRIx64 "  %-8s %3u ranks [%s]  %" PRIu64 " ops, %.1f MB  %s\n",
                 g.comm_id, GroupRoleName(g.role), g.size, RankList(g.ranks).c_str(), g.operations,
                 static_cast<double>(g.bytes) / 1e6, g.evidence.c_str());
  }
  std::fprintf(f,
               "\nranks          iterations (mean ms)  forward      backward     optimizer    "
               "layers  coordinates\n");
  for (const RankStructure& r : s.ranks) {
    int64_t iter_ns = 0;
    for (const Segment& it : r.iterations) iter_ns += it.end_ns - it.begin_ns;
    const size_t iterations = r.iterations.size();
    const PhaseTimes p = TimesOf(r.phases);
    auto phase = [&](Phase x) {
      char text[32];
      std::snprintf(text, sizeof(text), "%zu %.2f", p.count[static_cast<int>(x)],
                    Ms(p.ns[static_cast<int>(x)], iterations));
      return std::string(text);
    };
    std::fprintf(f, "  rank %-5d %5zu %10.2f          %-12s %-12s %-12s %6zu  %s\n", r.rank,
                 iterations, Ms(iter_ns, iterations), phase(Phase::kForward).c_str(),
                 phase(Phase::kBackward).c_str(), phase(Phase::kOptimizer).c_str(), r.layers.size(),
                 Coordinates(r).c_str());
  }
  std::fprintf(f, "  (phases: count, ms per iteration)\n");
  if (!s.unknowns.empty()) {
    std::fprintf(f, "\nunknown (%zu)\n", s.unknowns.size());
    for (const std::string& u : s.unknowns) std::fprintf(f, "  %s\n", u.c_str());
  }
  if (!s.notes.empty() || !report.warnings.empty()) {
    std::fprintf(f, "\nnotes\n");
    for (const std::string& n : s.notes) std::fprintf(f, "  %s\n", n.c_str());
    for (const std::string& n : report.warnings) std::fprintf(f, "  %s\n", n.c_str());
  }
}

Status WriteStructureJson(const StructureReport& report, std::FILE* file) {
  const JobStructure& s = *report.structure;
  io::JsonWriter w([file](std::string_view chunk) {
    return std::fwrite(chunk.data(), 1, chunk.size(), file) == chunk.size()
               ? Status::Ok()
               : Status::Error("write failed");
  });
  w.BeginObject(true);
  w.KeyString("job", report.job_id);
  w.KeyString("iteration_method", s.iteration_method);
  w.KeyString("phase_method", s.phase_method);
  w.KeyString("layer_method", s.layer_method);
  w.Key("setup");
  w.BeginObject(true);
  for (std::string_view key : SetupKeys()) {
    const Value& v = *SetupField(s.setup, key);
    w.Key(key);
    w.BeginObject();
    w.Key("value");
    if (v.known()) {
      w.Int(v.value);
    } else {
      w.Null();
    }
    w.KeyString("origin", OriginName(v.origin));
    w.KeyString("how", v.how);
    w.EndObject();
  }
  w.EndObject();
  w.Key("groups");
  w.BeginArray(true);
  for (const CommGroup& g : s.groups) {
    w.BeginObject();
    w.KeyUint("comm_id", g.comm_id);
    w.KeyString("role", GroupRoleName(g.role));
    w.KeyUint("size", g.size);
    w.Key("ranks");
    w.BeginArray();
    for (int32_t r : g.ranks) w.Int(r);
    w.EndArray();
    w.KeyUint("operations", g.operations);
    w.KeyUint("bytes", g.bytes);
    w.KeyString("evidence", g.evidence);
    w.EndObject();
  }
  w.EndArray();
  auto segments = [&w](const char* key, const std::vector<Segment>& list) {
    w.Key(key);
    w.BeginArray(true);
    for (const Segment& x : list) {
      w.BeginObject();
      w.KeyUint("iteration", x.iteration);
      w.KeyString("phase", PhaseName(x.phase));
      w.KeyUint("micro_batch", x.micro_batch);
      if (x.layer != kNoLayer) w.KeyUint("layer", x.layer);
      w.KeyInt("begin_ns", x.begin_ns);
      w.KeyInt("end_ns", x.end_ns);
      w.KeyUint("nodes", x.nodes.size());
      w.EndObject();
    }
    w.EndArray();
  };
  w.Key("ranks");
  w.BeginArray(true);
  for (const RankStructure& r : s.ranks) {
    w.BeginObject(true);
    w.KeyInt("rank", r.rank);
    w.KeyInt("dp_rank", r.dp_rank);
    w.KeyInt("tp_rank", r.tp_rank);
    w.KeyInt("pp_rank", r.pp_rank);
    w.KeyInt("cp_rank", r.cp_rank);
    w.KeyInt("ep_rank", r.ep_rank);
    segments("iterations", r.iterations);
    segments("phases", r.phases);
    segments("layers", r.layers);
    w.EndObject();
  }
  w.EndArray();
  // Nodes per class and phase, a summary of NodeInfo (the per-node list is the library's).
  w.KeyUint("nodes", s.nodes.size());
  w.Key("unknowns");
  w.BeginArray(true);
  for (const std::string& u : s.unknowns) w.String(u);
  w.EndArray();
  w.Key("notes");
  w.BeginArray(true);
  for (const std::string& n : s.notes) w.String(n);
  for (const std::string& n : report.warnings) w.String(n);
  w.EndArray();
  w.EndObject();
  w.Raw("\n");
  return w.Finish();
}

}  // namespace lumos::modeler::structure
