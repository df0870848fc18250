#include "tests/agent/cublas/cublas_sequence.h"

namespace lumos::testing {
namespace {

using schema::DataType;
using schema::GemmApi;
using schema::GemmComputeType;
using schema::GemmTranspose;

GemmTranspose RecordOp(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? GemmTranspose::kN
                           : (op == CUBLAS_OP_T ? GemmTranspose::kT : GemmTranspose::kC);
}

struct Element {
  char letter;
  DataType type;
  GemmComputeType compute;
};
constexpr Element kElements[] = {{'S', DataType::kFloat32, GemmComputeType::kFloat32},
                                 {'D', DataType::kFloat64, GemmComputeType::kFloat64},
                                 {'C', DataType::kComplexFloat32, GemmComputeType::kFloat32},
                                 {'Z', DataType::kComplexFloat64, GemmComputeType::kFloat64},
                                 {'H', DataType::kFloat16, GemmComputeType::kFloat16}};

std::vector<ExpectedGemm> BuildCalls() {
  std::vector<ExpectedGemm> calls;
  auto shaped = [&](ExpectedGemm e) {
    const int64_t i = static_cast<int64_t>(calls.size());
    if (e.m == 0) {
      e.m = 64 + i;
      e.n = 32 + 2 * i;
      e.k = 16 + 3 * i;
    }
    e.record_transa = RecordOp(e.transa);
    e.record_transb = RecordOp(e.transb);
    calls.push_back(e);
  };
  // The typed families: every element type, 32- and 64-bit.
  struct Family {
    GemmForm form;
    const char* suffix;  // After the letter.
    GemmApi api;
  };
  const Family families[] = {
      {GemmForm::kTyped, "gemm", GemmApi::kCublasGemm},
      {GemmForm::kTypedBatched, "gemmBatched", GemmApi::kCublasGemmBatched},
      {GemmForm::kTypedStrided, "gemmStridedBatched", GemmApi::kCublasGemmStridedBatched}};
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  for (const Family& family : families) {
    for (const Element& element : kElements) {
      for (bool wide : {false, true}) {
        const size_t i = calls.size();
        ExpectedGemm e;
        e.entry = std::string("cublas") + element.letter + family.suffix;
        // cublas{S,D,C,Z}gemm carry cublas_v2.h's _v2; cublasHgemm never did.
        if (family.form == GemmForm::kTyped && element.letter != 'H') e.entry += "_v2";
        if (wide) e.entry += "_64";
        e.form = family.form;
        e.element = element.letter;
        e.wide = wide;
        e.batch = family.form == GemmForm::kTyped ? 1 : 2 + static_cast<int64_t>(i % 5);
        e.transa = ops[i % 3];
        e.transb = i % 2 == 0 ? CUBLAS_OP_T : CUBLAS_OP_N;
        e.api = family.api;
        e.record_a = e.record_b = e.record_c = e.record_d = element.type;
        e.record_compute = element.compute;
        shaped(e);
      }
    }
  }
  // Operand types given: the Ex routines.
  auto ex = [&](const char* entry, GemmForm form, bool wide, GemmApi api, cudaDataType ab,
                cudaDataType c, cublasComputeType_t compute, DataType record_ab, DataType record_c,
                GemmComputeType record_compute, int64_t batch) {
    ExpectedGemm e;
    e.entry = entry;
    e.form = form;
    e.wide = wide;
    e.batch = batch;
    e.transa = CUBLAS_OP_T;
    e.transb = CUBLAS_OP_N;
    e.a_type = e.b_type = ab;
    e.c_type = e.d_type = c;
    e.compute = compute;
    e.api = api;
    e.record_a = e.record_b = record_ab;
    e.record_c = e.record_d = record_c;
    e.record_compute = record_compute;
    e.runs_on_lt = form == GemmForm::kGemmEx;
    return e;
  };
  shaped(ex("cublasSgemmEx", GemmForm::kSgemmEx, false, GemmApi::kCublasGemm, CUDA_R_16BF,
            CUDA_R_32F, CUBLAS_COMPUTE_32F, DataType::kBfloat16, DataType::kFloat32,
            GemmComputeType::kFloat32, 1));
  shaped(ex("cublasSgemmEx_64", GemmForm::kSgemmEx, true, GemmApi::kCublasGemm, CUDA_R_16F,
            CUDA_R_16F, CUBLAS_COMPUTE_32F, DataType::kFloat16, DataType::kFloat16,
            GemmComputeType::kFloat32, 1));
  shaped(ex("cublasGemmEx", GemmForm::kGemmEx, false, GemmApi::kCublasGemmEx, CUDA_R_16BF,
            CUDA_R_16BF, CUBLAS_COMPUTE_32F, DataType::kBfloat16, DataType::kBfloat16,
            GemmComputeType::kFloat32, 1));
  {
    // m beyond 32 bits: the record's extension.
    ExpectedGemm e = ex("cublasGemmEx_64", GemmForm::kGemmEx, true, GemmApi::kCublasGemmEx,
                        CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, DataType::kFloat8E4m3,
                        DataType::kBfloat16, GemmComputeType::kFloat32, 1);
    e.m = 5'000'000'000;
    e.n = 8;
    e.k = 4096;
    shaped(e);
  }
  shaped(ex("cublasGemmBatchedEx", GemmForm::kGemmBatchedEx, false, GemmApi::kCublasGemmBatchedEx,
            CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F_FAST_16F, DataType::kFloat16,
            DataType::kFloat16, GemmComputeType::kFloat32FastFloat16, 4));
  shaped(ex("cublasGemmBatchedEx_64", GemmForm::kGemmBatchedEx, true, GemmApi::kCublasGemmBatchedEx,
            CUDA_C_32F, CUDA_C_32F, CUBLAS_COMPUTE_32F_PEDANTIC, DataType::kComplexFloat32,
            DataType::kComplexFloat32, GemmComputeType::kFloat32Pedantic, 5));
  shaped(ex("cublasGemmStridedBatchedEx", GemmForm::kGemmStridedBatchedEx, false,
            GemmApi::kCublasGemmStridedBatchedEx, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I,
            DataType::kInt8, DataType::kInt32, GemmComputeType::kInt32, 7));
  shaped(ex("cublasGemmStridedBatchedEx_64", GemmForm::kGemmStridedBatchedEx, true,
            GemmApi::kCublasGemmStridedBatchedEx, CUDA_R_64F, CUDA_R_64F,
            CUBLAS_COMPUTE_64F_PEDANTIC, DataType::kFloat64, DataType::kFloat64,
            GemmComputeType::kFloat64Pedantic, 3));
  {
    // An invalid call: the fake refuses it, the record keeps its status and reads m as 0.
    ExpectedGemm e = ex("cublasGemmEx", GemmForm::kGemmEx, false, GemmApi::kCublasGemmEx,
                        CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, DataType::kFloat32,
                        DataType::kFloat32, GemmComputeType::kFloat32FastTf32, 1);
    e.m = -1;
    e.n = 5;
    e.k = 6;
    e.expected_status = CUBLAS_STATUS_INVALID_VALUE;
    e.runs_on_lt = false;
    shaped(e);
  }
  // cuBLASLt: the problem only in the descriptor and the layouts.
  {
    ExpectedGemm e;
    e.entry = "cublasLtMatmul";
    e.form = GemmForm::kLtMatmul;
    e.m = 256;
    e.n = 128;
    e.k = 512;
    e.batch = 3;
    e.transa = CUBLAS_OP_T;
    e.transb = CUBLAS_OP_N;
    e.a_type = e.b_type = CUDA_R_8F_E4M3;
    e.c_type = CUDA_R_16BF;
    e.d_type = CUDA_R_8F_E5M2;
    e.compute = CUBLAS_COMPUTE_32F;
    e.api = GemmApi::kCublasltMatmul;
    e.record_a = e.record_b = DataType::kFloat8E4m3;
    e.record_c = DataType::kBfloat16;
    e.record_d = DataType::kFloat8E5m2;
    e.record_compute = GemmComputeType::kFloat32;
    shaped(e);
    e.m = 1024;
    e.n = 64;
    e.k = 4096;
    e.batch = 1;
    e.transa = CUBLAS_OP_N;
    e.transb = CUBLAS_OP_T;
    e.a_type = e.b_type = CUDA_R_16BF;
    e.c_type = e.d_type = CUDA_R_32F;
    e.lt_shared_cd = true;
    e.compute = CUBLAS_COMPUTE_32F_FAST_16BF;
    e.record_a = e.record_b = DataType::kBfloat16;
    e.record_c = e.record_d = DataType::kFloat32;
    e.record_compute = GemmComputeType::kFloat32FastBfloat16;
    shaped(e);
  }
  return calls;
}

template <typename T, typename Int>
cublasStatus_t CallTyped(void* fn, cublasHandle_t h, const ExpectedGemm& e) {
  using F = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int, Int,
                               const T*, const T*, Int, const T*, Int, const T*, T*, Int);
  return reinterpret_cast<F>(fn)(h, e.transa, e.transb, static_cast<Int>(e.m),
                                 static_cast<Int>(e.n), static_cast<Int>(e.k), nullptr, nullptr,
                                 static_cast<Int>(e.m), nullptr, static_cast<Int>(e.k), nullptr,
                                 nullptr, static_cast<Int>(e.m));
}

template <typename T, typename Int>
cublasStatus_t CallTypedBatched(void* fn, cublasHandle_t h, const ExpectedGemm& e) {
  using F = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int, Int,
                               const T*, const T* const[], Int, const T* const[], Int, const T*,
                               T* const[], Int, Int);
  return reinterpret_cast<F>(fn)(h, e.transa, e.transb, static_cast<Int>(e.m),
                                 static_cast<Int>(e.n), static_cast<Int>(e.k), nullptr, nullptr,
                                 static_cast<Int>(e.m), nullptr, static_cast<Int>(e.k), nullptr,
                                 nullptr, static_cast<Int>(e.m), static_cast<Int>(e.batch));
}

template <typename T, typename Int>
cublasStatus_t CallTypedStrided(void* fn, cublasHandle_t h, const ExpectedGemm& e) {
  using F = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int, Int,
                               const T*, const T*, Int, long long int, const T*, Int, long long int,
                               const T*, T*, Int, long long int, Int);
  return reinterpret_cast<F>(fn)(
      h, e.transa, e.transb, static_cast<Int>(e.m), static_cast<Int>(e.n), static_cast<Int>(e.k),
      nullptr, nullptr, static_cast<Int>(e.m), 0, nullptr, static_cast<Int>(e.k), 0, nullptr,
      nullptr, static_cast<Int>(e.m), 0, static_cast<Int>(e.batch));
}

// Dispatches a typed call on its element type and width.
template <typename Int>
cublasStatus_t CallTypedAny(void* fn, cublasHandle_t h, const ExpectedGemm& e) {
  auto call = [&](auto tag) -> cublasStatus_t {
    using T = decltype(tag);
    switch (e.form) {
      case GemmForm::kTyped:
        return CallTyped<T, Int>(fn, h, e);
      case GemmForm::kTypedBatched:
        return CallTypedBatched<T, Int>(fn, h, e);
      default:
        return CallTypedStrided<T, Int>(fn, h, e);
    }
  };
  switch (e.element) {
    case 'S':
      return call(float{});
    case 'D':
      return call(double{});
    case 'C':
      return call(cuComplex{});
    case 'Z':
      return call(cuDoubleComplex{});
    default:
      return call(__half{});
  }
}

template <typename Int>
cublasStatus_t CallEx(void* fn, cublasHandle_t h, const ExpectedGemm& e) {
  const Int m = static_cast<Int>(e.m), n = static_cast<Int>(e.n), k = static_cast<Int>(e.k);
  const Int batch = static_cast<Int>(e.batch);
  switch (e.form) {
    case GemmForm::kSgemmEx: {
      using F = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int,
                                   Int, const float*, const void*, cudaDataType, Int, const void*,
                                   cudaDataType, Int, const float*, void*, cudaDataType, Int);
      return reinterpret_cast<F>(fn)(h, e.transa, e.transb, m, n, k, nullptr, nullptr, e.a_type, m,
                                     nullptr, e.b_type, k, nullptr, nullptr, e.c_type, m);
    }
    case GemmForm::kGemmEx: {
      using F = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int,
                                   Int, const void*, const void*, cudaDataType, Int, const void*,
                                   cudaDataType, Int, const void*, void*, cudaDataType, Int,
                                   cublasComputeType_t, cublasGemmAlgo_t);
      return reinterpret_cast<F>(fn)(h, e.transa, e.transb, m, n, k, nullptr, nullptr, e.a_type, m,
                                     nullptr, e.b_type, k, nullptr, nullptr, e.c_type, m, e.compute,
                                     CUBLAS_GEMM_DEFAULT);
    }
    case GemmForm::kGemmBatchedEx: {
      using F =
          cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int, Int,
                             const void*, const void* const[], cudaDataType, Int,
                             const void* const[], cudaDataType, Int, const void*, void* const[],
                             cudaDataType, Int, Int, cublasComputeType_t, cublasGemmAlgo_t);
      return reinterpret_cast<F>(fn)(h, e.transa, e.transb, m, n, k, nullptr, nullptr, e.a_type, m,
                                     nullptr, e.b_type, k, nullptr, nullptr, e.c_type, m, batch,
                                     e.compute, CUBLAS_GEMM_DEFAULT);
    }
    default: {
      using F = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int,
                                   Int, const void*, const void*, cudaDataType, Int, long long int,
                                   const void*, cudaDataType, Int, long long int, const void*,
                                   void*, cudaDataType, Int, long long int, Int,
                                   cublasComputeType_t, cublasGemmAlgo_t);
      return reinterpret_cast<F>(fn)(h, e.transa, e.transb, m, n, k, nullptr, nullptr, e.a_type, m,
                                     0, nullptr, e.b_type, k, 0, nullptr, nullptr, e.c_type, m, 0,
                                     batch, e.compute, CUBLAS_GEMM_DEFAULT);
    }
  }
}

struct LtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set;
  decltype(&cublasLtMatmul) matmul;
};

cublasStatus_t CallLt(const LtApi& lt, const ExpectedGemm& e) {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  lt.create(&handle);
  lt.desc_create(&desc, e.compute, CUDA_R_32F);
  const int32_t transa = e.transa, transb = e.transb;
  lt.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa));
  lt.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb));
  const auto m = static_cast<uint64_t>(e.m), n = static_cast<uint64_t>(e.n),
             k = static_cast<uint64_t>(e.k);
  const bool ta = e.transa != CUBLAS_OP_N, tb = e.transb != CUBLAS_OP_N;
  lt.layout_create(&a, e.a_type, ta ? k : m, ta ? m : k, static_cast<int64_t>(ta ? k : m));
  lt.layout_create(&b, e.b_type, tb ? n : k, tb ? k : n, static_cast<int64_t>(tb ? n : k));
  lt.layout_create(&c, e.c_type, m, n, static_cast<int64_t>(m));
  d = c;
  if (!e.lt_shared_cd) lt.layout_create(&d, e.d_type, m, n, static_cast<int64_t>(m));
  const int32_t batch = static_cast<int32_t>(e.batch);
  for (cublasLtMatrixLayout_t layout : {a, b, c, d}) {
    lt.layout_set(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch));
  }
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a handle the fake never dereferences.
  auto* stream = reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(kSequenceLtStream));
  const cublasStatus_t status = lt.matmul(handle, desc, nullptr, nullptr, a, nullptr, b, nullptr,
                                          nullptr, c, nullptr, d, nullptr, nullptr, 0, stream);
  if (d != c) lt.layout_destroy(d);
  lt.layout_destroy(c);
  lt.layout_destroy(b);
  lt.layout_destroy(a);
  lt.desc_destroy(desc);
  lt.destroy(handle);
  return status;
}

template <typename Fn>
bool Find(CublasLookup lookup, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(lookup(name));
  return *out != nullptr;
}

}  // namespace

const std::vector<ExpectedGemm>& ExpectedGemmCalls() {
  static const std::vector<ExpectedGemm> calls = BuildCalls();
  return calls;
}

int RunCublasSequence(CublasLookup lookup, FILE* out) {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  LtApi lt{};
  const bool found =
      Find(lookup, "cublasCreate_v2", &create) && Find(lookup, "cublasDestroy_v2", &destroy) &&
      Find(lookup, "cublasSetMathMode", &set_math_mode) &&
      Find(lookup, "cublasSetStream_v2", &set_stream) &&
      Find(lookup, "cublasLtCreate", &lt.create) && Find(lookup, "cublasLtDestroy", &lt.destroy) &&
      Find(lookup, "cublasLtMatmulDescCreate", &lt.desc_create) &&
      Find(lookup, "cublasLtMatmulDescDestroy", &lt.desc_destroy) &&
      Find(lookup, "cublasLtMatmulDescSetAttribute", &lt.desc_set) &&
      Find(lookup, "cublasLtMatrixLayoutCreate", &lt.layout_create) &&
      Find(lookup, "cublasLtMatrixLayoutDestroy", &lt.layout_destroy) &&
      Find(lookup, "cublasLtMatrixLayoutSetAttribute", &lt.layout_set) &&
      Find(lookup, "cublasLtMatmul", &lt.matmul);
  if (!found) {
    std::fprintf(out, "a cuBLAS helper is missing\n");
    return 3;
  }
  cublasHandle_t handle = nullptr;
  create(&handle);
  set_math_mode(handle, kSequenceMathMode);
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a handle the fake never dereferences.
  set_stream(handle, reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(kSequenceStream)));
  for (const ExpectedGemm& e : ExpectedGemmCalls()) {
    void* fn = lookup(e.entry.c_str());
    if (fn == nullptr) {
      std::fprintf(out, "%s missing\n", e.entry.c_str());
      return 3;
    }
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    switch (e.form) {
      case GemmForm::kTyped:
      case GemmForm::kTypedBatched:
      case GemmForm::kTypedStrided:
        status = e.wide ? CallTypedAny<int64_t>(fn, handle, e) : CallTypedAny<int>(fn, handle, e);
        break;
      case GemmForm::kLtMatmul:
        status = CallLt(lt, e);
        break;
      default:
        status = e.wide ? CallEx<int64_t>(fn, handle, e) : CallEx<int>(fn, handle, e);
        break;
    }
    std::fprintf(out, "%s %d\n", e.entry.c_str(), static_cast<int>(status));
  }
  destroy(handle);
  std::fflush(out);
  return 0;
}

}  // namespace lumos::testing
