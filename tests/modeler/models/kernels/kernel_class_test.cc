// Kernel classes from kernel names and launching ops (modeler/models/kernels/kernel_class.h): a
// table of representative names, checked by hand against what each kernel does. Most are taken from
// the real traces of ../shared/data/traces (cut where the rest of the signature adds nothing);
// attention, Inductor and Hopper names, which those traces do not have, are from FlashAttention
// 2 and 3, PyTorch's memory-efficient attention, cuDNN's SDPA, TorchInductor and cuBLAS 12.
// Every name of the real traces is classified in kernel_trace_test.cc.
#include "modeler/models/kernels/kernel_class.h"

#include <gtest/gtest.h>

#include <string>

namespace lumos::modeler::models {
namespace {

struct Case {
  const char* name;
  const char* op;
  KernelClass expected;
};

constexpr Case kCases[] = {
    // Communication: NCCL, whatever the collective.
    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "", KernelClass::kCommunication},
    {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "",
     KernelClass::kCommunication},
    // Attention, forward and backward, of every library; FlashAttention's dq conversion is
    // attention, not a convolution ("convert"); cuDNN's SDPA says fprop but is attention.
    {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
     "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, "
     "true, false, false, true, true, false, false>(flash::Flash_fwd_params)",
     "", KernelClass::kAttention},
    {"void flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, "
     "false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, "
     "cutlass::bfloat16_t> >, true>(flash::Flash_bwd_params)",
     "", KernelClass::kAttention},
    {"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<...>(pytorch_flash::"
     "Flash_bwd_params)",
     "", KernelClass::kAttention},
    {"fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<...>::"
     "Params)",
     "", KernelClass::kAttention},
    {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
     "", KernelClass::kAttention},
    {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<...> > >"
     "(flash::FlashAttnFwdSm90<...>::Params)",
     "", KernelClass::kAttention},
    // Convolutions: cuDNN's implicit GEMMs, its CUTLASS kernels and helpers.
    {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_"
     "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
     "aten::cudnn_convolution", KernelClass::kConvolution},
    {"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x64_"
     "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train",
     "aten::convolution_backward", KernelClass::kConvolution},
    {"cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1", "aten::cudnn_convolution",
     KernelClass::kConvolution},
    {"void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::reduction::kernel::ReduceSplitK<...> >"
     "(...)",
     "aten::convolution_backward", KernelClass::kConvolution},
    {"void cask_cudnn_infer::computeOffsetsKernel<false, false>(cask_cudnn_infer::"
     "ComputeOffsetsParams)",
     "aten::cudnn_convolution", KernelClass::kConvolution},
    // GEMMs: cuBLAS (Volta, Ampere, Hopper, nvjet), cuBLASLt helpers, CUTLASS, GEMV and dot.
    {"volta_sgemm_128x32_nt", "aten::mm", KernelClass::kGemm},
    {"ampere_sgemm_128x64_nn", "aten::mm", KernelClass::kGemm},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     "", KernelClass::kGemm},
    {"nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT", "", KernelClass::kGemm},
    {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>("
     "cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1::Params)",
     "aten::addmm", KernelClass::kGemm},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, "
     "false>(cublasLt::cublasSplitKParams<float>, ...)",
     "aten::mm", KernelClass::kGemm},
    {"void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, "
     "cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, long, int*)",
     "aten::addmm", KernelClass::kGemm},
    {"void gemv2N_kernel<int, int, float, float, float, float, 128, 8, 4, 4, 1, false, "
     "cublasGemvParams<...> >(...)",
     "aten::bmm", KernelClass::kGemm},
    {"void dot_kernel<float, 128, 0, cublasDotParams<cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float> > >(...)",
     "aten::addmm", KernelClass::kGemm},
    // Norms, forward and backward, layer and batch; batch norm's statistics as a Welford
    // reduction belong to the norm its op names.
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
     "float, float const*, float const*, float const*, float*, float*, float*)",
     "aten::native_layer_norm", KernelClass::kNorm},
    {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, "
     "long, float const*, float const*, float const*, float const*, float*, float*)",
     "aten::native_layer_norm_backward", KernelClass::kNorm},
    {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(...)",
     "aten::cudnn_batch_norm", KernelClass::kNorm},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::WelfordOps<"
     "float, float, int, float, thrust::pair<float, float> >, unsigned int, float, 2> >(...)",
     "aten::native_batch_norm", KernelClass::kNorm},
    {"triton_red_fused_native_layer_norm_0", "", KernelClass::kNorm},
    // Softmax.
    {"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>("
     "float*, float const*, int, int, int, bool const*, int, bool)",
     "aten::_log_softmax", KernelClass::kSoftmax},
    {"triton_per_fused__softmax_0", "", KernelClass::kSoftmax},
    // Reductions: ATen's reduce_kernel (a vector norm is a reduction, not a norm), CUB scans,
    // pooling; a Welford reduction whose op is no norm stays one.
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormTwoOps<"
     "float, float, float>, unsigned int, float, 4> >(...)",
     "aten::linalg_vector_norm", KernelClass::kReduction},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::WelfordOps<"
     "float, float, int, float, thrust::pair<float, float> >, unsigned int, float, 2> >(...)",
     "aten::var", KernelClass::kReduction},
    {"void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int, ...>, int*, int*, ...>(...)",
     "fbgemm::asynchronous_complete_cumsum", KernelClass::kReduction},
    {"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float "
     "const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)",
     "aten::max_pool2d_with_indices", KernelClass::kReduction},
    {"triton_red_fused_sum_1", "", KernelClass::kReduction},
    // Optimizers: multi_tensor_apply of every functor, fused Adam; an embedding backward with a
    // fused optimizer is an embedding kernel.
    {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, "
     "float, float, float, float, adamMode_t, float, int, int>(...)",
     "", KernelClass::kOptimizer},
    {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<1>, ...>(...)",
     "aten::_foreach_mul_", KernelClass::kOptimizer},
    {"void at::native::(anonymous namespace)::fused_adam_kernel<float>(...)", "aten::_fused_adam_",
     KernelClass::kOptimizer},
    {"void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, "
     "float, float, 2ul>(...)",
     "torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>", KernelClass::kEmbedding},
    // Embeddings, gathers, scatters, index kernels, FBGEMM's sparse data movement (whose
    // arguments name fbgemm: no GEMM).
    {"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>(...)",
     "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function", KernelClass::kEmbedding},
    {"void fbgemm_gpu::permute_2D_data_kernel<false, int, int, decltype(nullptr)>(int, int, int, "
     "int const*, ...)",
     "fbgemm::permute_2D_sparse_data", KernelClass::kEmbedding},
    {"void bounds_check_indices_kernel<long, false>(at::GenericPackedTensorAccessor<long, 1ul, "
     "at::RestrictPtrTraits, int>, ..., fbgemm_gpu::BoundsCheckMode, ...)",
     "fbgemm::bounds_check_indices", KernelClass::kEmbedding},
    {"void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<...> >(...)",
     "aten::index", KernelClass::kEmbedding},
    {"void at::native::_scatter_gather_elementwise_kernel<128, 4, ...>(...)", "aten::gather",
     KernelClass::kEmbedding},
    {"void at::native::(anonymous namespace)::indexSelectLargeIndex<float, int, unsigned int, 1, "
     "1, -2, true>(...)",
     "aten::index_select", KernelClass::kEmbedding},
    // A sort inside an embedding backward is part of it; elsewhere it is other.
    {"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::"
     "Policy800, false, long, int, int, int>(...)",
     "torch::autograd::CppNode<SplitLookupFunction_adagrad_Op>", KernelClass::kEmbedding},
    {"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::"
     "Policy800, false, long, int, int, int>(...)",
     "", KernelClass::kOther},
    // Elementwise: ATen's pointwise kernels (a pointwise kernel of a batch norm is the norm's),
    // copies, cat, fills, layout transforms, Inductor's pointwise kernels.
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3>)",
     "aten::add_", KernelClass::kElementwise},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3>)",
     "aten::batch_norm", KernelClass::kNorm},
    {"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
     "(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::"
     "operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}> >(...)",
     "aten::copy_", KernelClass::kElementwise},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>"
     "(float*, ...)",
     "aten::cat", KernelClass::kElementwise},
    {"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
     "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)",
     "aten::cudnn_convolution", KernelClass::kElementwise},
    {"triton_poi_fused_add_gelu_0", "", KernelClass::kElementwise},
    // Copies and memsets as Kineto names their records.
    {"Memcpy DtoD (Device -> Device)", "", KernelClass::kMemcpy},
    {"Memset (Device)", "", KernelClass::kMemset},
    // Other: generated kernels whose names say nothing, searches.
    {"triton__0d1d2d3d4d5d6d7d8d9d10d11d12d13d14", "CompiledFunction", KernelClass::kOther},
    {"void at::native::(anonymous namespace)::searchsorted_cuda_kernel<float, long>(long*, ...)",
     "aten::bucketize", KernelClass::kOther},
    {"void truncate_locate_kernel(int)", "", KernelClass::kOther},  // No "cat" of a cat kernel.
    // The op names what the kernel's name does not.
    {"my_custom_kernel", "aten::_scaled_dot_product_flash_attention", KernelClass::kAttention},
    {"my_custom_kernel", "aten::matmul", KernelClass::kGemm},
};

TEST(KernelClassTest, RepresentativeNamesHaveTheirHandCheckedClass) {
  for (const Case& c : kCases) {
    EXPECT_EQ(KernelClassName(ClassifyKernel(c.name, c.op)),
              std::string(KernelClassName(c.expected)))
        << c.name << " || " << c.op;
  }
}

TEST(KernelClassTest, NamesRoundTripAndTheComputeBoundClassesAreTheMatrixOnes) {
  for (int i = 0; i < kKernelClassCount; ++i) {
    const auto kind = static_cast<KernelClass>(i);
    const std::optional<KernelClass> back = KernelClassFromName(KernelClassName(kind));
    ASSERT_TRUE(back.has_value()) << KernelClassName(kind);
    EXPECT_EQ(*back, kind);
    EXPECT_EQ(ComputeBoundClass(kind), kind == KernelClass::kGemm ||
                                           kind == KernelClass::kAttention ||
                                           kind == KernelClass::kConvolution);
  }
  EXPECT_FALSE(KernelClassFromName("Elementwise").has_value());
  EXPECT_FALSE(KernelClassFromName("").has_value());
}

TEST(KernelClassTest, CaseDoesNotMatterAndEmptyNamesAreOther) {
  EXPECT_EQ(ClassifyKernel("VOLTA_SGEMM_128X32_NT"), KernelClass::kGemm);
  EXPECT_EQ(ClassifyKernel(""), KernelClass::kOther);
  EXPECT_EQ(ClassifyKernel("", ""), KernelClass::kOther);
}

// The cache answers as ClassifyKernel does, per (name, op) pair: the same name under another
// launching op is another entry (a generic reduction inside a layer norm is a norm).
TEST(KernelClassTest, TheCacheAnswersAsClassifyKernel) {
  const std::string name = "void at::native::reduce_kernel<512, 1>(...)";
  const std::string norm = "aten::native_layer_norm";
  const std::string copy = name;  // The same text elsewhere: another key, the same answer.
  KernelClassCache cache;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(cache.Get(name), ClassifyKernel(name));
    EXPECT_EQ(cache.Get(name, norm), ClassifyKernel(name, norm));
    EXPECT_EQ(cache.Get(copy), ClassifyKernel(copy));
  }
  EXPECT_EQ(cache.Get(name), KernelClass::kReduction);
  EXPECT_EQ(cache.Get(name, norm), KernelClass::kNorm);
}

}  // namespace
}  // namespace lumos::modeler::models
