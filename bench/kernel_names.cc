// The pool of realistic kernel names for the synthetic event mix: what an H100/H200 BF16
// transformer training step launches (cuBLAS/CUTLASS GEMMs, flash-attention, PyTorch
// elementwise/reduction/norm kernels, fused optimizers, NCCL, torch.compile Triton kernels).
#include "bench/kernel_names.h"

#include <string>

// The table is built once per process: readable concatenation beats saving temporaries.
// NOLINTBEGIN(performance-inefficient-string-concatenation)
namespace lumos::bench {
namespace {

using Pool = std::vector<KernelName>;

void Add(Pool* pool, KernelClass cls, std::string name) {
  pool->push_back(KernelName{cls, std::move(name)});
}

void AddGemms(Pool* pool) {
  for (const char* layout : {"tn", "nt", "nn"}) {
    for (const char* tile : {"64x128x64", "128x128x64", "128x256x64", "256x128x64"}) {
      for (const char* wg : {"1x1x1", "2x1x1"}) {
        Add(pool, KernelClass::kGemm,
            std::string("sm90_xmma_gemm_bf16bf16_bf16f32_f32_") + layout + "_n_tilesize" + tile +
                "_warpgroupsize" + wg + "_execute_segment_k_off_kernel__5x_cublas");
      }
    }
  }
  for (const char* nvjet :
       {"nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT", "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_NNT",
        "nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NTT", "nvjet_tst_128x128_64x6_1x1_v_bz_TNN",
        "nvjet_tst_64x256_64x4_1x1_h_bz_splitK_TNT", "nvjet_tst_256x192_64x3_2x1_v_bz_coopB_TNT",
        "nvjet_tst_128x192_64x5_2x1_v_bz_coopA_NNT", "nvjet_tst_192x128_64x5_1x2_h_bz_coopB_NTN"}) {
    Add(pool, KernelClass::kGemm, nvjet);
  }
  for (const char* tile : {"64x64_64x4", "128x128_32x3", "256x128_64x3", "128x256_64x3"}) {
    std::string k =
        std::string("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_") + tile + "_tn_align8";
    Add(pool, KernelClass::kGemm, "void cutlass::Kernel2<" + k + ">(" + k + "::Params)");
  }
}

void AddAttention(Pool* pool) {
  for (int hd : {64, 128}) {
    for (int bn : {32, 64}) {
      std::string t = std::to_string(hd) + ", 128, " + std::to_string(bn);
      Add(pool, KernelClass::kAttentionForward,
          "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<" + t +
              ", 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<" + t +
              ", 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
              "false>(flash::Flash_fwd_params)");
    }
  }
  for (int hd : {64, 128}) {
    std::string traits = "Flash_bwd_kernel_traits<" + std::to_string(hd) +
                         ", 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, "
                         "Flash_kernel_traits<" +
                         std::to_string(hd) + ", 64, 128, 8, cutlass::bfloat16_t> >";
    Add(pool, KernelClass::kAttentionBackward,
        "void flash::flash_bwd_dot_do_o_kernel<true, " + traits + ">(flash::Flash_bwd_params)");
    Add(pool, KernelClass::kAttentionBackward,
        "void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<" + traits +
            ", true, false, false, false, false, true, false, false>(flash::Flash_bwd_params)");
    Add(pool, KernelClass::kAttentionBackward,
        "void flash::flash_bwd_convert_dq_kernel<" + traits + ", true>(flash::Flash_bwd_params)");
  }
}

void AddElementwise(Pool* pool) {
  struct Functor {
    const char* text;  // {T} is replaced by the element type.
    int arrays;        // Inputs + output.
  };
  const Functor functors[] = {
      {"at::native::CUDAFunctor_add<{T}>", 3},
      {"at::native::BinaryFunctor<{T}, {T}, {T}, at::native::binary_internal::MulFunctor<float> >",
       3},
      {"at::native::AUnaryFunctor<{T}, {T}, {T}, at::native::binary_internal::MulFunctor<float> >",
       2},
      {"at::native::FillFunctor<{T}>", 1},
      {"at::native::(anonymous namespace)::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
       "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
       "const::{lambda({T})#1}",
       2},
      {"at::native::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() "
       "const::{lambda()#5}::operator()() const::{lambda({T})#1}",
       2},
      {"at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() "
       "const::{lambda()#3}::operator()() const::{lambda({T})#1}",
       2},
      {"at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() "
       "const::{lambda()#6}::operator()() const::{lambda({T})#1}",
       2},
      {"at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
       "const::{lambda()#7}::operator()() const::{lambda({T})#1}",
       2},
      {"at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() "
       "const::{lambda()#4}::operator()() const::{lambda({T})#1}",
       2},
      {"at::native::BinaryFunctor<{T}, {T}, {T}, at::native::binary_internal::DivFunctor<float> >",
       3},
      {"at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, c10::Scalar "
       "const&)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda({T}, "
       "bool)#1}",
       3},
  };
  auto with_type = [](const char* text, const char* type) {
    std::string out;
    for (const char* p = text; *p != '\0'; ++p) {
      if (p[0] == '{' && p[1] == 'T' && p[2] == '}') {
        out += type;
        p += 2;
      } else {
        out += *p;
      }
    }
    return out;
  };
  for (const Functor& f : functors) {
    for (const char* type : {"float", "c10::BFloat16", "c10::Half"}) {
      std::string functor = with_type(f.text, type);
      std::string arrays = "at::detail::Array<char*, " + std::to_string(f.arrays) + ">";
      Add(pool, KernelClass::kElementwise,
          std::string("void at::native::vectorized_elementwise_kernel<") +
              (type[0] == 'f' ? "4" : "8") + ", " + functor + ", " + arrays + " >(int, " + functor +
              ", " + arrays + ")");
    }
    std::string functor = with_type(f.text, "c10::BFloat16");
    std::string arrays = "at::detail::Array<char*, " + std::to_string(f.arrays) + ">";
    Add(pool, KernelClass::kElementwise,
        "void at::native::unrolled_elementwise_kernel<" + functor + ", " + arrays +
            ", TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
            "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, " +
            functor + ", " + arrays +
            ", TrivialOffsetCalculator<1, unsigned int>, "
            "TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
            "at::native::memory::StoreWithCast<1>)");
    Add(pool, KernelClass::kElementwise,
        "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<" +
            functor + ">(at::TensorIteratorBase&, " + functor +
            " const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<" + functor +
            ">(at::TensorIteratorBase&, " + functor + " const&)::{lambda(int)#1})");
  }
}

void AddReductionsAndNorms(Pool* pool) {
  for (const char* op : {"sum_functor", "MaxOps", "MinOps", "NormTwoOps", "MeanOps"}) {
    for (const char* type : {"float", "c10::BFloat16"}) {
      std::string t = type;
      Add(pool, KernelClass::kReduction,
          "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<" + t +
              ", at::native::func_wrapper_t<" + t + ", at::native::" + op + "<" + t +
              ", float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
              "unsigned int, " +
              t + ", 4, 4> >(at::native::ReduceOp<" + t +
              ", "
              "at::native::func_wrapper_t<" +
              t + ", at::native::" + op + "<" + t +
              ", float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
              "unsigned int, " +
              t + ", 4, 4>)");
    }
  }
  for (const char* type : {"c10::BFloat16", "float"}) {
    std::string t = type;
    Add(pool, KernelClass::kNorm,
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<" + t +
            ", float>(int, float, " + t + " const*, " + t + " const*, " + t +
            " const*, float*, float*, " + t + "*)");
    Add(pool, KernelClass::kNorm,
        "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<" + t +
            ", float>(" + t + " const*, " + t + " const*, float const*, float const*, " + t +
            " const*, " + t + "*, int)");
    Add(pool, KernelClass::kNorm,
        "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<" + t +
            ", float>(long, long, " + t + " const*, " + t +
            " const*, float const*, float const*, " + t + "*, " + t + "*)");
    Add(pool, KernelClass::kNorm,
        "void cuApplyRMSNorm<" + t + ", float, " + t + ">(" + t + "*, float*, " + t +
            " const*, int, int, float, " + t + " const*)");
    Add(pool, KernelClass::kNorm,
        "void cuComputeGradInput<" + t + ", float, " + t + ">(" + t + " const*, " + t +
            " const*, int, int, float const*, float const*, float, " + t + " const*, " + t +
            "*, bool)");
    Add(pool, KernelClass::kNorm,
        "void cuComputePartGradGammaBeta<" + t + ", float, " + t + ">(" + t + " const*, " + t +
            " const*, int, int, float const*, float const*, float, float*, float*, bool)");
  }
  for (const char* name :
       {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
        "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
        "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, "
        "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, "
        "float const*, long)",
        "void at::native::(anonymous namespace)::cunn_SoftMaxForwardSmem<8, c10::BFloat16, float, "
        "c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, "
        "c10::BFloat16 const*, long)",
        "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, "
        "float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, "
        "long, long)",
        "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, "
        "long>(float*, float const*, long const*, float const*, float const*, bool, int, int, "
        "long, long)",
        "void at::native::(anonymous namespace)::cross_entropy_loss_label_smoothing_kernel<float>("
        "float*, float const*, long const*, long, long, float)"}) {
    Add(pool, KernelClass::kSoftmaxLoss, name);
  }
}

void AddOptimizer(Pool* pool) {
  for (const char* f :
       {"FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>",
        "FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>",
        "FusedAdamMathFunctor<float, 5, (at::native::ADAM_MODE)1, true>", "L2NormFunctor<float, 1>",
        "L2NormFunctor<c10::BFloat16, 1>", "ScaleFunctor<float, 2>", "ZeroFunctor<float, 1>",
        "FusedSgdMathFunctor<float, 3>"}) {
    std::string functor = std::string("at::native::(anonymous namespace)::") + f;
    Add(pool, KernelClass::kOptimizer,
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"
        "(anonymous namespace)::TensorListMetadata<4>, " +
            functor +
            ", double, double, double, double, double, double, bool, float*>(at::native::"
            "(anonymous namespace)::TensorListMetadata<4>, " +
            functor + ", double, double, double, double, double, double, bool, float*)");
  }
  Add(pool, KernelClass::kOptimizer,
      "void at::native::lpnorm_cleanup<float, (at::native::NormType)1, float, float>(float const*, "
      "at::native::TensorListAddresses, int)");
  Add(pool, KernelClass::kOptimizer,
      "void at::native::lpnorm_cleanup<c10::BFloat16, (at::native::NormType)1, float, float>("
      "float const*, at::native::TensorListAddresses, int)");
}

void AddNccl(Pool* pool) {
  const std::string args = "(ncclDevKernelArgsStorage<4096ul>)";
  for (const char* ap : {"RING_LL", "RING_LL128", "RING_SIMPLE", "NVLS_SIMPLE"}) {
    Add(pool, KernelClass::kNccl, std::string("ncclDevKernel_AllGather_") + ap + args);
  }
  for (const char* type : {"bf16", "f32"}) {
    for (const char* ap : {"RING_LL", "RING_LL128", "RING_SIMPLE", "NVLS_SIMPLE"}) {
      Add(pool, KernelClass::kNccl,
          std::string("ncclDevKernel_ReduceScatter_Sum_") + type + "_" + ap + args);
    }
    for (const char* ap : {"RING_LL", "TREE_LL", "RING_SIMPLE", "NVLS_SIMPLE"}) {
      Add(pool, KernelClass::kNccl,
          std::string("ncclDevKernel_AllReduce_Sum_") + type + "_" + ap + args);
    }
  }
  Add(pool, KernelClass::kNccl, "ncclDevKernel_SendRecv" + args);
  Add(pool, KernelClass::kNccl, "ncclDevKernel_Broadcast_RING_LL" + args);
}

void AddTritonAndMisc(Pool* pool) {
  const char* kinds[] = {"poi", "red", "per"};
  const char* fused[] = {"add_mul",
                         "_to_copy_add_mean_mul_pow_rsqrt",
                         "mul_silu",
                         "add_native_layer_norm",
                         "_softmax_masked_fill",
                         "cat_clone",
                         "embedding_dense_backward",
                         "sum_view",
                         "_to_copy_mul_sigmoid",
                         "clone_transpose",
                         "native_dropout_add",
                         "_unsafe_view_add_clone"};
  int n = 0;
  for (const char* f : fused) {
    for (int variant = 0; variant < 2; ++variant, ++n) {
      Add(pool, KernelClass::kTriton,
          std::string("triton_") + kinds[n % 3] + "_fused_" + f + "_" + std::to_string(n % 5));
    }
  }
  for (const char* name :
       {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, "
        "unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
        "at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
        "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned "
        "int, long)",
        "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, "
        "float, long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int)",
        "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native"
        "::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef"
        "<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase"
        "&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::"
        "OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::"
        "{lambda(char*, char const*, long)#1} const&)::{lambda(int)#1}>(long, at::native::"
        "gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::"
        "TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char "
        "const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, "
        "at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, "
        "c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&)"
        "::{lambda(int)#1})",
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
        "namespace)::OpaqueType<2u>, unsigned int, 3, 128, 1>(at::native::(anonymous namespace)::"
        "OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native"
        "::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous "
        "namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
        "void (anonymous namespace)::rotary_kernel<c10::BFloat16, float>(c10::BFloat16*, "
        "c10::BFloat16 const*, float const*, float const*, int, int, int, int, bool)",
        "void (anonymous namespace)::rotary_kernel<float, float>(float*, float const*, float "
        "const*, float const*, int, int, int, int, bool)",
        "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, "
        "unsigned int, 1, 8, bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned "
        "int>, "
        "at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo"
        "<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)",
        "void at::native::tensor_kernel_scan_innermost_dim<long, std::plus<long> >(long*, long "
        "const*, unsigned int, unsigned int, unsigned int, long, std::plus<long>)",
        "void at::native::_scatter_gather_elementwise_kernel<128, 4, at::native::_cuda_scatter_"
        "gather_internal_kernel<false, at::native::OpaqueType<4> >::operator()<at::native::"
        "TensorAssign>(at::TensorIterator&, long, long, long, at::native::TensorAssign const&)::"
        "{lambda(int)#1}>(int, at::native::_cuda_scatter_gather_internal_kernel<false, at::native"
        "::OpaqueType<4> >::operator()<at::native::TensorAssign>(at::TensorIterator&, long, long, "
        "long, at::native::TensorAssign const&)::{lambda(int)#1})",
        "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float,"
        " 4, at::native::templates::cuda::uniform_and_transform<float, float, at::CUDAGeneratorImpl"
        "*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::"
        "TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() "
        "const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, "
        "at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl"
        "*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::"
        "operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda("
        "curandStatePhilox4_32_10*)#2}, at::native::(anonymous namespace)::"
        "distribution_nullary_kernel<float, float, 4, at::CUDAGeneratorImpl*>)",
        "void transformer_engine::(anonymous namespace)::cast_transpose_kernel<8, 4, float, "
        "__nv_fp8_e4m3, float>(float const*, float const*, __nv_fp8_e4m3*, __nv_fp8_e4m3*, float "
        "const*, float*, float*, unsigned long, unsigned long)",
        "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, "
        "long, long, bool)",
        "void at::native::(anonymous namespace)::compute_grad_weight<c10::BFloat16, long>(long "
        "const*, c10::BFloat16 const*, long const*, long, long, long const*, long const*, "
        "at::native::(anonymous namespace)::acc_type<c10::BFloat16, true>*)",
        "void at::native::(anonymous namespace)::sum_and_scatter<c10::BFloat16, long>(long "
        "const*, c10::BFloat16*, long, long const*, long const*, at::native::(anonymous namespace)"
        "::acc_type<c10::BFloat16, true> const*, long const*, long const*, long)"}) {
    Add(pool, KernelClass::kMisc, name);
  }
}

}  // namespace

const std::vector<KernelName>& KernelNameTable() {
  // Never destroyed: string_views into it live in events until the process exits.
  static const Pool* const pool = [] {
    auto* p = new Pool;
    AddGemms(p);
    AddAttention(p);
    AddElementwise(p);
    AddReductionsAndNorms(p);
    AddOptimizer(p);
    AddNccl(p);
    AddTritonAndMisc(p);
    return p;
  }();
  return *pool;
}

}  // namespace lumos::bench
// NOLINTEND(performance-inefficient-string-concatenation)
