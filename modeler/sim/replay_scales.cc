#include "modeler/sim/replay_scales.h"

#include <cmath>
#include <cstdlib>

namespace lumos::modeler {
namespace {

int64_t Scale(int64_t ns, double factor) {
  return static_cast<int64_t>(std::llround(static_cast<double>(ns) * factor));
}

}  // namespace

StatusOr<ReplayScale> ParseScale(const std::string& spec) {
  const size_t equals = spec.rfind('=');
  if (equals == std::string::npos) {
    return Status::Error("--scale '" + spec + "': expected kernel:REGEX=F, comm=F or host=F");
  }
  const std::string target = spec.substr(0, equals);
  const std::string number = spec.substr(equals + 1);
  char* end = nullptr;
  const double factor = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(factor) ||
      factor < 0) {
    return Status::Error("--scale '" + spec + "': the factor '" + number +
                         "' is not a finite number >= 0");
  }
  ReplayScale w;
  w.factor = factor;
  if (target == "comm") {
    w.kind = ReplayScale::Kind::kComm;
  } else if (target == "host") {
    w.kind = ReplayScale::Kind::kHost;
  } else if (target.rfind("kernel:", 0) == 0) {
    w.kind = ReplayScale::Kind::kKernel;
    w.pattern = target.substr(7);
    StatusOr<NamePattern> regex = NamePattern::Compile(w.pattern);
    if (!regex.ok()) {
      return Status::Error("--scale '" + spec + "': " + regex.status().message());
    }
    w.regex = std::move(regex).value();
  } else {
    return Status::Error("--scale '" + spec + "': unknown target '" + target +
                         "' (kernel:REGEX, comm or host)");
  }
  return w;
}

Scenario ApplyReplayScales(const ExecutionGraph& g, Scenario s,
                           const std::vector<ReplayScale>& scales, bool drop_gaps) {
  for (const ReplayScale& w : scales) {
    switch (w.kind) {
      case ReplayScale::Kind::kKernel:
        for (size_t n = 0; n < g.nodes.size(); ++n) {
          const Node& node = g.nodes[n];
          if (node.kind == NodeKind::kKernel && node.work == WorkClass::kCompute &&
              w.regex.Search(node.name)) {
            s.duration_ns[n] = Scale(s.duration_ns[n], w.factor);
          }
        }
        break;
      case ReplayScale::Kind::kComm:
        for (int64_t& t : s.transfer_ns) t = Scale(t, w.factor);
        for (size_t n = 0; n < g.nodes.size(); ++n) {
          const Node& node = g.nodes[n];
          if (node.work == WorkClass::kCommunication && node.collective == kNoNode) {
            s.duration_ns[n] = Scale(s.duration_ns[n], w.factor);
          }
        }
        break;
      case ReplayScale::Kind::kHost:
        for (size_t n = 0; n < g.nodes.size(); ++n) {
          if (!g.nodes[n].gpu()) s.duration_ns[n] = Scale(s.duration_ns[n], w.factor);
        }
        for (size_t e = 0; e < g.edges.size(); ++e) {
          if (g.edges[e].host_gap()) s.delay_ns[e] = Scale(s.delay_ns[e], w.factor);
        }
        for (int64_t& t : s.sync_min_ns) t = Scale(t, w.factor);
        break;
    }
  }
  if (drop_gaps) {
    for (size_t e = 0; e < g.edges.size(); ++e) {
      if (g.edges[e].host_gap()) s.delay_ns[e] = 0;
    }
  }
  return s;
}

}  // namespace lumos::modeler
