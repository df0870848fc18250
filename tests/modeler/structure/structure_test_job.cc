#include "tests/modeler/structure/structure_test_job.h"

#include <string>

#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

struct Gemm {
  uint64_t m = 0, n = 0, k = 0, batch = 1;
};

class Timeline {
 public:
  Timeline(Job* job, int rank, int ranks) : job_(job), rank_(rank), builder_(job, rank, ranks) {
    builder_.Communicator(kTpComm, rank, static_cast<uint32_t>(ranks));
  }
  RankTrace& trace() { return job_->ranks[static_cast<size_t>(rank_)]; }
  int64_t now_us() const { return t_us_; }
  void Gap(int64_t us) { t_us_ += us; }
  // A 1 µs launch call on thread 1, its kernel 2 µs later on stream 7 for 3 µs.
  void Launch(std::string_view name, const Gemm* gemm = nullptr, bool all_reduce = false) {
    builder_.Api(schema::ApiKind::kLaunchKernel, "cudaLaunchKernel", t_us_, 1, correlation_, 7);
    builder_.Kernel(name, 7, t_us_ + 2, 3, correlation_);
    RankTrace& r = trace();
    r.kernel_gemm.resize(r.kernels.size(), kNoGemm);
    if (gemm != nullptr) {
      schema::GemmCallEvent call;
      call.start_ns = t_us_ * kUs;
      call.duration_ns = kUs;
      call.thread_id = 1;
      call.api = gemm->batch > 1 ? schema::GemmApi::kCublasGemmStridedBatchedEx
                                 : schema::GemmApi::kCublasltMatmul;
      call.m = gemm->m;
      call.n = gemm->n;
      call.k = gemm->k;
      call.batch_count = gemm->batch;
      call.correlation_id = correlation_;
      r.gemm_calls.push_back(call);
      r.kernel_gemm.back() = static_cast<uint32_t>(r.gemm_calls.size() - 1);
    }
    if (all_reduce) {
      builder_.Collective(kTpComm, seq_++, correlation_, 7, t_us_ + 2, 3,
                          static_cast<uint32_t>(job_->ranks[0].world_size));
    }
    ++correlation_;
    t_us_ += 5;
  }
  void Nvtx(std::string_view name, int64_t start_us, int64_t end_us) {
    schema::NvtxEvent e;
    e.start_ns = start_us * kUs;
    e.duration_ns = static_cast<uint64_t>((end_us - start_us) * kUs);
    e.thread_id = 1;
    e.name = job_->names.Intern(name);
    e.kind = schema::NvtxKind::kPushPop;
    trace().nvtx.push_back(e);
  }
  RankBuilder& builder() { return builder_; }

 private:
  Job* job_;
  int rank_;
  RankBuilder builder_;
  int64_t t_us_ = 100;
  uint64_t correlation_ = 1;
  uint64_t seq_ = 0;
};

}  // namespace

Job MakeTransformerJob(const TestJobSpec& spec) {
  Job job;
  job.job_id = "gpt-test";
  const uint64_t tp = static_cast<uint64_t>(spec.ranks);
  const uint64_t hidden = 64, ffn = 256, heads = 4, seq = 16, mbs = 2, vocab = 1000;
  const uint64_t tokens = seq * mbs, head_dim = hidden / heads;
  const Gemm qkv{3 * hidden / tp, tokens, hidden}, proj{hidden, tokens, hidden / tp};
  const Gemm fc1{ffn / tp, tokens, hidden}, fc2{hidden, tokens, ffn / tp};
  const Gemm scores{seq, seq, head_dim, mbs * heads / tp},
      context{seq, head_dim, seq, mbs * heads / tp};
  const Gemm output{vocab / tp, tokens, hidden};
  for (int rank = 0; rank < spec.ranks; ++rank) {
    Timeline t(&job, rank, spec.ranks);
    for (int it = 0; it < spec.iterations; ++it) {
      const int64_t step_start = t.now_us();
      t.Gap(5);
      for (int mb = 0; mb < spec.micro_batches; ++mb) {
        const int64_t forward_start = t.now_us();
        t.Launch("embedding_forward_kernel");
        for (int l = 0; l < spec.layers; ++l) {
          const int64_t layer_start = t.now_us();
          t.Launch("sm90_xmma_gemm_bf16_qkv", &qkv);
          t.Launch("sm90_xmma_gemm_bf16_batched_nn", &scores);
          t.Launch("softmax_warp_forward");
          t.Launch("sm90_xmma_gemm_bf16_batched_nt", &context);
          t.Launch("sm90_xmma_gemm_bf16_proj", &proj);
          t.Launch("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", nullptr, true);
          t.Launch("sm90_xmma_gemm_bf16_fc1", &fc1);
          t.Launch("gelu_forward_kernel");
          t.Launch("sm90_xmma_gemm_bf16_fc2", &fc2);
          if (spec.layer_ranges) {
            t.Nvtx("decoder.layers." + std::to_string(l), layer_start, t.now_us());
          }
        }
        t.Launch("sm90_xmma_gemm_bf16_output", &output);
        t.Launch("cross_entropy_loss_kernel");
        if (spec.phase_ranges) t.Nvtx("forward", forward_start, t.now_us());
        t.Gap(20);
        const int64_t backward_start = t.now_us();
        t.Launch("cross_entropy_backward_kernel");
        for (int l = spec.layers - 1; l >= 0; --l) {
          const int64_t layer_start = t.now_us();
          t.Launch("sm90_xmma_gemm_bf16_fc2_grad_nn");
          t.Launch("sm90_xmma_gemm_bf16_fc2_grad_tn");
          t.Launch("gelu_backward_kernel");
          t.Launch("sm90_xmma_gemm_bf16_fc1_grad_nn");
          t.Launch("sm90_xmma_gemm_bf16_fc1_grad_tn");
          t.Launch("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", nullptr, true);
          t.Launch("sm90_xmma_gemm_bf16_proj_grad_nn");
          t.Launch("sm90_xmma_gemm_bf16_proj_grad_tn");
          t.Launch("softmax_warp_backward");
          t.Launch("sm90_xmma_gemm_bf16_qkv_grad_nn");
          t.Launch("sm90_xmma_gemm_bf16_qkv_grad_tn");
          t.Launch("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", nullptr, true);
          if (spec.layer_ranges) {
            t.Nvtx("decoder.layers." + std::to_string(l), layer_start, t.now_us());
          }
        }
        t.Launch("embedding_backward_kernel");
        if (spec.phase_ranges) t.Nvtx("backward", backward_start, t.now_us());
        t.Gap(20);
      }
      const int64_t optimizer_start = t.now_us();
      t.Launch("multi_tensor_apply_kernel_adam");
      t.Launch("multi_tensor_apply_kernel_adam");
      if (spec.phase_ranges) t.Nvtx("optimizer", optimizer_start, t.now_us());
      t.Gap(10);
      if (spec.steps) {
        t.builder().Step("ProfilerStep#" + std::to_string(it + 1), step_start,
                         t.now_us() - step_start);
      }
      t.Gap(50);
    }
  }
  return job;
}

}  // namespace lumos::modeler::testing
