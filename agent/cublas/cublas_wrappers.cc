// Design: LD_PRELOAD wrappers of the cuBLAS and cuBLASLt GEMM entry points (channel `cublas`).
// The agent never NEEDs libcublas: each wrapper finds the real function lazily, once, in this
// order (docs/capture-notes.md §7, the NCCL wrappers' scheme):
//   1. dlsym(RTLD_NEXT, name)                      the library in the global scope;
//   2. dlopen(SONAME, RTLD_NOLOAD) + dlsym          a library in a local dlopen group (PyTorch
//      loads libtorch_cuda RTLD_LOCAL, and with it libcublas.so.13 / libcublasLt.so.13, or the
//      .so.12 of a CUDA 12 build), where RTLD_NEXT finds nothing;
//   3. the calling library's own scope: dladdr(return address) + dlopen(it, RTLD_NOLOAD) +
//      dlsym, which finds whatever that library links under any name (never this library).
// libcublas calls cublasLt* of libcublasLt through the PLT, so the agent's cublasLtMatmul
// interposes there too: a GEMM inside a wrapped call (cublasGemmEx running on cuBLASLt) is
// passed straight through by the reentrancy guard, so each outermost call is one record. The
// helpers a record needs (cublasGetMathMode and cublasGetStream_v2 for cuBLAS, the descriptor
// and layout getters for cuBLASLt) come from the same library object as the real function
// (dladdr), so a descriptor is never read by another copy of cuBLASLt.
// Racing first calls resolve the same pointer; the cache is one atomic per function. A function
// that cannot be found returns CUBLAS_STATUS_NOT_INITIALIZED, with one warning per process.
//
// Each wrapper calls the real function and, when the cublas channel is on and this is the
// thread's outermost GEMM call, records one GemmCall: the host span of the call (two
// CLOCK_MONOTONIC reads around it), m, n, k, batch count, transposes, operand types, compute
// type, the handle's math mode and stream (cuBLAS) or the descriptor and layouts read after the
// call returned (cuBLASLt), and the call's status, passed back unchanged. Recorded entry points
// (each also as _64): cublas{S,D,C,Z}gemm_v2, cublasHgemm, cublasSgemmEx,
// cublas{S,D,C,Z,H}gemmBatched, cublas{S,D,C,Z,H}gemmStridedBatched, cublasGemmEx,
// cublasGemmBatchedEx, cublasGemmStridedBatchedEx; cublasLtMatmul. Not: the legacy cublas.h
// API (no handle), cublas*gemm3m, cublas*gemmGroupedBatched (a shape per group).
// The prototypes are cuBLAS's own (cublas_api.h, cublasLt.h): a definition here that differs
// from the header's declaration does not compile.
// Hot path (STYLE.md 5): one relaxed load of the channel word, a thread-local guard, two vDSO
// clock reads, two cuBLAS getters (cuBLAS) or up to eleven cuBLASLt getters (cuBLASLt), one
// ring push; docs/performance.md has the cost. The agent starts at the first call; an
// exception there never reaches the caller (one warning; the channel goes off).
#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <iterator>

#include "agent/cublas/cublas_channel.h"
#include "agent/runtime/agent_runtime.h"
#include "base/logging.h"

namespace lumos::agent::cublas {
namespace {

// clang-format reflows X-macro lists differently on every pass (as in schema/enums.h).
// clang-format off
#define LUMOS_CUBLAS_FUNCTIONS(X)                                                            \
  X(Sgemm_v2) X(Sgemm_v2_64) X(Dgemm_v2) X(Dgemm_v2_64) X(Cgemm_v2) X(Cgemm_v2_64)           \
  X(Zgemm_v2) X(Zgemm_v2_64) X(Hgemm) X(Hgemm_64) X(SgemmEx) X(SgemmEx_64)                   \
  X(SgemmBatched) X(SgemmBatched_64) X(DgemmBatched) X(DgemmBatched_64) X(CgemmBatched)      \
  X(CgemmBatched_64) X(ZgemmBatched) X(ZgemmBatched_64) X(HgemmBatched) X(HgemmBatched_64)   \
  X(SgemmStridedBatched) X(SgemmStridedBatched_64) X(DgemmStridedBatched)                    \
  X(DgemmStridedBatched_64) X(CgemmStridedBatched) X(CgemmStridedBatched_64)                 \
  X(ZgemmStridedBatched) X(ZgemmStridedBatched_64) X(HgemmStridedBatched)                    \
  X(HgemmStridedBatched_64) X(GemmEx) X(GemmEx_64) X(GemmBatchedEx) X(GemmBatchedEx_64)      \
  X(GemmStridedBatchedEx) X(GemmStridedBatchedEx_64)
// clang-format on

enum class Fn : int {
#define LUMOS_CUBLAS_ENUM(name) k##name,
  LUMOS_CUBLAS_FUNCTIONS(LUMOS_CUBLAS_ENUM)
#undef LUMOS_CUBLAS_ENUM
      kLtMatmul,
  kCount
};

constexpr const char* kFnNames[] = {
#define LUMOS_CUBLAS_NAME(name) "cublas" #name,
    LUMOS_CUBLAS_FUNCTIONS(LUMOS_CUBLAS_NAME)
#undef LUMOS_CUBLAS_NAME
        "cublasLtMatmul",
};
static_assert(std::size(kFnNames) == static_cast<size_t>(Fn::kCount));

constexpr const char* kCublasSonames[] = {"libcublas.so.13", "libcublas.so.12"};
constexpr const char* kCublasLtSonames[] = {"libcublasLt.so.13", "libcublasLt.so.12"};

std::atomic<void*> g_real[static_cast<int>(Fn::kCount)];
std::atomic<bool> g_warned_unresolved{false};

// Helpers from the library object of the first real function found of each library.
std::atomic<bool> g_cublas_helpers_resolved{false};
std::atomic<decltype(&cublasGetMathMode)> g_get_math_mode{nullptr};
std::atomic<decltype(&cublasGetStream_v2)> g_get_stream{nullptr};
std::atomic<bool> g_lt_helpers_resolved{false};
std::atomic<decltype(&cublasLtMatmulDescGetAttribute)> g_lt_desc_get{nullptr};
std::atomic<decltype(&cublasLtMatrixLayoutGetAttribute)> g_lt_layout_get{nullptr};

// The object holding `code` (a real function, or the caller's return address), NOLOAD-opened;
// null when dladdr cannot name it. The caller dlclose()s it.
void* OpenObjectOf(const void* code) {
  Dl_info info{};
  if (code == nullptr || dladdr(code, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

bool IsOurs(const void* symbol) {
  Dl_info mine{}, theirs{};
  static const int anchor = 0;
  return symbol != nullptr && dladdr(&anchor, &mine) != 0 && dladdr(symbol, &theirs) != 0 &&
         mine.dli_fbase == theirs.dli_fbase;
}

void ResolveHelpers(void* real, bool lt) {
  void* object = OpenObjectOf(real);
  // Relaxed: each pointer is the whole message (code lives behind it); a racing thread that
  // misses them records "not known" for one call.
  if (lt) {
    if (object != nullptr) {
      g_lt_desc_get.store(reinterpret_cast<decltype(&cublasLtMatmulDescGetAttribute)>(
                              dlsym(object, "cublasLtMatmulDescGetAttribute")),
                          std::memory_order_relaxed);
      g_lt_layout_get.store(reinterpret_cast<decltype(&cublasLtMatrixLayoutGetAttribute)>(
                                dlsym(object, "cublasLtMatrixLayoutGetAttribute")),
                            std::memory_order_relaxed);
    }
    g_lt_helpers_resolved.store(true, std::memory_order_release);
  } else {
    if (object != nullptr) {
      g_get_math_mode.store(
          reinterpret_cast<decltype(&cublasGetMathMode)>(dlsym(object, "cublasGetMathMode")),
          std::memory_order_relaxed);
      g_get_stream.store(
          reinterpret_cast<decltype(&cublasGetStream_v2)>(dlsym(object, "cublasGetStream_v2")),
          std::memory_order_relaxed);
    }
    g_cublas_helpers_resolved.store(true, std::memory_order_release);
  }
  if (object != nullptr) dlclose(object);  // Drops NOLOAD's reference; the library stays.
}

void* ResolveSlow(Fn fn, const void* caller) {
  const char* name = kFnNames[static_cast<int>(fn)];
  const bool lt = fn == Fn::kLtMatmul;
  void* real = dlsym(RTLD_NEXT, name);
  if (real == nullptr) {
    for (const char* soname : lt ? kCublasLtSonames : kCublasSonames) {
      if (void* library = dlopen(soname, RTLD_NOW | RTLD_NOLOAD)) {
        real = dlsym(library, name);
        dlclose(library);  // Drops only the reference NOLOAD took.
        if (real != nullptr) break;
      }
    }
  }
  if (real == nullptr) {
    if (void* library = OpenObjectOf(caller)) {
      real = dlsym(library, name);
      dlclose(library);
      if (IsOurs(real)) real = nullptr;  // The caller's scope held the agent itself.
    }
  }
  if (real == nullptr) {
    if (!g_warned_unresolved.exchange(true)) {
      LUMOS_LOG(Warn,
                "cublas wrappers: %s not found in any loaded %s (RTLD_NEXT, %s, the caller's "
                "libraries); cuBLAS calls return CUBLAS_STATUS_NOT_INITIALIZED",
                name, lt ? "libcublasLt" : "libcublas",
                lt ? "libcublasLt.so.13/.12" : "libcublas.so.13/.12");
    }
    return nullptr;
  }
  std::atomic<bool>& resolved = lt ? g_lt_helpers_resolved : g_cublas_helpers_resolved;
  if (!resolved.load(std::memory_order_acquire)) ResolveHelpers(real, lt);
  // Relaxed: the pointer is the whole message (code, not data, lives behind it).
  g_real[static_cast<int>(fn)].store(real, std::memory_order_relaxed);
  return real;
}

template <typename FnPtr>
FnPtr Real(Fn which, const void* caller) {
  void* real = g_real[static_cast<int>(which)].load(std::memory_order_relaxed);
  if (real == nullptr) real = ResolveSlow(which, caller);
  return reinterpret_cast<FnPtr>(real);
}

// Reentrancy guard (STYLE.md 5.8): a GEMM call from inside a wrapped one (cuBLAS on cuBLASLt)
// is passed straight through.
thread_local int t_depth = 0;
struct Reentry {
  Reentry() { ++t_depth; }
  ~Reentry() { --t_depth; }
  Reentry(const Reentry&) = delete;
  Reentry& operator=(const Reentry&) = delete;
};

bool Recording() { return t_depth == 0 && CublasChannelOn(); }

// The handle's math mode and stream, from the real library's getters.
void ReadHandle(cublasHandle_t handle, GemmProblem* problem) {
  if (auto get_math_mode = g_get_math_mode.load(std::memory_order_relaxed)) {
    cublasMath_t mode = CUBLAS_DEFAULT_MATH;
    if (get_math_mode(handle, &mode) == CUBLAS_STATUS_SUCCESS) {
      problem->math_mode = MathModeFromCublas(mode);
    }
  }
  if (auto get_stream = g_get_stream.load(std::memory_order_relaxed)) {
    cudaStream_t stream = nullptr;
    if (get_stream(handle, &stream) == CUBLAS_STATUS_SUCCESS) {
      problem->stream_id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(stream));
    }
  }
}

// Calls the real cuBLAS function `which` (its type: this one's arguments) and records `problem`.
template <Fn kWhich, typename... Rest>
cublasStatus_t CallCublas(const void* caller, GemmProblem problem, cublasHandle_t handle,
                          Rest... rest) {
  using FnPtr = cublasStatus_t (*)(cublasHandle_t, Rest...);
  FnPtr real = Real<FnPtr>(kWhich, caller);
  if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!Recording()) return real(handle, rest...);
  Reentry guard;
  const int64_t start_ns = MonotonicNowNs();
  const cublasStatus_t status = real(handle, rest...);
  const int64_t end_ns = MonotonicNowNs();
  ReadHandle(handle, &problem);
  PushGemmRecord(problem, start_ns, end_ns, static_cast<int32_t>(status));
  return status;
}

// A problem from a call's arguments (batch 1 unless given).
GemmProblem Problem(schema::GemmApi api, cublasOperation_t transa, cublasOperation_t transb,
                    int64_t m, int64_t n, int64_t k, schema::DataType a_type,
                    schema::DataType b_type, schema::DataType c_type,
                    schema::GemmComputeType compute_type, int64_t batch_count = 1) {
  return GemmProblem{.api = api,
                     .m = Dimension(m),
                     .n = Dimension(n),
                     .k = Dimension(k),
                     .batch_count = Dimension(batch_count),
                     .transa = TransposeFromCublas(transa),
                     .transb = TransposeFromCublas(transb),
                     .a_type = a_type,
                     .b_type = b_type,
                     .c_type = c_type,
                     .d_type = c_type,
                     .compute_type = compute_type};
}

}  // namespace
}  // namespace lumos::agent::cublas

// ---- the exported wrappers (lumos_agent.map lists them) ----

namespace lc = lumos::agent::cublas;
using lc::Fn;
using lumos::schema::DataType;
using lumos::schema::GemmApi;
using lumos::schema::GemmComputeType;

#define LUMOS_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))
#define LUMOS_CALLER __builtin_return_address(0)

// Typed routines: every operand of type T (schema DTYPE), computed as COMPUTE (what cuBLAS
// documents for the routine; the handle's math mode, recorded too, may allow TF32).
// T is a type in a declaration ("T* C"), which cannot take parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define LUMOS_TYPED_GEMM(NAME, FN, T, INT, DTYPE, COMPUTE)                                        \
  LUMOS_CUBLAS_EXPORT cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa,        \
                                          cublasOperation_t transb, INT m, INT n, INT k,          \
                                          const T* alpha, const T* A, INT lda, const T* B,        \
                                          INT ldb, const T* beta, T* C, INT ldc) {                \
    return lc::CallCublas<Fn::FN>(                                                                \
        LUMOS_CALLER,                                                                             \
        lc::Problem(GemmApi::kCublasGemm, transa, transb, m, n, k, DTYPE, DTYPE, DTYPE, COMPUTE), \
        handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                    \
  }

#define LUMOS_TYPED_GEMM_BATCHED(NAME, FN, T, INT, DTYPE, COMPUTE)                               \
  LUMOS_CUBLAS_EXPORT cublasStatus_t NAME(                                                       \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n,   \
      INT k, const T* alpha, const T* const Aarray[], INT lda, const T* const Barray[], INT ldb, \
      const T* beta, T* const Carray[], INT ldc, INT batchCount) {                               \
    return lc::CallCublas<Fn::FN>(LUMOS_CALLER,                                                  \
                                  lc::Problem(GemmApi::kCublasGemmBatched, transa, transb, m, n, \
                                              k, DTYPE, DTYPE, DTYPE, COMPUTE, batchCount),      \
                                  handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray,   \
                                  ldb, beta, Carray, ldc, batchCount);                           \
  }

#define LUMOS_TYPED_GEMM_STRIDED(NAME, FN, T, INT, DTYPE, COMPUTE)                                 \
  LUMOS_CUBLAS_EXPORT cublasStatus_t NAME(                                                         \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n,     \
      INT k, const T* alpha, const T* A, INT lda, long long int strideA, const T* B, INT ldb,      \
      long long int strideB, const T* beta, T* C, INT ldc, long long int strideC,                  \
      INT batchCount) {                                                                            \
    return lc::CallCublas<Fn::FN>(LUMOS_CALLER,                                                    \
                                  lc::Problem(GemmApi::kCublasGemmStridedBatched, transa, transb,  \
                                              m, n, k, DTYPE, DTYPE, DTYPE, COMPUTE, batchCount),  \
                                  handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, \
                                  strideB, beta, C, ldc, strideC, batchCount);                     \
  }

// NOLINTEND(bugprone-macro-parentheses)

// The five element types, each with its 32-bit and 64-bit (_64) entry point.
#define LUMOS_TYPED_FAMILY(MACRO, S_NAME, D_NAME, C_NAME, Z_NAME, H_NAME)                         \
  MACRO(cublas##S_NAME, k##S_NAME, float, int, DataType::kFloat32, GemmComputeType::kFloat32)     \
  MACRO(cublas##S_NAME##_64, k##S_NAME##_64, float, int64_t, DataType::kFloat32,                  \
        GemmComputeType::kFloat32)                                                                \
  MACRO(cublas##D_NAME, k##D_NAME, double, int, DataType::kFloat64, GemmComputeType::kFloat64)    \
  MACRO(cublas##D_NAME##_64, k##D_NAME##_64, double, int64_t, DataType::kFloat64,                 \
        GemmComputeType::kFloat64)                                                                \
  MACRO(cublas##C_NAME, k##C_NAME, cuComplex, int, DataType::kComplexFloat32,                     \
        GemmComputeType::kFloat32)                                                                \
  MACRO(cublas##C_NAME##_64, k##C_NAME##_64, cuComplex, int64_t, DataType::kComplexFloat32,       \
        GemmComputeType::kFloat32)                                                                \
  MACRO(cublas##Z_NAME, k##Z_NAME, cuDoubleComplex, int, DataType::kComplexFloat64,               \
        GemmComputeType::kFloat64)                                                                \
  MACRO(cublas##Z_NAME##_64, k##Z_NAME##_64, cuDoubleComplex, int64_t, DataType::kComplexFloat64, \
        GemmComputeType::kFloat64)                                                                \
  MACRO(cublas##H_NAME, k##H_NAME, __half, int, DataType::kFloat16, GemmComputeType::kFloat16)    \
  MACRO(cublas##H_NAME##_64, k##H_NAME##_64, __half, int64_t, DataType::kFloat16,                 \
        GemmComputeType::kFloat16)

LUMOS_TYPED_FAMILY(LUMOS_TYPED_GEMM, Sgemm_v2, Dgemm_v2, Cgemm_v2, Zgemm_v2, Hgemm)
LUMOS_TYPED_FAMILY(LUMOS_TYPED_GEMM_BATCHED, SgemmBatched, DgemmBatched, CgemmBatched, ZgemmBatched,
                   HgemmBatched)
LUMOS_TYPED_FAMILY(LUMOS_TYPED_GEMM_STRIDED, SgemmStridedBatched, DgemmStridedBatched,
                   CgemmStridedBatched, ZgemmStridedBatched, HgemmStridedBatched)

// cublasSgemmEx: float scalars and compute, operand types given.
#define LUMOS_SGEMM_EX(NAME, FN, INT)                                                           \
  LUMOS_CUBLAS_EXPORT cublasStatus_t NAME(                                                      \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n,  \
      INT k, const float* alpha, const void* A, cudaDataType Atype, INT lda, const void* B,     \
      cudaDataType Btype, INT ldb, const float* beta, void* C, cudaDataType Ctype, INT ldc) {   \
    return lc::CallCublas<Fn::FN>(                                                              \
        LUMOS_CALLER,                                                                           \
        lc::Problem(GemmApi::kCublasGemm, transa, transb, m, n, k, lc::DataTypeFromCuda(Atype), \
                    lc::DataTypeFromCuda(Btype), lc::DataTypeFromCuda(Ctype),                   \
                    GemmComputeType::kFloat32),                                                 \
        handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,   \
        ldc);                                                                                   \
  }
LUMOS_SGEMM_EX(cublasSgemmEx, kSgemmEx, int)
LUMOS_SGEMM_EX(cublasSgemmEx_64, kSgemmEx_64, int64_t)

#define LUMOS_GEMM_EX(NAME, FN, INT)                                                               \
  LUMOS_CUBLAS_EXPORT cublasStatus_t NAME(                                                         \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n,     \
      INT k, const void* alpha, const void* A, cudaDataType Atype, INT lda, const void* B,         \
      cudaDataType Btype, INT ldb, const void* beta, void* C, cudaDataType Ctype, INT ldc,         \
      cublasComputeType_t computeType, cublasGemmAlgo_t algo) {                                    \
    return lc::CallCublas<Fn::FN>(                                                                 \
        LUMOS_CALLER,                                                                              \
        lc::Problem(GemmApi::kCublasGemmEx, transa, transb, m, n, k, lc::DataTypeFromCuda(Atype),  \
                    lc::DataTypeFromCuda(Btype), lc::DataTypeFromCuda(Ctype),                      \
                    lc::ComputeTypeFromCublas(computeType)),                                       \
        handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, \
        computeType, algo);                                                                        \
  }
LUMOS_GEMM_EX(cublasGemmEx, kGemmEx, int)
LUMOS_GEMM_EX(cublasGemmEx_64, kGemmEx_64, int64_t)

#define LUMOS_GEMM_BATCHED_EX(NAME, FN, INT)                                                   \
  LUMOS_CUBLAS_EXPORT cublasStatus_t NAME(                                                     \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
      INT k, const void* alpha, const void* const Aarray[], cudaDataType Atype, INT lda,       \
      const void* const Barray[], cudaDataType Btype, INT ldb, const void* beta,               \
      void* const Carray[], cudaDataType Ctype, INT ldc, INT batchCount,                       \
      cublasComputeType_t computeType, cublasGemmAlgo_t algo) {                                \
    return lc::CallCublas<Fn::FN>(                                                             \
        LUMOS_CALLER,                                                                          \
        lc::Problem(GemmApi::kCublasGemmBatchedEx, transa, transb, m, n, k,                    \
                    lc::DataTypeFromCuda(Atype), lc::DataTypeFromCuda(Btype),                  \
                    lc::DataTypeFromCuda(Ctype), lc::ComputeTypeFromCublas(computeType),       \
                    batchCount),                                                               \
        handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta,  \
        Carray, Ctype, ldc, batchCount, computeType, algo);                                    \
  }
LUMOS_GEMM_BATCHED_EX(cublasGemmBatchedEx, kGemmBatchedEx, int)
LUMOS_GEMM_BATCHED_EX(cublasGemmBatchedEx_64, kGemmBatchedEx_64, int64_t)

#define LUMOS_GEMM_STRIDED_BATCHED_EX(NAME, FN, INT)                                               \
  LUMOS_CUBLAS_EXPORT cublasStatus_t NAME(                                                         \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n,     \
      INT k, const void* alpha, const void* A, cudaDataType Atype, INT lda, long long int strideA, \
      const void* B, cudaDataType Btype, INT ldb, long long int strideB, const void* beta,         \
      void* C, cudaDataType Ctype, INT ldc, long long int strideC, INT batchCount,                 \
      cublasComputeType_t computeType, cublasGemmAlgo_t algo) {                                    \
    return lc::CallCublas<Fn::FN>(                                                                 \
        LUMOS_CALLER,                                                                              \
        lc::Problem(GemmApi::kCublasGemmStridedBatchedEx, transa, transb, m, n, k,                 \
                    lc::DataTypeFromCuda(Atype), lc::DataTypeFromCuda(Btype),                      \
                    lc::DataTypeFromCuda(Ctype), lc::ComputeTypeFromCublas(computeType),           \
                    batchCount),                                                                   \
        handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,    \
        beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);                              \
  }
LUMOS_GEMM_STRIDED_BATCHED_EX(cublasGemmStridedBatchedEx, kGemmStridedBatchedEx, int)
LUMOS_GEMM_STRIDED_BATCHED_EX(cublasGemmStridedBatchedEx_64, kGemmStridedBatchedEx_64, int64_t)

// cuBLASLt: the problem is in the descriptor and the layouts, read after the call returned
// (inputs cuBLASLt does not change), with the getters of the library that ran it.
LUMOS_CUBLAS_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream) {
  using FnPtr = decltype(&cublasLtMatmul);
  FnPtr real = lc::Real<FnPtr>(Fn::kLtMatmul, LUMOS_CALLER);
  if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!lc::Recording()) {
    return real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
                workspace, workspaceSizeInBytes, stream);
  }
  lc::Reentry guard;
  const int64_t start_ns = lumos::agent::MonotonicNowNs();
  const cublasStatus_t status =
      real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
           workspace, workspaceSizeInBytes, stream);
  const int64_t end_ns = lumos::agent::MonotonicNowNs();
  lc::GemmProblem problem;
  problem.stream_id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(stream));
  const lc::LtGetters getters{.desc_get = lc::g_lt_desc_get.load(std::memory_order_relaxed),
                              .layout_get = lc::g_lt_layout_get.load(std::memory_order_relaxed)};
  lc::ReadLtProblem(getters, computeDesc, Adesc, Bdesc, Cdesc, Ddesc, &problem);
  lc::PushGemmRecord(problem, start_ns, end_ns, static_cast<int32_t>(status));
  return status;
}
