// MergeSetup: --base over the trace (setup.cc's header comment has the rules).
#include <string>

#include "modeler/structure/structure_internal.h"

namespace lumos::modeler::structure::internal {
namespace {

void Set(Value* v, int64_t value, Origin origin, std::string how) {
  v->value = value;
  v->origin = origin;
  v->how = std::move(how);
}

// A given value over a known one: equal keeps the trace's (and says it agrees), else an error.
Status Apply(std::string_view key, const Value& given, Value* v) {
  if (!given.known()) return Status::Ok();
  if (v->origin == Origin::kTrace) {
    if (v->value != given.value) {
      return Status::Error("--base " + std::string(key) + "=" + std::to_string(given.value) +
                           " contradicts the trace: " + std::string(key) + "=" +
                           std::to_string(v->value) + " (" + v->how + ")");
    }
    v->how += "; agrees with --base";
    return Status::Ok();
  }
  Set(v, given.value, Origin::kGiven, "--base");
  return Status::Ok();
}

void Scale(Value* v, const Value& by, const char* name) {
  if (v->origin != Origin::kTrace || by.value <= 1) return;
  v->value *= by.value;
  v->how += " x " + std::string(name) + " (" + std::to_string(by.value) + ")";
  if (by.origin == Origin::kGiven) v->origin = Origin::kDerived;
}

}  // namespace

Status MergeSetup(const Setup& given, Setup* s, std::vector<std::string>* unknowns,
                  std::vector<std::string>* notes) {
  for (std::string_view key : {"world", "dp", "tp", "pp", "cp", "ep"}) {
    LUMOS_RETURN_IF_ERROR(Apply(key, *SetupField(given, key), SetupField(s, key)));
  }
  if (!s->tp.known()) Set(&s->tp, 1, Origin::kDerived, "no tensor-parallel communicator");
  if (!s->pp.known()) Set(&s->pp, 1, Origin::kDerived, "no pipeline (send/recv) communicator");
  if (!s->cp.known()) Set(&s->cp, 1, Origin::kDerived, "no context-parallel communicator");
  if (!s->ep.known()) Set(&s->ep, 1, Origin::kDerived, "no expert (all-to-all) communicator");
  const int64_t model = s->tp.value * s->pp.value * s->cp.value;
  if (!s->dp.known() && s->world.known() && model > 0 && s->world.value % model == 0) {
    Set(&s->dp, s->world.value / model, Origin::kDerived, "world / (tp x pp x cp)");
  }
  if (!s->world.known() && s->dp.known()) {
    Set(&s->world, s->dp.value * model, Origin::kDerived, "dp x tp x pp x cp");
  }
  if (s->world.known() && s->dp.known() && s->dp.value * model != s->world.value) {
    const std::string what = "dp x tp x pp x cp = " + std::to_string(s->dp.value * model) +
                             " but world = " + std::to_string(s->world.value);
    const bool any_given = s->world.origin == Origin::kGiven || s->dp.origin == Origin::kGiven ||
                           s->tp.origin == Origin::kGiven || s->pp.origin == Origin::kGiven ||
                           s->cp.origin == Origin::kGiven;
    if (any_given) return Status::Error("--base: " + what);
    notes->push_back(what + " (a communicator's role may be wrong, or ranks are missing)");
  }
  Scale(&s->layers, s->pp, "pp");
  Scale(&s->ffn, s->tp, "tp");
  Scale(&s->heads, s->tp, "tp");
  Scale(&s->vocab, s->tp, "tp");
  // seq and mbs from their product when one of them is given.
  const int64_t tokens = s->seq.known() ? 0 : s->seq.value;
  s->seq.value = s->seq.known() ? s->seq.value : 0;
  s->mbs.value = s->mbs.known() ? s->mbs.value : 0;
  for (std::string_view key :
       {"layers", "hidden", "ffn", "heads", "seq", "mbs", "micro_batches", "vocab"}) {
    LUMOS_RETURN_IF_ERROR(Apply(key, *SetupField(given, key), SetupField(s, key)));
  }
  if (tokens > 0) {
    auto derive = [tokens](const Value& from, Value* to, const char* from_name) -> Status {
      if (to->known() || !from.known()) return Status::Ok();
      if (from.value <= 0 || tokens % from.value != 0) {
        return Status::Error("--base " + std::string(from_name) + "=" + std::to_string(from.value) +
                             " does not divide the trace's tokens per micro-batch (" +
                             std::to_string(tokens) + ")");
      }
      Set(to, tokens / from.value, Origin::kDerived,
          "tokens per micro-batch (" + std::to_string(tokens) + ") / " + from_name);
      return Status::Ok();
    };
    LUMOS_RETURN_IF_ERROR(derive(s->seq, &s->mbs, "seq"));
    LUMOS_RETURN_IF_ERROR(derive(s->mbs, &s->seq, "mbs"));
    if (s->seq.known() && s->mbs.known() && s->seq.value * s->mbs.value != tokens) {
      return Status::Error("--base: seq x mbs = " + std::to_string(s->seq.value * s->mbs.value) +
                           " but the trace's tokens per micro-batch are " + std::to_string(tokens));
    }
  }
  for (std::string_view key : SetupKeys()) {
    Value* v = SetupField(s, key);
    if (v->known()) continue;
    if (v->how.empty()) v->how = "not in the trace";
    unknowns->push_back(std::string(key) + ": " + v->how + " (give it with --base " +
                        std::string(key) + "=N)");
  }
  return Status::Ok();
}

}  // namespace lumos::modeler::structure::internal
