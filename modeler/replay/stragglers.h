// Design: the replay report's stragglers: which rank the others waited for at collectives,
// measured and replayed side by side, from the graph's collective groups alone (replay drops
// the raw events after each rank's part of the graph is built).
//   collectives  every complete CollectiveGroup with >= 2 members (sends/receives included),
//                labelled by its op (a send and its receive: "Send/Recv"). A member's arrival is
//                its GPU op's start: measured, the node's start on the job's aligned timeline;
//                replayed, the simulated start (a group with a member that never ran is left out of
//                the replayed side).
//   skew         last arrival - first arrival.
//   last rank    the member with the latest arrival, when every other member arrived more
//                than `tie_ns` (1 µs) before it; otherwise the group is *tied*: no last rank,
//                nobody is charged, and it counts neither for nor against anyone in the counts
//                below (its skew still counts in the distribution).
//   waited for   for a group with a last rank L: sum over the other members j of
//                (arrival(L) - arrival(j)), charged to L. Per rank: the sum over the groups it
//                was last in; per iteration: each group goes to the iteration of L's rank
//                whose window ([start, end), measured or replayed) holds arrival(L), iterations
//                counted by their ordinal on the rank (the k-th of every rank is iteration k); a
//                group in no window counts in the total only. Mean and median per iteration are
//                over all the rank's iterations (0 where it was never last).
//   most waited  iteration k's most-waited-for rank: the one with the largest waited-for sum
//                in its k-th iteration, if it is the only one with that sum and it is > 0.
//   confidence   count-based, so one huge delay does not make a straggler: for rank r, n = the
//                untied groups it took part in, k = those it was last in, expected = sum over
//                them of 1/members. p_value = P(X >= k) for X ~ Binomial(n, expected / n) (its
//                variance is at least that of the exact Poisson-binomial count, so the tail is
//                conservative), times the number of ranks (Bonferroni, capped at 1).
//                wilson_low = the Wilson score 95% lower bound on k / n. A rank is *the
//                straggler* when p_value < 0.01 and wilson_low > expected / n; of several, the
//                smallest p_value (then the most groups last, then the lowest rank), and the
//                report says how many qualify (copies of one rank in a synthetic job tie).
//   by op        per op and for all: count, tied, skew p50 / p90 / max (nearest rank:
//                the ceil(q n)-th smallest) and the waited-for sum; the top groups by skew
//                (ties by group index).
// Text: one screen for any rank count (per op table, the verdict, the top 5 ranks by
// confidence, the top 5 groups by skew, each side by side); JSON: everything, every rank.
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler {

namespace io {
class JsonWriter;
}
struct ReplayReport;

struct StragglerOptions {
  int64_t tie_ns = 1000;   // Arrivals this close to the last one tie with it.
  double alpha = 0.01;     // The Bonferroni-adjusted p-value a straggler must be under.
  size_t top_groups = 20;  // Groups by skew kept (the text shows 5).
};

// One collective group's arrivals (measured or replayed).
struct GroupSkew {
  uint32_t group = 0;  // Index into ExecutionGraph::collectives.
  uint32_t members = 0;
  int64_t first_arrival_ns = 0, last_arrival_ns = 0;
  int64_t skew_ns = 0;     // last - first.
  int32_t last_rank = -1;  // Global rank; -1: tied.
  int64_t waited_ns = 0;   // Charged to last_rank (0 when tied).
};

// The skew of every group with >= 2 members that is complete and (with a replay) ran, in group
// order. Arrivals: `sim`'s starts, or with none the measured Node::start_ns.
std::vector<GroupSkew> GroupSkews(const ExecutionGraph& graph, const SimResult* sim,
                                  int64_t tie_ns);

struct OpSkew {
  const char* op = "";  // "AllReduce", "Send/Recv", ..., "(op not recorded)"; "all": the sum.
  uint64_t count = 0, tied = 0;
  int64_t p50_ns = 0, p90_ns = 0, max_ns = 0;
  int64_t waited_ns = 0;
};

struct RankStraggling {
  int32_t rank = 0;
  uint64_t groups = 0;       // n: untied groups it took part in.
  uint64_t last = 0;         // k: those it was last in.
  double expected_last = 0;  // Sum of 1 / members over the n groups.
  double p_value = 1;        // Bonferroni-adjusted binomial tail (may underflow to 0).
  double log10_p_value = 0;  // Its log10 (never underflows; 0 at p = 1).
  double wilson_low = 0;     // 95% lower bound on last / groups.
  int64_t waited_for_ns = 0;
  std::vector<int64_t> waited_per_iteration_ns;  // By the rank's iteration ordinal.
  double mean_per_iteration_ns = 0;
  int64_t median_per_iteration_ns = 0;  // The lower middle of an even count.
  uint64_t iterations_most_waited = 0;
};

struct StragglerSide {
  std::vector<OpSkew> by_op;          // Ops in enum order, then "all" last.
  std::vector<GroupSkew> top;         // Largest skew first.
  std::vector<RankStraggling> ranks;  // In rank order: every rank of the graph.
  uint64_t iterations = 0;            // Iteration ordinals (the most any rank has).
  int32_t straggler = -1;             // The confident straggler, or -1.
  uint64_t confident_ranks = 0;       // Ranks that meet the straggler test (the first is it).
  // Ranks by confidence: p_value, then last (more first), then rank; indexes into `ranks`.
  std::vector<uint32_t> order;
};

struct Stragglers {
  bool computed = false;
  int64_t tie_ns = 0;
  double alpha = 0;
  StragglerSide measured, replayed;
};

// `iterations`: AnalyzeIterations' (their replayed windows with `sim`, else the measured ones).
StragglerSide AnalyzeStragglerSide(const ExecutionGraph& graph, const SimResult* sim,
                                   const std::vector<IterationReport>& iterations,
                                   const StragglerOptions& options = {});
Stragglers AnalyzeStragglers(const ExecutionGraph& graph, const SimResult& sim,
                             const std::vector<IterationReport>& iterations,
                             const StragglerOptions& options = {});

// The natural log of the binomial upper tail P(X >= k), X ~ Binomial(n, p): summed from the
// k-th term outwards in log space (k above the mean), else 1 - the lower tail.
double LogBinomialTail(uint64_t n, uint64_t k, double p);
// The Wilson score interval's lower bound for k successes in n at z (1.96: 95%).
double WilsonLower(uint64_t n, uint64_t k, double z = 1.96);

// The text report's section and the JSON report's "stragglers" member.
void WriteStragglersText(const ReplayReport& report, std::FILE* out);
void WriteStragglersJson(const ReplayReport& report, io::JsonWriter* w);

}  // namespace lumos::modeler
