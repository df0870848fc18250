// Design: the slow path of `lumos-model search` and `estimate --model` (issue 25): one
// training step of a layout built as an execution graph (modeler/graph) and run by the replay's
// simulator (modeler/sim), so the pipeline bubble, the waits for sends and what the data-parallel
// collectives leave exposed emerge from the dependencies instead of a formula.
// Representative ranks: one GPU per pipeline stage (tensor rank 0 of data-parallel replica 0;
// the other ranks of a stage are symmetric, so their collectives end when this one's do and
// cost their modelled transfer time). Per stage these GPU streams:
//   compute  the stage's schedule: Megatron-LM's 1F1B (vp 1: pp - s - 1 warm-up forwards, then
//            one forward and one backward in turn, then the cool-down backwards) or its
//            interleaved schedule (vp > 1: the virtual micro-batch k runs chunk (k mod pp vp) / pp
//            of micro-batch (k / pp vp) pp + k mod pp; (pp - s - 1) x 2 + (vp - 1) x pp warm-up
//            forwards); each pass of a chunk its layers' ops in order (pass_work.h: GEMMs,
//            attention, elementwise, TP collectives), FP8 delayed scaling's amax all-reduce
//            after them (LayoutWork::chunk_forward / chunk_backward), the embedding on virtual
//            stage 0, the LM head and loss on the last; then the optimizer once the gradients
//            are reduced;
//   sends and receives, one stream a direction (NCCL matches a peer's in order): after each
//            pass, as Megatron-LM's schedules call them, its output sent (LayoutWork::p2p_ns)
//            and the input of the next pass received (1F1B: the next in order; interleaved:
//            the next one the same way). A transfer starts once its pass has ended and the
//            receiver has posted the receive where its own compute stream stands (NCCL's
//            rendezvous). With p2p_overlap (interleaved only: Megatron's overlap_p2p_comm) a pass
//            waits for the last exchange of its direction; otherwise, and in the interleaved
//            cool-down, the next pass waits for the whole exchange, and a batched one also for
//            the device (batch_isend_irecv then torch.cuda.synchronize: the data-parallel
//            reductions launched so far). Interleaved without the overlap, a steady forward's
//            exchange waits for the backward after it (one four-way exchange);
//   dp       the gradients reduced in buckets of >= 40M parameters (Megatron's DDP buckets, one
//            buffer per model chunk) as each chunk's last micro-batch's backward frees them
//            (ZeRO 0: all-reduce; 1-3: reduce-scatter), then the optimizer; with ZeRO 1-2 the
//            updated weights gathered bucket by bucket at the step's start, each layer's first
//            forward waiting for its bucket (Megatron's overlapped parameter gather); with
//            ZeRO 3 every layer's weights gathered before each of its passes, at most two layers
//            ahead. Without dp_overlap (Megatron-LM before 2023) the buckets are reduced after
//            the stage's last backward and ZeRO 1-2's weights gathered after the optimizer.
//            With tied embeddings (LayoutWork::embedding_grad_ns) the first and the last stage
//            then all-reduce the word embedding's gradient together, each once its own
//            reduction is through, before their optimizers.
// Contention: a compute kernel that the schedule puts beside communication on its GPU is
// stretched by PlanSetup::overlap_slowdown for the share it overlaps, and the step simulated
// again from the stretched schedule until it settles (pass_work.h, kOverlapComputeSlowdown).
// No host threads: launches never late (a GPU-bound job). Sizes are bounded before anything is
// allocated (kMaxPipelineNodes: one clear error naming the count).
// Threading: pure functions; each call builds and simulates its own graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/plan/pass_work.h"

namespace lumos::modeler::plan {

// One pass of one model chunk (virtual stage) over one micro-batch.
struct PipelinePass {
  bool backward = false;
  int64_t chunk = 0;  // 0..vp-1: the virtual stage chunk x pp + the stage.
  int64_t micro = 0;
};

// Megatron-LM's order of passes on stage `stage` of `pp`, with `vp` chunks and `m` micro-batches
// (1F1B, or interleaved when vp > 1).
std::vector<PipelinePass> StageSchedule(int64_t pp, int64_t vp, int64_t m, int64_t stage);

// About 160 bytes a node with its edges: 4M nodes are well under a GB.
inline constexpr int64_t kMaxPipelineNodes = 4'000'000;

struct PipelineGraph {
  ExecutionGraph graph;
  std::vector<uint32_t> compute_stream;  // Per stage: its compute stream's processor.
  std::vector<uint32_t> optimizer_node;  // Per stage.
  std::vector<uint32_t> end_node;        // Per stage: its last node (the optimizer, or after it
                                         // the gathered weights without dp_overlap).
  std::vector<uint32_t> last_backward;   // Per stage: the last node of its last backward pass.
};

// The graph of one step; `work` from LayoutWorkOf(spec, layout, ...).
StatusOr<PipelineGraph> BuildPipelineGraph(const ModelSpec& spec, const Layout& layout,
                                           const LayoutWork& work, const GptCosts& costs);

struct SimulatedStep {
  double step_ns = 0;            // The last stage's optimizer end, from the step's start.
  int64_t stage = 0;             // The stage that ends last.
  double busy_ns = 0;            // Its compute stream's work before the optimizer.
  double idle_ns = 0;            // Its compute stream waiting before its last backward ends
                                 // (the bubble, sends, exposed weight gathers).
  double dp_exposed_ns = 0;      // From its last backward's end to the optimizer's start, less
                                 // embedding_grad_ns.
  double embedding_grad_ns = 0;  // Its tied embedding's gradient all-reduce (an end stage's).
  // Its data-parallel collectives (gradient reductions, weight gathers) and its sends, all of
  // their transfer time: what is not exposed ran beside compute, and slowed it (overlap_cost_ns).
  double dp_comm_ns = 0;
  double sends_ns = 0;
  // What the communication beside its compute stream cost that stream's kernels
  // (PlanSetup::overlap_slowdown), within busy_ns.
  double overlap_cost_ns = 0;
  double optimizer_ns = 0;
  double host_ns = 0;  // PlanSetup::host_step_ns, after the last stage's end, in step_ns.
  size_t nodes = 0;
};

StatusOr<SimulatedStep> SimulateStep(const ModelSpec& spec, const Layout& layout,
                                     const GptCosts& costs, const PlanSetup& setup);

// A step SimulateStep cannot beat, from the same ops without building a graph: the busiest
// stage's passes one after another, the first micro-batch's forward reaching it and the last
// one's backward leaving it through the stages before it, then stage 0's last gradient bucket
// and the tied embedding's gradient all-reduce, and its optimizer. Every wait, send, gather and
// stretch of the simulation only adds to it, so a layout whose bound is above a simulated step
// cannot be faster (search.h prunes with it).
StatusOr<double> SimulatedStepLowerBound(const ModelSpec& spec, const Layout& layout,
                                         const LayoutWork& work, const GptCosts& costs);

// What the slow path assumes beyond the ops' costs, one line each (for reports).
const std::vector<std::string>& SimulationAssumptions();

// The nodes BuildPipelineGraph would make, computed without building (the bound's check).
int64_t PipelineNodeCount(const ModelSpec& spec, const Layout& layout, const LayoutWork& work);

}  // namespace lumos::modeler::plan
