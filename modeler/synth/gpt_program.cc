#include "modeler/synth/gpt_program.h"

#include <string>

namespace lumos::modeler {
namespace {

using models::DType;
using schema::DataType;
using schema::GemmTranspose;
namespace k = gpt_kernels;

constexpr double kBucketBytes = 25e6;  // Megatron DDP's gradient bucket, in bf16 bytes.

// The program's operations with their modelled durations (the same on every rank).
class Program {
 public:
  Program(const GptConfig& c, const GptCosts& costs, GptTimeline* t)
      : c_(c), costs_(costs), t_(*t) {
    tokens_ = static_cast<double>(c.tokens());
    hidden_ = static_cast<double>(c.hidden);
    ffn_ = static_cast<double>(c.ffn_size()) / static_cast<double>(c.tp);  // tp divides it.
    vocab_ = static_cast<double>(c.vocab) / static_cast<double>(c.tp);
    const double h = hidden_;
    layer_params_ = (3 * h * h / c.tp + 3 * h / c.tp) + (h * h / c.tp + h) + (h * ffn_ + ffn_) +
                    (ffn_ * h + h) + 4 * h;
    other_params_ = vocab_ * h + 2 * h;  // Embedding (tied with the LM head), final layernorm.
  }

  Status Run() {
    for (int64_t it = 0; it < c_.iterations; ++it) {
      t_.StepBegin(it + 1);
      if (c_.forward_only) {
        for (int64_t mb = 0; mb < c_.micro_batches; ++mb) LUMOS_RETURN_IF_ERROR(Forward());
        t_.StreamSynchronize(GptStream::kCompute);  // loss.item()
        t_.StepEnd();
        continue;
      }
      LUMOS_RETURN_IF_ERROR(Memset(2 * (layer_params_ * static_cast<double>(c_.layers) +
                                        other_params_)));  // zero_grad of the bf16 grads.
      for (int64_t mb = 0; mb < c_.micro_batches; ++mb) {
        LUMOS_RETURN_IF_ERROR(Forward());
        LUMOS_RETURN_IF_ERROR(Backward(mb + 1 == c_.micro_batches));
      }
      LUMOS_RETURN_IF_ERROR(Optimizer());
      t_.StreamSynchronize(GptStream::kCompute);  // loss.item()
      t_.StepEnd();
    }
    return Status::Ok();
  }

 private:
  Status Kernel(const char* name, double bytes, double flops = 0, DType dtype = DType::kBf16) {
    LUMOS_ASSIGN_OR_RETURN(int64_t ns, costs_.Kernel(name, bytes, flops, dtype));
    t_.Kernel(name, ns);
    return Status::Ok();
  }
  Status Gemm(const char* name, int64_t m, int64_t n, int64_t kk, GemmTranspose ta,
              GemmTranspose tb) {
    LUMOS_ASSIGN_OR_RETURN(int64_t ns, costs_.Gemm(m, n, kk));
    t_.Gemm(name, {m, n, kk, ta, tb}, ns);
    return Status::Ok();
  }
  // y = x W^T: forward; then its dgrad (dx = dy W) and wgrad (dW = dy^T x).
  Status Linear(int64_t in, int64_t out) {
    return Gemm(k::kGemmForward, c_.tokens(), out, in, GemmTranspose::kT, GemmTranspose::kN);
  }
  Status LinearBackward(int64_t in, int64_t out) {
    LUMOS_RETURN_IF_ERROR(
        Gemm(k::kGemmDgrad, c_.tokens(), in, out, GemmTranspose::kN, GemmTranspose::kN));
    return Gemm(k::kGemmWgrad, out, in, c_.tokens(), GemmTranspose::kN, GemmTranspose::kT);
  }
  Status Attention(bool backward) {
    models::AttentionShape shape;
    shape.batch = c_.mbs;
    shape.heads = c_.heads / c_.tp;
    shape.seq_q = c_.seq;
    shape.head_dim = c_.head_dim();
    shape.causal = true;
    shape.backward = backward;
    LUMOS_ASSIGN_OR_RETURN(int64_t ns, costs_.Attention(shape));
    t_.Attention(backward ? k::kFlashBackward : k::kFlashForward, shape, ns);
    return Status::Ok();
  }
  Status Memset(double bytes) {
    LUMOS_ASSIGN_OR_RETURN(int64_t ns, costs_.Memset(bytes));
    t_.Memset(static_cast<uint64_t>(bytes), ns);
    return Status::Ok();
  }
  // A synchronous all-reduce through ProcessGroupNCCL on the group's own stream.
  Status AllReduce(GptGroup group, GptStream stream, double bytes, DataType type, bool join) {
    const auto ranks = static_cast<uint32_t>(group == GptGroup::kTensorParallel ? c_.tp : c_.dp);
    if (ranks < 2 || bytes <= 0) return Status::Ok();
    LUMOS_ASSIGN_OR_RETURN(GptCosts::Collective cost,
                           costs_.AllReduce(static_cast<uint64_t>(bytes), type, ranks));
    t_.EventWait(GptStream::kCompute, stream);
    t_.AllReduce(group, stream, static_cast<uint64_t>(bytes), type, cost);
    if (join) t_.EventWait(stream, GptStream::kCompute);
    return Status::Ok();
  }
  Status TpAllReduce() {
    return AllReduce(GptGroup::kTensorParallel, GptStream::kTensorParallel, 2 * tokens_ * hidden_,
                     DataType::kBfloat16, true);
  }

  Status Forward() {
    const double act = tokens_ * hidden_ * 2;  // One bf16 activation [tokens, hidden].
    t_.Push("forward");
    LUMOS_RETURN_IF_ERROR(Kernel(k::kEmbedding, 2 * act));
    LUMOS_RETURN_IF_ERROR(TpAllReduce());  // Vocab-parallel embedding.
    LUMOS_RETURN_IF_ERROR(Kernel(k::kDropout, 2.5 * act, tokens_ * hidden_));
    for (int64_t i = 0; i < c_.layers; ++i) {
      t_.HostGap(3'000, 6'000);
      t_.Push("layers." + std::to_string(i));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kLayerNorm, 2 * act, 5 * tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Linear(c_.hidden, 3 * c_.hidden / c_.tp));
      LUMOS_RETURN_IF_ERROR(Attention(false));
      LUMOS_RETURN_IF_ERROR(Linear(c_.hidden / c_.tp, c_.hidden));
      LUMOS_RETURN_IF_ERROR(TpAllReduce());
      LUMOS_RETURN_IF_ERROR(Kernel(k::kDropout, 2.5 * act, tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kAdd, 3 * act, tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kLayerNorm, 2 * act, 5 * tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Linear(c_.hidden, c_.ffn_size() / c_.tp));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kGelu, 4 * tokens_ * ffn_, 8 * tokens_ * ffn_));
      LUMOS_RETURN_IF_ERROR(Linear(c_.ffn_size() / c_.tp, c_.hidden));
      LUMOS_RETURN_IF_ERROR(TpAllReduce());
      LUMOS_RETURN_IF_ERROR(Kernel(k::kDropout, 2.5 * act, tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kAdd, 3 * act, tokens_ * hidden_));
      t_.Pop();
    }
    LUMOS_RETURN_IF_ERROR(Kernel(k::kLayerNorm, 2 * act, 5 * tokens_ * hidden_));
    LUMOS_RETURN_IF_ERROR(Linear(c_.hidden, c_.vocab / c_.tp));  // LM head.
    LUMOS_RETURN_IF_ERROR(Kernel(k::kSoftmax, 6 * tokens_ * vocab_, 5 * tokens_ * vocab_));
    LUMOS_RETURN_IF_ERROR(Kernel(k::kNllLoss, 8 * tokens_, tokens_, DType::kFp32));
    t_.Pop();
    return Status::Ok();
  }

  // A layer's (or the rest's) gradients are complete: in the last micro-batch they fill the
  // current bucket, and a full bucket is all-reduced over the data-parallel group at once.
  Status GradientsReady(double params, bool last_micro_batch, bool flush) {
    if (!last_micro_batch || c_.dp < 2) return Status::Ok();
    bucket_bytes_ += 2 * params;
    if (bucket_bytes_ < kBucketBytes && !flush) return Status::Ok();
    const double bytes = bucket_bytes_;
    bucket_bytes_ = 0;
    ++buckets_;
    return AllReduce(GptGroup::kDataParallel, GptStream::kDataParallel, bytes, DataType::kBfloat16,
                     false);
  }

  Status Backward(bool last_micro_batch) {
    const double act = tokens_ * hidden_ * 2;
    t_.UseBackwardThread(true);
    t_.Push("backward");
    LUMOS_RETURN_IF_ERROR(Kernel(k::kSoftmaxBackward, 6 * tokens_ * vocab_, 3 * tokens_ * vocab_));
    LUMOS_RETURN_IF_ERROR(LinearBackward(c_.hidden, c_.vocab / c_.tp));  // LM head.
    LUMOS_RETURN_IF_ERROR(Kernel(k::kLayerNormGradInput, 3 * act, 8 * tokens_ * hidden_));
    LUMOS_RETURN_IF_ERROR(Kernel(k::kLayerNormGradWeight, 2 * act, 4 * tokens_ * hidden_));
    for (int64_t i = c_.layers - 1; i >= 0; --i) {
      t_.HostGap(3'000, 6'000);
      t_.Push("layers." + std::to_string(i));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kDropoutBackward, 2.5 * act, tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(LinearBackward(c_.ffn_size() / c_.tp, c_.hidden));  // fc2
      LUMOS_RETURN_IF_ERROR(Kernel(k::kGeluBackward, 6 * tokens_ * ffn_, 12 * tokens_ * ffn_));
      LUMOS_RETURN_IF_ERROR(LinearBackward(c_.hidden, c_.ffn_size() / c_.tp));  // fc1
      LUMOS_RETURN_IF_ERROR(TpAllReduce());
      LUMOS_RETURN_IF_ERROR(Kernel(k::kLayerNormGradInput, 3 * act, 8 * tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kLayerNormGradWeight, 2 * act, 4 * tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kAdd, 3 * act, tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kDropoutBackward, 2.5 * act, tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(LinearBackward(c_.hidden / c_.tp, c_.hidden));  // Output projection.
      LUMOS_RETURN_IF_ERROR(Attention(true));
      LUMOS_RETURN_IF_ERROR(LinearBackward(c_.hidden, 3 * c_.hidden / c_.tp));  // QKV
      LUMOS_RETURN_IF_ERROR(TpAllReduce());
      LUMOS_RETURN_IF_ERROR(Kernel(k::kLayerNormGradInput, 3 * act, 8 * tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kLayerNormGradWeight, 2 * act, 4 * tokens_ * hidden_));
      LUMOS_RETURN_IF_ERROR(Kernel(k::kAdd, 3 * act, tokens_ * hidden_));
      t_.Pop();
      LUMOS_RETURN_IF_ERROR(GradientsReady(layer_params_, last_micro_batch, false));
    }
    LUMOS_RETURN_IF_ERROR(Kernel(k::kDropoutBackward, 2.5 * act, tokens_ * hidden_));
    LUMOS_RETURN_IF_ERROR(
        Kernel(k::kEmbeddingBackward, 2 * act + 2 * vocab_ * hidden_, tokens_ * hidden_));
    LUMOS_RETURN_IF_ERROR(GradientsReady(other_params_, last_micro_batch, true));
    t_.Pop();
    t_.UseBackwardThread(false);
    return Status::Ok();
  }

  Status Optimizer() {
    // finish_grad_sync(): the compute stream waits for every bucket's all-reduce.
    for (int64_t b = 0; b < buckets_; ++b) {
      t_.EventWait(GptStream::kDataParallel, GptStream::kCompute);
    }
    buckets_ = 0;
    t_.Push("optimizer");
    // Adam on fp32 master weights: param, exp_avg, exp_avg_sq read and written, the bf16 grad
    // read and the bf16 weight written: 28 bytes and ~12 FLOPs a parameter.
    for (int64_t i = 0; i <= c_.layers; ++i) {
      const double params = i < c_.layers ? layer_params_ : other_params_;
      LUMOS_RETURN_IF_ERROR(Kernel(k::kAdam, 28 * params, 12 * params, DType::kFp32));
    }
    t_.Pop();
    return Status::Ok();
  }

  const GptConfig& c_;
  const GptCosts& costs_;
  GptTimeline& t_;
  double tokens_ = 0, hidden_ = 0, ffn_ = 0, vocab_ = 0;  // Tokens, hidden, ffn / tp, vocab / tp.
  double layer_params_ = 0, other_params_ = 0;            // Per rank.
  double bucket_bytes_ = 0;
  int64_t buckets_ = 0;  // All-reduced in this iteration, not yet waited for.
};

}  // namespace

Status RunGptProgram(const GptConfig& config, const GptCosts& costs, GptTimeline* timeline) {
  return Program(config, costs, timeline).Run();
}

}  // namespace lumos::modeler
