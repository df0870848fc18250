// The cublas channel's real code (docs/performance.md "cuBLAS channel"): the LD_PRELOAD
// wrappers (agent/cublas/cublas_wrappers.cc, compiled into this binary so that its cublasX
// interpose on the fake libcublas.so.13 / libcublasLt.so.13 linked below, as the preloaded agent
// does on the real ones), ns per call through the wrapper against the fake's function called
// directly (found with RTLD_NEXT, as the wrapper finds it). The difference is what the wrapper
// adds: a relaxed channel load, a thread-local reentrancy guard, two CLOCK_MONOTONIC reads, the
// handle's math mode and stream (two getter calls into the fake) or the cuBLASLt descriptor and
// layouts (up to eleven getter calls into the fake, which copy an attribute each as cuBLASLt's
// do), and one ring push. The fakes do no GEMM; a real call adds cuBLAS's own host work, so
// the ratio to a real call is smaller than to the fake. ReadLtProblem is also timed alone over
// the fake's getters and over the real libcublasLt.so.13's (host calls: no GPU needed).
// Pushes go into the real agent's rings (bench/channel_bench_agent.h).
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cublas_api.h>
#include <dlfcn.h>

#include <cstdint>

#include "agent/cublas/cublas_channel.h"
#include "bench/channel_bench_agent.h"

namespace lumos::agent {
namespace {

using SgemmFn = decltype(&cublasSgemm_v2);
using LtMatmulFn = decltype(&cublasLtMatmul);

cudaStream_t BenchStream() {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a handle the fakes never dereference.
  return reinterpret_cast<cudaStream_t>(uintptr_t{0x7f00'0000'2000});
}

cublasHandle_t Handle() {
  static cublasHandle_t handle = [] {
    cublasHandle_t created = nullptr;
    if (cublasCreate_v2(&created) != CUBLAS_STATUS_SUCCESS) return cublasHandle_t{nullptr};
    cublasSetStream_v2(created, BenchStream());
    return created;
  }();
  return handle;
}

// A bf16 matmul, C = A^T B, 4096 x 1024 x 8192, strided batch 2: what a training step's
// cuBLASLt calls describe.
struct LtProblem {
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  bool ok = false;
};
const LtProblem& Problem() {
  static LtProblem p = [] {
    LtProblem q;
    const cublasOperation_t transa = CUBLAS_OP_T;
    const int32_t batch = 2;
    q.ok =
        cublasLtCreate(&q.lt) == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulDescCreate(&q.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) ==
            CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulDescSetAttribute(q.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                       sizeof(transa)) == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatrixLayoutCreate(&q.a, CUDA_R_16BF, 8192, 4096, 8192) == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatrixLayoutCreate(&q.b, CUDA_R_16BF, 8192, 1024, 8192) == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatrixLayoutCreate(&q.c, CUDA_R_16BF, 4096, 1024, 4096) == CUBLAS_STATUS_SUCCESS;
    for (cublasLtMatrixLayout_t layout : {q.a, q.b, q.c}) {
      q.ok =
          q.ok && cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                   &batch, sizeof(batch)) == CUBLAS_STATUS_SUCCESS;
    }
    return q;
  }();
  return p;
}

template <typename Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

const float kAlpha = 1.0f, kBeta = 0.0f;

cublasStatus_t Sgemm(SgemmFn fn) {
  return fn(Handle(), CUBLAS_OP_N, CUBLAS_OP_T, 4096, 1024, 8192, &kAlpha, nullptr, 4096, nullptr,
            1024, &kBeta, nullptr, 4096);
}

cublasStatus_t LtMatmul(LtMatmulFn fn) {
  const LtProblem& p = Problem();
  return fn(p.lt, p.desc, &kAlpha, nullptr, p.a, nullptr, p.b, &kBeta, nullptr, p.c, nullptr, p.c,
            nullptr, nullptr, 0, BenchStream());
}

// The fake's cublasSgemm_v2 called directly: the baseline the wrapper adds to.
void BM_CublasSgemmDirect(benchmark::State& state) {
  SgemmFn fake = Next<SgemmFn>("cublasSgemm_v2");
  if (!bench::StartChannelAgent() || Handle() == nullptr || fake == nullptr) {
    state.SkipWithError("the agent or the fake libcublas did not start");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(Sgemm(fake));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_CublasSgemmDirect);

// The same call through the agent's wrapper (one GemmCall record).
void BM_CublasSgemmWrapped(benchmark::State& state) {
  if (!bench::StartChannelAgent() || Handle() == nullptr) {
    state.SkipWithError("the agent or the fake libcublas did not start");
    return;
  }
  bench::RunWithRingRoom(state, 1, [] { benchmark::DoNotOptimize(Sgemm(&cublasSgemm_v2)); });
}
BENCHMARK(BM_CublasSgemmWrapped);

void BM_CublasLtMatmulDirect(benchmark::State& state) {
  LtMatmulFn fake = Next<LtMatmulFn>("cublasLtMatmul");
  if (!bench::StartChannelAgent() || !Problem().ok || fake == nullptr) {
    state.SkipWithError("the agent or the fake libcublasLt did not start");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(LtMatmul(fake));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_CublasLtMatmulDirect);

// Through the wrapper: the descriptor and the three layouts read (ten getter calls) and one
// GemmCall record.
void BM_CublasLtMatmulWrapped(benchmark::State& state) {
  if (!bench::StartChannelAgent() || !Problem().ok) {
    state.SkipWithError("the agent or the fake libcublasLt did not start");
    return;
  }
  bench::RunWithRingRoom(state, 1, [] { benchmark::DoNotOptimize(LtMatmul(&cublasLtMatmul)); });
}
BENCHMARK(BM_CublasLtMatmulWrapped);

// ReadLtProblem alone (the wrapper's cuBLASLt share), over the same problem built by the fake
// and by the real libcublasLt.so.13 (dlopen'd by its path, RTLD_LOCAL, beside the fake: its
// descriptor calls run on the host, no GPU needed). Skipped where the toolkit has none.
struct LtLibrary {
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  cublas::LtGetters getters;
};

LtLibrary LinkedLt() {
  return {&cublasLtMatmulDescCreate,
          &cublasLtMatmulDescSetAttribute,
          &cublasLtMatrixLayoutCreate,
          &cublasLtMatrixLayoutSetAttribute,
          {&cublasLtMatmulDescGetAttribute, &cublasLtMatrixLayoutGetAttribute}};
}

bool RealLt(LtLibrary* lt) {
  static void* library =
      dlopen(LUMOS_CUDA_LIB_DIR "/libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);  // Never closed.
  if (library == nullptr) return false;
  auto sym = [](const char* name) { return dlsym(library, name); };
  lt->desc_create = reinterpret_cast<decltype(lt->desc_create)>(sym("cublasLtMatmulDescCreate"));
  lt->desc_set = reinterpret_cast<decltype(lt->desc_set)>(sym("cublasLtMatmulDescSetAttribute"));
  lt->layout_create =
      reinterpret_cast<decltype(lt->layout_create)>(sym("cublasLtMatrixLayoutCreate"));
  lt->layout_set =
      reinterpret_cast<decltype(lt->layout_set)>(sym("cublasLtMatrixLayoutSetAttribute"));
  lt->getters.desc_get =
      reinterpret_cast<decltype(lt->getters.desc_get)>(sym("cublasLtMatmulDescGetAttribute"));
  lt->getters.layout_get =
      reinterpret_cast<decltype(lt->getters.layout_get)>(sym("cublasLtMatrixLayoutGetAttribute"));
  return lt->desc_create != nullptr && lt->desc_set != nullptr && lt->layout_create != nullptr &&
         lt->layout_set != nullptr && lt->getters.desc_get != nullptr &&
         lt->getters.layout_get != nullptr &&
         lt->getters.layout_get != &cublasLtMatrixLayoutGetAttribute;
}

void ReadProblem(benchmark::State& state, const LtLibrary& lt) {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  const int32_t transa = CUBLAS_OP_T;
  const int32_t batch = 2;
  bool ok = lt.desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
            lt.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)) ==
                CUBLAS_STATUS_SUCCESS &&
            lt.layout_create(&a, CUDA_R_16BF, 8192, 4096, 8192) == CUBLAS_STATUS_SUCCESS &&
            lt.layout_create(&b, CUDA_R_16BF, 8192, 1024, 8192) == CUBLAS_STATUS_SUCCESS &&
            lt.layout_create(&c, CUDA_R_16BF, 4096, 1024, 4096) == CUBLAS_STATUS_SUCCESS;
  for (cublasLtMatrixLayout_t layout : {a, b, c}) {
    ok = ok && lt.layout_set(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)) ==
                   CUBLAS_STATUS_SUCCESS;
  }
  if (!ok) {
    state.SkipWithError("could not build the descriptor and layouts");
    return;
  }
  cublas::GemmProblem problem;
  for (auto _ : state) {
    cublas::ReadLtProblem(lt.getters, desc, a, b, c, c, &problem);
    benchmark::DoNotOptimize(problem);
  }
  state.counters["m"] = static_cast<double>(problem.m);  // 4096 when every getter answered.
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_CublasLtReadProblemFake(benchmark::State& state) { ReadProblem(state, LinkedLt()); }
BENCHMARK(BM_CublasLtReadProblemFake);

void BM_CublasLtReadProblemReal(benchmark::State& state) {
  LtLibrary real;
  if (!RealLt(&real)) {
    state.SkipWithError("no " LUMOS_CUDA_LIB_DIR "/libcublasLt.so.13");
    return;
  }
  ReadProblem(state, real);
}
BENCHMARK(BM_CublasLtReadProblemReal);

}  // namespace
}  // namespace lumos::agent
