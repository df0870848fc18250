// Design: the training loop `synth gpt` traces (gpt_synth.h), per iteration on every rank:
// zero-grad memset; per micro-batch a forward on the main thread (vocab-parallel embedding and
// its TP all-reduce; per layer: layernorm, QKV GEMM, flash attention, output projection, TP
// all-reduce, dropout + residual add, layernorm, fc1, GeLU, fc2, TP all-reduce, dropout + add;
// final layernorm, LM head, cross-entropy) and a backward on the autograd engine's thread (the
// reverse: each GEMM a dgrad and a wgrad GEMM, attention backward, TP all-reduces of the input
// gradients); in the last micro-batch's backward the data-parallel gradient all-reduces, one
// per ~25 MB bucket of bf16 gradients as the buckets fill, on their own NCCL stream, waited for
// before the optimizer (multi_tensor_apply Adam kernels, one per layer and one for the rest);
// then the loss's cudaStreamSynchronize. TP all-reduces run on the TP communicator's stream
// (ProcessGroupNCCL: an event wait each way). NVTX ranges "forward", "backward", "optimizer",
// "layers.<i>" unless config.nvtx is off. Threading: single-threaded.
#pragma once

#include "base/status.h"
#include "modeler/synth/gpt_config.h"
#include "modeler/synth/gpt_costs.h"
#include "modeler/synth/gpt_timeline.h"

namespace lumos::modeler {

Status RunGptProgram(const GptConfig& config, const GptCosts& costs, GptTimeline* timeline);

// Kernel names as PyTorch, FlashAttention, apex and NCCL kernels are named (kernel_class.h
// classifies them: tests check it).
namespace gpt_kernels {
inline constexpr const char kGemmForward[] =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas";
inline constexpr const char kGemmDgrad[] =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas";
inline constexpr const char kGemmWgrad[] =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
    "segment_k_off_kernel__5x_cublas";
inline constexpr const char kFlashForward[] =
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
    "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, true, "
    "true, false, false, true, true, false, false>(flash::Flash_fwd_params)";
inline constexpr const char kFlashBackward[] =
    "void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, "
    "128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, "
    "cutlass::bfloat16_t> >, true, true, false, false, false, false, false>"
    "(flash::Flash_bwd_params)";
inline constexpr const char kLayerNorm[] =
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
    "float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, "
    "float*, float*, c10::BFloat16*)";
inline constexpr const char kLayerNormGradInput[] =
    "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<"
    "c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float "
    "const*, c10::BFloat16 const*, c10::BFloat16*, int)";
inline constexpr const char kLayerNormGradWeight[] =
    "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, "
    "float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float "
    "const*, c10::BFloat16*, c10::BFloat16*)";
inline constexpr const char kEmbedding[] =
    "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, "
    "unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
    "at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
    "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned "
    "int, long)";
inline constexpr const char kEmbeddingBackward[] =
    "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, "
    "float, long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int, int)";
inline constexpr const char kDropout[] =
    "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, "
    "unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned "
    "int>, at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
    "at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)";
inline constexpr const char kDropoutBackward[] =
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
    "namespace)::masked_scale_kernel<bool, c10::BFloat16, float>(at::Tensor&, at::Tensor "
    "const&, at::Tensor const&, float)::{lambda(c10::BFloat16, bool)#1}, "
    "at::detail::Array<char*, 3> >(int, at::native::(anonymous namespace)::"
    "masked_scale_kernel<bool, c10::BFloat16, float>(at::Tensor&, at::Tensor const&, "
    "at::Tensor const&, float)::{lambda(c10::BFloat16, bool)#1}, at::detail::Array<char*, 3>)";
inline constexpr const char kAdd[] =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<"
    "c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<"
    "c10::BFloat16>, at::detail::Array<char*, 3>)";
inline constexpr const char kGelu[] =
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl("
    "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::"
    "{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> "
    ">(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"
    "{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::"
    "{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)";
inline constexpr const char kGeluBackward[] =
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl("
    "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::"
    "{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, "
    "at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl("
    "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::"
    "{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, "
    "at::detail::Array<char*, 3>)";
inline constexpr const char kSoftmax[] =
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, "
    "float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, "
    "c10::BFloat16 const*, int)";
inline constexpr const char kNllLoss[] =
    "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, "
    "float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, "
    "long, long)";
inline constexpr const char kSoftmaxBackward[] =
    "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, c10::BFloat16, float, "
    "float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, "
    "float const*, float const*, long)";
inline constexpr const char kAdam[] =
    "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, "
    "float, float, float, float, adamMode_t, float>(long, int volatile*, "
    "TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float, float, float, "
    "adamMode_t, float)";
}  // namespace gpt_kernels

}  // namespace lumos::modeler
