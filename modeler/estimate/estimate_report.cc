#include "modeler/estimate/estimate_report.h"

#include <algorithm>
#include <cinttypes>
#include <numeric>
#include <set>

#include "modeler/io/json_writer.h"

namespace lumos::modeler::estimate {
namespace {

std::string Ms(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

std::string Change(double before, double after) {
  if (before <= 0 || after < 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", 100.0 * (after - before) / before);
  return buf;
}

std::string Gb(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(bytes) / 1e9);
  return buf;
}

std::string Number(double v, const char* format) {
  if (v < 0) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void Row(std::FILE* out, const std::string& what, const std::string& before,
         const std::string& after, const std::string& change) {
  std::fprintf(out, "  %-26s %16s %16s %10s\n", what.c_str(), before.c_str(), after.c_str(),
               change.c_str());
}

// Rows of two name -> ns maps, by the estimate's time, largest first.
void MapRows(std::FILE* out, const std::map<std::string, int64_t>& before,
             const std::map<std::string, int64_t>& after) {
  std::set<std::string> names;
  for (const auto& [name, ns] : before) names.insert(name);
  for (const auto& [name, ns] : after) names.insert(name);
  std::vector<std::string> order(names.begin(), names.end());
  auto get = [](const std::map<std::string, int64_t>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? int64_t{0} : it->second;
  };
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return get(after, a) > get(after, b);
  });
  for (const std::string& name : order) {
    const int64_t b = get(before, name), a = get(after, name);
    Row(out, name, Ms(b), Ms(a), Change(static_cast<double>(b), static_cast<double>(a)));
  }
}

std::string ValueText(const structure::Value& v) {
  return v.known() ? std::to_string(v.value) : "?";
}

void WriteSetup(const ReportHeader& h, const EstimateResult& r, std::FILE* out) {
  std::fprintf(out, "setup                      %16s %16s   (measured from)\n", "measured",
               "estimate");
  const structure::JobStructure& s = *h.structure;
  const whatif::SetupValues& a = r.plan.after;
  const int64_t after[] = {a.layers, a.hidden, a.ffn, a.heads, a.seq, a.mbs, a.micro_batches,
                           a.vocab,  a.world,  a.dp,  a.tp,    a.pp,  a.cp,  a.ep};
  size_t i = 0;
  for (std::string_view key : structure::SetupKeys()) {
    const structure::Value* v = structure::SetupField(s.setup, key);
    const std::string before = ValueText(*v);
    const std::string now = after[i] > 0 ? std::to_string(after[i]) : "?";
    std::fprintf(out, "  %-24s %16s %16s   %s%s%s\n", std::string(key).c_str(), before.c_str(),
                 now.c_str(), structure::OriginName(v->origin), v->how.empty() ? "" : ": ",
                 v->how.c_str());
    ++i;
  }
  std::fprintf(out, "  %-24s %16s %16s\n", "gpu", h.source_gpu.c_str(), r.plan.gpu->name.c_str());
  std::fprintf(out, "  %-24s %16s %16s\n", "network", h.source_net.c_str(),
               r.plan.net.name.c_str());
}

int64_t Sum(const std::array<int64_t, whatif::kBasisCount>& a) {
  return std::accumulate(a.begin(), a.end(), int64_t{0});
}

std::string SweepLabel(const EstimateResult& r) {
  return r.settings_text.empty() ? "(as measured)" : r.settings_text;
}

}  // namespace

void WriteEstimateText(const ReportHeader& h, const EstimateResult& r, std::FILE* out) {
  std::fprintf(out, "lumos-model estimate: job %s, %zu rank(s) on %s; estimating %s\n",
               h.job_id.c_str(), h.ranks, h.source_gpu.c_str(), SweepLabel(r).c_str());
  for (const std::string& w : h.warnings) std::fprintf(out, "warning: %s\n", w.c_str());
  std::fprintf(out, "structure: iterations by %s; layers: %s\n",
               h.structure->iteration_method.c_str(), h.structure->layer_method.c_str());
  std::fprintf(out, "iterations: %s\n", h.iteration_choice.c_str());
  WriteSetup(h, r, out);
  std::fprintf(out, "\n");
  Row(out, "", "base (replayed)", "estimate", "change");
  const Summary& b = r.base;
  const Summary& e = r.estimate;
  Row(out, "iteration time", Ms(b.iteration_ns), Ms(e.iteration_ns),
      Change(static_cast<double>(b.iteration_ns), static_cast<double>(e.iteration_ns)));
  Row(out, "tokens/s", Number(b.tokens_per_s, "%.0f"), Number(e.tokens_per_s, "%.0f"),
      Change(b.tokens_per_s, e.tokens_per_s));
  Row(out, "MFU", Number(b.mfu * 100, "%.1f %%"), Number(e.mfu * 100, "%.1f %%"), "");
  std::fprintf(out, "breakdown (slowest rank: base %u, estimate %u)\n", b.slowest_rank,
               e.slowest_rank);
  Row(out, "exposed compute", Ms(b.breakdown.exposed_compute_ns),
      Ms(e.breakdown.exposed_compute_ns), "");
  Row(out, "overlapped", Ms(b.breakdown.overlapped_ns), Ms(e.breakdown.overlapped_ns), "");
  Row(out, "exposed communication", Ms(b.breakdown.exposed_comm_ns),
      Ms(e.breakdown.exposed_comm_ns), "");
  Row(out, "other", Ms(b.breakdown.other_ns), Ms(e.breakdown.other_ns), "");
  std::fprintf(out, "critical path (per iteration, slowest rank)\n");
  std::map<std::string, int64_t> cb, ce;
  for (const CriticalItem& c : b.critical_by_class) cb[c.what] = c.ns;
  for (const CriticalItem& c : e.critical_by_class) ce[c.what] = c.ns;
  MapRows(out, cb, ce);
  std::fprintf(out, "GPU time per iteration and rank, by kernel class\n");
  MapRows(out, b.kernel_classes, e.kernel_classes);
  if (!b.collectives.empty() || !e.collectives.empty()) {
    std::fprintf(out, "collectives (GPU time per iteration and rank, waiting included)\n");
    MapRows(out, b.collectives, e.collectives);
  }
  const int64_t total = Sum(e.basis_ns);
  std::fprintf(out, "the estimate's GPU time rests on:");
  for (int k = 0; k < whatif::kBasisCount; ++k) {
    std::fprintf(
        out, "%s %s %.1f %%", k == 0 ? "" : ",", whatif::BasisName(static_cast<whatif::Basis>(k)),
        total > 0 ? 100.0 * static_cast<double>(e.basis_ns[k]) / static_cast<double>(total) : 0.0);
  }
  std::fprintf(out, "\n");
  std::string reasons;
  for (int bit = 0; bit < whatif::kChangeReasonCount; ++bit) {
    if (r.recosted_by_reason[bit] == 0) continue;
    reasons += (reasons.empty() ? " (" : ", ") + std::string(whatif::ChangeReasonName(bit)) + " " +
               std::to_string(r.recosted_by_reason[bit]);
  }
  if (!reasons.empty()) reasons += ")";
  std::fprintf(out,
               "changed: %" PRIu64 " GPU op(s) re-costed%s; %" PRIu64
               " node(s) copied by the layer / micro-batch rewrite (%" PRIu64 " -> %" PRIu64
               " nodes)\n",
               r.recosted, reasons.c_str(), r.copied_nodes, r.nodes_before, r.nodes_after);
  if (r.memory) {
    const models::StageMemory& m = r.memory->Largest();
    std::fprintf(out,
                 "memory per GPU (stage %" PRId64
                 "): parameters %s, gradients %s, optimizer %s, "
                 "activations %s, total %s",
                 m.stage, Gb(m.parameter_bytes).c_str(), Gb(m.gradient_bytes).c_str(),
                 Gb(m.optimizer_bytes).c_str(),
                 Gb(m.activation_bytes + m.recompute_working_bytes + m.embedding_activation_bytes +
                    m.output_activation_bytes)
                     .c_str(),
                 Gb(m.total_bytes).c_str());
    if (r.memory->capacity_bytes) {
      std::fprintf(
          out, " of %s on %s: %s", Gb(*r.memory->capacity_bytes).c_str(), r.plan.gpu->name.c_str(),
          r.memory->fits ? "fits"
                         : ("DOES NOT FIT, short by " + Gb(r.memory->shortfall_bytes)).c_str());
    }
    std::fprintf(out, "\n");
  } else {
    std::fprintf(out, "memory per GPU: not estimated (the model setup is not fully known)\n");
  }
  std::vector<std::string> assumed = r.plan.assumptions;
  assumed.insert(assumed.end(), r.cost.notes.begin(), r.cost.notes.end());
  if (r.memory) {
    assumed.insert(assumed.end(), r.memory->assumptions.begin(), r.memory->assumptions.end());
  }
  if (r.collectives_left_out > 0) {
    assumed.push_back(std::to_string(r.collectives_left_out) +
                      " collective(s) cut by a repeated part kept once");
  }
  if (!assumed.empty()) {
    std::fprintf(out, "assumed:\n");
    for (const std::string& a : assumed) std::fprintf(out, "  - %s\n", a.c_str());
  }
  if (r.not_run > 0) {
    std::fprintf(out, "warning: %" PRIu64 " node(s) of the rewritten graph never ran\n", r.not_run);
  }
}

namespace {

void JsonSummary(io::JsonWriter& w, const Summary& s) {
  w.BeginObject();
  w.KeyInt("iteration_ns", s.iteration_ns);
  w.Key("tokens_per_s");
  w.Fixed(s.tokens_per_s, 1);
  w.Key("mfu");
  w.Fixed(s.mfu, 4);
  w.KeyUint("slowest_rank", s.slowest_rank);
  w.Key("breakdown");
  w.BeginObject();
  w.KeyInt("exposed_compute_ns", s.breakdown.exposed_compute_ns);
  w.KeyInt("overlapped_ns", s.breakdown.overlapped_ns);
  w.KeyInt("exposed_comm_ns", s.breakdown.exposed_comm_ns);
  w.KeyInt("other_ns", s.breakdown.other_ns);
  w.EndObject();
  w.Key("critical_path");
  w.BeginArray();
  for (const CriticalItem& c : s.critical_by_class) {
    w.BeginObject();
    w.KeyString("what", c.what);
    w.KeyInt("ns", c.ns);
    w.EndObject();
  }
  w.EndArray();
  for (const auto& [key, map] : {std::pair{"kernel_classes_ns", &s.kernel_classes},
                                 std::pair{"collectives_ns", &s.collectives}}) {
    w.Key(key);
    w.BeginObject();
    for (const auto& [name, ns] : *map) w.KeyInt(name, ns);
    w.EndObject();
  }
  w.Key("basis_ns");
  w.BeginObject();
  for (int k = 0; k < whatif::kBasisCount; ++k) {
    w.KeyInt(whatif::BasisName(static_cast<whatif::Basis>(k)), s.basis_ns[k]);
  }
  w.EndObject();
  w.EndObject();
}

void JsonResult(io::JsonWriter& w, const EstimateResult& r) {
  w.BeginObject(true);
  w.KeyString("settings", r.settings_text);
  w.KeyString("gpu", r.plan.gpu->name);
  w.KeyString("network", r.plan.net.name);
  w.Key("setup");
  w.BeginObject();
  const whatif::SetupValues& a = r.plan.after;
  const int64_t after[] = {a.layers, a.hidden, a.ffn, a.heads, a.seq, a.mbs, a.micro_batches,
                           a.vocab,  a.world,  a.dp,  a.tp,    a.pp,  a.cp,  a.ep};
  size_t i = 0;
  for (std::string_view key : structure::SetupKeys()) w.KeyInt(key, after[i++]);
  w.EndObject();
  w.Key("base");
  JsonSummary(w, r.base);
  w.Key("estimate");
  JsonSummary(w, r.estimate);
  if (r.memory) {
    const models::StageMemory& m = r.memory->Largest();
    w.Key("memory");
    w.BeginObject();
    w.KeyInt("stage", m.stage);
    w.KeyInt("parameter_bytes", m.parameter_bytes);
    w.KeyInt("gradient_bytes", m.gradient_bytes);
    w.KeyInt("optimizer_bytes", m.optimizer_bytes);
    w.KeyInt("activation_bytes", m.activation_bytes + m.recompute_working_bytes +
                                     m.embedding_activation_bytes + m.output_activation_bytes);
    w.KeyInt("total_bytes", m.total_bytes);
    if (r.memory->capacity_bytes) w.KeyInt("capacity_bytes", *r.memory->capacity_bytes);
    w.KeyBool("fits", r.memory->fits);
    w.KeyInt("shortfall_bytes", r.memory->shortfall_bytes);
    w.EndObject();
  }
  w.Key("assumed");
  w.BeginArray();
  for (const std::string& s : r.plan.assumptions) w.String(s);
  for (const std::string& s : r.cost.notes) w.String(s);
  if (r.memory) {
    for (const std::string& s : r.memory->assumptions) w.String(s);
  }
  w.EndArray();
  w.Key("recosted");
  w.BeginObject();
  w.KeyUint("nodes", r.recosted);
  for (int bit = 0; bit < whatif::kChangeReasonCount; ++bit) {
    w.KeyUint(whatif::ChangeReasonName(bit), r.recosted_by_reason[bit]);
  }
  w.EndObject();
  w.KeyUint("copied_nodes", r.copied_nodes);
  w.KeyUint("collectives_left_out", r.collectives_left_out);
  w.KeyUint("nodes_before", r.nodes_before);
  w.KeyUint("nodes_after", r.nodes_after);
  w.KeyUint("not_run", r.not_run);
  w.Key("iterations");
  w.BeginArray(true);
  for (const IterationReport& it : r.iterations) {
    w.BeginObject();
    w.KeyInt("rank", it.rank);
    w.KeyString("name", it.name);
    w.KeyInt("replayed_ns", it.replayed_ns());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void JsonHeader(io::JsonWriter& w, const ReportHeader& h) {
  w.KeyString("job", h.job_id);
  w.KeyUint("ranks", h.ranks);
  w.KeyString("source_gpu", h.source_gpu);
  w.KeyString("source_network", h.source_net);
  w.KeyString("iteration_method", h.structure->iteration_method);
  w.KeyString("iteration_choice", h.iteration_choice);
  w.KeyString("layer_method", h.structure->layer_method);
  w.Key("measured_setup");
  w.BeginObject(true);
  for (std::string_view key : structure::SetupKeys()) {
    const structure::Value* v = structure::SetupField(h.structure->setup, key);
    w.Key(key);
    w.BeginObject();
    if (v->known()) w.KeyInt("value", v->value);
    w.KeyString("origin", structure::OriginName(v->origin));
    w.KeyString("how", v->how);
    w.EndObject();
  }
  w.EndObject();
  w.Key("warnings");
  w.BeginArray();
  for (const std::string& s : h.warnings) w.String(s);
  w.EndArray();
}

// The report's JSON goes straight to `out`.
io::JsonSink FileSink(std::FILE* out) {
  return [out](std::string_view chunk) {
    return std::fwrite(chunk.data(), 1, chunk.size(), out) == chunk.size()
               ? Status::Ok()
               : Status::Error("writing the report failed");
  };
}

Status Finish(io::JsonWriter& w, std::FILE* out) {
  LUMOS_RETURN_IF_ERROR(w.Finish());
  std::fputc('\n', out);
  return std::ferror(out) ? Status::Error("writing the report failed") : Status::Ok();
}

std::vector<const EstimateResult*> Sorted(const std::vector<EstimateResult>& results) {
  std::vector<const EstimateResult*> order;
  order.reserve(results.size());
  for (const EstimateResult& r : results) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const EstimateResult* a, const EstimateResult* b) {
                     return a->estimate.iteration_ns < b->estimate.iteration_ns;
                   });
  return order;
}

}  // namespace

Status WriteEstimateJson(const ReportHeader& h, const EstimateResult& r, std::FILE* out) {
  io::JsonWriter w(FileSink(out));
  w.BeginObject(true);
  JsonHeader(w, h);
  w.Key("estimate");
  JsonResult(w, r);
  w.EndObject();
  return Finish(w, out);
}

void WriteSweepText(const ReportHeader& h, const std::vector<EstimateResult>& results,
                    std::FILE* out) {
  std::fprintf(out,
               "lumos-model estimate: job %s, %zu rank(s) on %s; %zu configuration(s), "
               "fastest first (base: the replayed measurement)\n",
               h.job_id.c_str(), h.ranks, h.source_gpu.c_str(), results.size());
  for (const std::string& w : h.warnings) std::fprintf(out, "warning: %s\n", w.c_str());
  if (!results.empty()) {
    const Summary& b = results.front().base;
    std::fprintf(out, "base: iteration %s, tokens/s %s, MFU %s\n", Ms(b.iteration_ns).c_str(),
                 Number(b.tokens_per_s, "%.0f").c_str(), Number(b.mfu * 100, "%.1f %%").c_str());
  }
  std::fprintf(out, "%14s %9s %12s %7s %10s %-12s %s\n", "iteration", "change", "tokens/s", "MFU",
               "memory", "fits", "settings");
  for (const EstimateResult* r : Sorted(results)) {
    const Summary& e = r->estimate;
    const std::string memory = r->memory ? Gb(r->memory->total_bytes()) : "-";
    const std::string fits = !r->memory        ? "-"
                             : r->memory->fits ? "yes"
                                               : "no (-" + Gb(r->memory->shortfall_bytes) + ")";
    std::fprintf(
        out, "%14s %9s %12s %7s %10s %-12s %s\n", Ms(e.iteration_ns).c_str(),
        Change(static_cast<double>(r->base.iteration_ns), static_cast<double>(e.iteration_ns))
            .c_str(),
        Number(e.tokens_per_s, "%.0f").c_str(), Number(e.mfu * 100, "%.1f%%").c_str(),
        memory.c_str(), fits.c_str(), SweepLabel(*r).c_str());
  }
}

Status WriteSweepJson(const ReportHeader& h, const std::vector<EstimateResult>& results,
                      std::FILE* out) {
  io::JsonWriter w(FileSink(out));
  w.BeginObject(true);
  JsonHeader(w, h);
  w.Key("configurations");
  w.BeginArray(true);
  for (const EstimateResult* r : Sorted(results)) JsonResult(w, *r);
  w.EndArray();
  w.EndObject();
  return Finish(w, out);
}

}  // namespace lumos::modeler::estimate
