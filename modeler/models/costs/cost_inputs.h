// Design: the inputs of `lumos-model costs fit`: measured CSV tables and Lumos traces.
//   Expansion: a file is a trace when its name ends in .pb.zst, else a table; a directory gives
//     every *.csv inside (recursively, by name) and every trace (modeler/trace/trace_set.h, as
//     the other commands read a trace set); a pattern is expanded like the trace commands'
//     (glob(3)), each match then taken by its name. Tables are all or nothing (a missing or
//     unreadable one is an error); traces follow the commands' contract: an argument that names
//     no trace, a file that is not one, a damaged tail or a missing trailer is one line in
//     `problems` (exit 1) and what could be read is used.
//   Traces: the files are grouped into jobs by their headers' job id; each job is loaded and
//     its collectives become calibration points for the collective model as the replay sees
//     them (collective_calibration.h, CalibrationFromJob: op, bytes, dtype, algorithm,
//     protocol, channels, the transfer without the wait for peers, nodes from the host names).
//     The GPU is the one the headers' CUDA device names map to in the specs; a job naming
//     devices the specs do not know, or GPUs of two kinds, is an error once it has points with
//     a size (a job whose collectives carry no sizes, as PyTorch profiler imports, calibrates
//     nothing and only says so).
//   Traced GEMMs (schema 2.2: RankTrace::GemmOf, the agent's cublas channel or an imported
//     trace's "Input Dims"): every kernel linked to a GEMM call (api not an attention one)
//     counts. One GEMM is one call as the program made it: an agent's GemmCall, or an
//     imported operator's calls (one per launch, sharing thread, span and External id), so a
//     GEMM launched as several kernels (split-K and its splitKreduce kernel) takes the sum of
//     its kernels' durations. Its dtype is its A operand's: bf16, fp16, fp8 (either kind);
//     fp32 is tf32 when the call says so (math mode TF32_TENSOR_OP, compute type
//     FLOAT32_FAST_TF32) or one of its kernels is a TF32 tensor-core kernel by name (cuBLAS /
//     CUTLASS "s1688gemm", "tf32": imported traces do not record the math mode), else fp32.
//     Each distinct shape (m, n, k) of a dtype is one measured point of the GEMM calibration of
//     the job's GPU and that dtype: the median of its GEMMs' durations (the mean of the two
//     middle ones for an even count). Left out, and counted: batched GEMMs (batch > 1: the
//     model's points are batch 1), other dtypes (int8, fp64, complex), and dtypes the GPU has
//     no peak for in the specs.
//   Traced kernels other than GEMMs (kernel_trace.h, ClassifyRank: every kernel, copy and memset
//     of a rank with its KernelKey and bytes): the ones of known work become samples of the
//     non-GEMM kernel model's calibration of that key on the job's GPU (kernel_model.h,
//     KernelCalibration::Fit, dtype fp32 as the validation fits them): copies and memsets by
//     their bytes. Kernels carry no work in Lumos traces yet (no op shapes: kernel_kineto.h), so
//     they are counted, not sampled. A job whose GPU the specs cannot place samples nothing.
// Threading: no shared state; one job in memory at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/collectives/collective_calibration.h"
#include "modeler/models/gemm/gemm_fit.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_model.h"
#include "modeler/models/kernels/kernel_work.h"
#include "schema/writer/trace_events.h"

namespace lumos::modeler::models {

struct CostInputs {
  std::vector<std::string> tables;  // CSV tables, in the order found.
  std::vector<std::string> traces;  // Lumos traces (sorted, de-duplicated).
  // The GPU (a spec or CUDA name) of traced files that name none, header or trailer (an agent
  // before schema 2.4); empty: such a job is refused when it has something to place.
  std::string unnamed_gpu;
  // The attention problem every traced job's attention kernels solved (`costs fit
  // --attention`): the traces do not record it, so the user says it. Then each job's main
  // attention kernel per direction (by name: "bprop", "bwd" or "backward" is the backward; the
  // name with the most time of each direction is the main one, the smaller ones, a backward's
  // pre- and post-processing, are counted and left out) is a sample of the attention class
  // with FlashAttention's work for that shape. None: attention kernels have no known work.
  std::optional<AttentionShape> attention;
};

// The tables and traces that `inputs` name. Arguments that name no trace go to `problems`
// (one line each); an error names the first argument that cannot be used at all.
StatusOr<CostInputs> ExpandCostInputs(const std::vector<std::string>& inputs,
                                      std::vector<std::string>* problems);

// What one traced job calibrates.
struct TraceCalibration {
  std::string job_id;
  size_t ranks = 0;
  size_t hosts = 0;              // Distinct host names of its ranks (0: none named).
  std::string device;            // The CUDA device name of its headers ("" when none).
  const GpuSpec* gpu = nullptr;  // What `device` maps to in the specs (nullptr: nothing).
  CalibrationSet collectives;    // Origins: {"job ID"}.
  JobCalibrationStats stats;
  uint64_t sized = 0;       // Points with a message size (the others fit nothing).
  uint64_t multi_node = 0;  // Sized points whose ranks span hosts.

  // Traced GEMMs (above): points per dtype on `gpu`, ordered by dtype.
  std::vector<TracedGemms> gemms;
  struct GemmStats {
    uint64_t kernels = 0;      // Kernels linked to a GEMM call (attention excluded).
    uint64_t calls = 0;        // GEMMs they make (a split-K GEMM's kernels are one).
    uint64_t batched = 0;      // GEMMs left out: batch > 1.
    uint64_t other_dtype = 0;  // GEMMs left out: a dtype the model has not, or the GPU no peak.
  } gemm_stats;
  uint64_t GemmPoints() const;

  // Traced non-GEMM GPU work (above): samples per key on `gpu`, in KeyName order.
  struct KernelSamples {
    KernelKey key;
    std::vector<KernelSample> samples;
  };
  std::vector<KernelSamples> kernel_samples;
  uint64_t gpu_records = 0;          // Non-GEMM, non-communication kernels, copies and memsets.
  uint64_t without_work = 0;         // Of them: no work known (kernels), or no duration.
  uint64_t attention_auxiliary = 0;  // Attention kernels besides each direction's main one.

  // "job dlrm_kineto (8 ranks, Tesla V100-SXM2-32GB): 8 collective operations, 6 timed, none
  // with a message size: calibrates nothing; GEMM: none with a shape", or "...; GEMM: 1782
  // calls (2388 kernels): 200 points (repeated shapes: the median) on A100-SXM4-40GB tf32",
  // then "; kernels: 5120 GPU record(s), 4800 without work: 320 sample(s) on V100-SXM2-32GB
  // (memcpy HtoD pinned 200, memset 120)".
  std::string Describe() const;
};

// A traced GEMM's dtype by the rule above (tf32_kernel: one of its kernels is a TF32 tensor-core
// kernel by name); nullopt: not one the model has.
std::optional<DType> GemmDType(const schema::GemmCallEvent& call, bool tf32_kernel);

// What one job already in memory (with its events) calibrates, as ReadTraceCalibrations does
// for each job it reads; the GPU from the ranks' device names (RankTrace::device).
StatusOr<TraceCalibration> CalibrateJob(const Job& job, const SpecTable& specs,
                                        const AttentionShape* attention = nullptr);

// Reads the traces job by job. Unreadable, damaged and unclosed files are named in `problems`
// (what could be read is used); an error is a job the specs cannot place (see above) that has
// collective points with a size or GEMM points.
// `unnamed_gpu`, `attention` (may be null): CostInputs' fields.
StatusOr<std::vector<TraceCalibration>> ReadTraceCalibrations(
    const std::vector<std::string>& traces, const SpecTable& specs,
    std::vector<std::string>* problems, const std::string& unnamed_gpu = "",
    const AttentionShape* attention = nullptr);

}  // namespace lumos::modeler::models
