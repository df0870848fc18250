// The cublas channel in-process (sanitizers too): cuBLAS enums to schema enums, the cuBLASLt
// problem read from real descriptor and layout objects (the fake libcublasLt.so.13 linked in,
// and the real one from the CUDA toolkit when it is there: the two must agree), and records
// through the real agent into a trace read back with the modeler's reader.
#include "agent/cublas/cublas_channel.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "agent/runtime/agent_runtime.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent::cublas {
namespace {

using schema::DataType;
using schema::GemmComputeType;
using schema::GemmTranspose;

TEST(CublasChannelTest, MapsEveryCudaTypeTheSchemaHas) {
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_16F), DataType::kFloat16);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_16BF), DataType::kBfloat16);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_32F), DataType::kFloat32);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_64F), DataType::kFloat64);
  EXPECT_EQ(DataTypeFromCuda(CUDA_C_16F), DataType::kComplexFloat16);
  EXPECT_EQ(DataTypeFromCuda(CUDA_C_16BF), DataType::kComplexBfloat16);
  EXPECT_EQ(DataTypeFromCuda(CUDA_C_32F), DataType::kComplexFloat32);
  EXPECT_EQ(DataTypeFromCuda(CUDA_C_64F), DataType::kComplexFloat64);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_8I), DataType::kInt8);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_8U), DataType::kUint8);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_32I), DataType::kInt32);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_32U), DataType::kUint32);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_64I), DataType::kInt64);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_64U), DataType::kUint64);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_8F_E4M3), DataType::kFloat8E4m3);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_8F_E5M2), DataType::kFloat8E5m2);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_6F_E2M3), DataType::kFloat6E2m3);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_6F_E3M2), DataType::kFloat6E3m2);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_4F_E2M1), DataType::kFloat4E2m1);
  // No schema value: not known, never a wrong one.
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_16I), DataType::kUnspecified);
  EXPECT_EQ(DataTypeFromCuda(CUDA_C_8I), DataType::kUnspecified);
  EXPECT_EQ(DataTypeFromCuda(CUDA_R_8F_UE8M0), DataType::kUnspecified);
  EXPECT_EQ(DataTypeFromCuda(static_cast<cudaDataType>(999)), DataType::kUnspecified);
  // Element sizes the cost models need (schema/enums.h).
  EXPECT_EQ(schema::DataTypeBits(DataType::kFloat4E2m1), 4u);
  EXPECT_EQ(schema::DataTypeBits(DataType::kComplexFloat64), 128u);
  EXPECT_EQ(schema::DataTypeBytes(DataType::kComplexFloat16), 4u);
  EXPECT_EQ(schema::DataTypeBytes(DataType::kFloat6E2m3), 0u);  // Not a whole byte.
}

TEST(CublasChannelTest, MapsTransposesComputeTypesAndMathModes) {
  EXPECT_EQ(TransposeFromCublas(CUBLAS_OP_N), GemmTranspose::kN);
  EXPECT_EQ(TransposeFromCublas(CUBLAS_OP_T), GemmTranspose::kT);
  EXPECT_EQ(TransposeFromCublas(CUBLAS_OP_C), GemmTranspose::kC);
  EXPECT_EQ(TransposeFromCublas(CUBLAS_OP_HERMITAN), GemmTranspose::kC);
  EXPECT_EQ(TransposeFromCublas(CUBLAS_OP_CONJG), GemmTranspose::kConjg);
  EXPECT_EQ(TransposeFromCublas(static_cast<cublasOperation_t>(7)), GemmTranspose::kUnspecified);

  const std::pair<cublasComputeType_t, GemmComputeType> compute[] = {
      {CUBLAS_COMPUTE_16F, GemmComputeType::kFloat16},
      {CUBLAS_COMPUTE_16F_PEDANTIC, GemmComputeType::kFloat16Pedantic},
      {CUBLAS_COMPUTE_32F, GemmComputeType::kFloat32},
      {CUBLAS_COMPUTE_32F_PEDANTIC, GemmComputeType::kFloat32Pedantic},
      {CUBLAS_COMPUTE_32F_FAST_16F, GemmComputeType::kFloat32FastFloat16},
      {CUBLAS_COMPUTE_32F_FAST_16BF, GemmComputeType::kFloat32FastBfloat16},
      {CUBLAS_COMPUTE_32F_FAST_TF32, GemmComputeType::kFloat32FastTf32},
      {CUBLAS_COMPUTE_32F_EMULATED_16BFX9, GemmComputeType::kFloat32EmulatedBf16x9},
      {CUBLAS_COMPUTE_64F, GemmComputeType::kFloat64},
      {CUBLAS_COMPUTE_64F_PEDANTIC, GemmComputeType::kFloat64Pedantic},
      {CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, GemmComputeType::kFloat64EmulatedFixedpoint},
      {CUBLAS_COMPUTE_32I, GemmComputeType::kInt32},
      {CUBLAS_COMPUTE_32I_PEDANTIC, GemmComputeType::kInt32Pedantic},
  };
  for (const auto& [cublas, expected] : compute) {
    EXPECT_EQ(ComputeTypeFromCublas(cublas), expected) << cublas;
  }
  EXPECT_EQ(ComputeTypeFromCublas(static_cast<cublasComputeType_t>(0)),
            GemmComputeType::kUnspecified);

  EXPECT_EQ(MathModeFromCublas(CUBLAS_DEFAULT_MATH), schema::GemmMathMode::kDefault);
  EXPECT_EQ(MathModeFromCublas(CUBLAS_TENSOR_OP_MATH), schema::GemmMathMode::kTensorOp);
  EXPECT_EQ(MathModeFromCublas(CUBLAS_PEDANTIC_MATH), schema::GemmMathMode::kPedantic);
  EXPECT_EQ(MathModeFromCublas(CUBLAS_TF32_TENSOR_OP_MATH), schema::GemmMathMode::kTf32TensorOp);
  EXPECT_EQ(MathModeFromCublas(static_cast<cublasMath_t>(
                CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
            schema::GemmMathMode::kTf32TensorOp);
  EXPECT_EQ(MathModeFromCublas(CUBLAS_FP32_EMULATED_BF16X9_MATH),
            schema::GemmMathMode::kFp32EmulatedBf16x9);
  EXPECT_EQ(MathModeFromCublas(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH),
            schema::GemmMathMode::kFp64EmulatedFixedpoint);
  EXPECT_EQ(MathModeFromCublas(static_cast<cublasMath_t>(5)), schema::GemmMathMode::kUnspecified);
}

// The cuBLASLt entry points the tests need, from one library (the linked fake or a dlopen'd
// real one).
struct Lt {
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  LtGetters getters;
};

Lt LinkedLt() {
  return {&cublasLtMatmulDescCreate,
          &cublasLtMatmulDescDestroy,
          &cublasLtMatmulDescSetAttribute,
          &cublasLtMatrixLayoutCreate,
          &cublasLtMatrixLayoutDestroy,
          &cublasLtMatrixLayoutSetAttribute,
          {&cublasLtMatmulDescGetAttribute, &cublasLtMatrixLayoutGetAttribute}};
}

// A problem set up as a caller of cublasLtMatmul sets it up, read back by the agent.
struct LtCase {
  cublasOperation_t transa, transb;
  uint64_t m, n, k;
  int32_t batch;
  cudaDataType a, b, c, d;
  cublasComputeType_t compute;
  bool shared_cd;
};

GemmProblem ReadCase(const Lt& lt, const LtCase& t, bool null_d = false) {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  EXPECT_EQ(lt.desc_create(&desc, t.compute, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  const int32_t ta = t.transa, tb = t.transb;
  lt.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
  lt.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
  const bool a_t = t.transa != CUBLAS_OP_N, b_t = t.transb != CUBLAS_OP_N;
  lt.layout_create(&a, t.a, a_t ? t.k : t.m, a_t ? t.m : t.k,
                   static_cast<int64_t>(a_t ? t.k : t.m));
  lt.layout_create(&b, t.b, b_t ? t.n : t.k, b_t ? t.k : t.n,
                   static_cast<int64_t>(b_t ? t.n : t.k));
  lt.layout_create(&c, t.c, t.m, t.n, static_cast<int64_t>(t.m));
  d = c;
  if (!t.shared_cd) lt.layout_create(&d, t.d, t.m, t.n, static_cast<int64_t>(t.m));
  for (cublasLtMatrixLayout_t layout : {a, b, c, d}) {
    lt.layout_set(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &t.batch, sizeof(t.batch));
  }
  GemmProblem problem;
  ReadLtProblem(lt.getters, desc, a, b, c, null_d ? nullptr : d, &problem);
  if (d != c) lt.layout_destroy(d);
  lt.layout_destroy(c);
  lt.layout_destroy(b);
  lt.layout_destroy(a);
  lt.desc_destroy(desc);
  return problem;
}

const LtCase kCases[] = {
    {CUBLAS_OP_N, CUBLAS_OP_N, 128, 64, 32, 1, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF,
     CUBLAS_COMPUTE_32F, true},
    // k from A's rows when A is transposed.
    {CUBLAS_OP_T, CUBLAS_OP_N, 4096, 8, 1024, 4, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_16BF,
     CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, false},
    {CUBLAS_OP_C, CUBLAS_OP_T, 7, 9, 11, 2, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F,
     CUBLAS_COMPUTE_32F_PEDANTIC, false},
};

void ExpectCase(const GemmProblem& p, const LtCase& t) {
  EXPECT_EQ(p.api, schema::GemmApi::kCublasltMatmul);
  EXPECT_EQ(p.m, t.m);
  EXPECT_EQ(p.n, t.n);
  EXPECT_EQ(p.k, t.k);
  EXPECT_EQ(p.batch_count, static_cast<uint64_t>(t.batch));
  EXPECT_EQ(p.transa, TransposeFromCublas(t.transa));
  EXPECT_EQ(p.transb, TransposeFromCublas(t.transb));
  EXPECT_EQ(p.a_type, DataTypeFromCuda(t.a));
  EXPECT_EQ(p.b_type, DataTypeFromCuda(t.b));
  EXPECT_EQ(p.c_type, DataTypeFromCuda(t.c));
  EXPECT_EQ(p.d_type, DataTypeFromCuda(t.shared_cd ? t.c : t.d));
  EXPECT_EQ(p.compute_type, ComputeTypeFromCublas(t.compute));
}

TEST(CublasChannelTest, ReadsTheLtProblemFromDescriptorAndLayouts) {
  const Lt lt = LinkedLt();
  for (const LtCase& t : kCases) ExpectCase(ReadCase(lt, t), t);
  // A null D reads C (cublasLtMatmul's D is never null in a valid call; nothing breaks).
  const GemmProblem null_d = ReadCase(lt, kCases[1], /*null_d=*/true);
  EXPECT_EQ(null_d.d_type, DataType::kBfloat16);
  EXPECT_EQ(null_d.c_type, DataType::kBfloat16);
  EXPECT_EQ(null_d.m, kCases[1].m);
}

TEST(CublasChannelTest, WhatCannotBeReadStaysNotKnown) {
  GemmProblem none;
  ReadLtProblem(LtGetters{}, nullptr, nullptr, nullptr, nullptr, nullptr, &none);
  EXPECT_EQ(none.api, schema::GemmApi::kCublasltMatmul);
  EXPECT_EQ(none.m, 0u);
  EXPECT_EQ(none.batch_count, 0u);  // Not known, not 1.
  EXPECT_EQ(none.a_type, DataType::kUnspecified);
  // Getters there, descriptor and layouts null: the getters are not even called with them.
  GemmProblem nulls;
  ReadLtProblem(LinkedLt().getters, nullptr, nullptr, nullptr, nullptr, nullptr, &nulls);
  EXPECT_EQ(nulls.transa, GemmTranspose::kUnspecified);
  EXPECT_EQ(nulls.compute_type, GemmComputeType::kUnspecified);
  EXPECT_EQ(nulls.k, 0u);
  // Dimensions of an invalid call.
  EXPECT_EQ(Dimension(-5), 0u);
  EXPECT_EQ(Dimension(int64_t{5'000'000'000}), 5'000'000'000u);
}

// The attribute sizes and meanings agree with the real cuBLASLt (loaded beside the fake by
// its path: a second object with the same SONAME), when the toolkit has it. Its descriptor
// calls run on the host; no GPU is needed.
TEST(CublasChannelTest, AgreesWithTheRealCublasLt) {
  const std::string path = std::string(LUMOS_CUDA_LIB_DIR) + "/libcublasLt.so.13";
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) GTEST_SKIP() << "no " << path << ": " << dlerror();
  auto sym = [&](const char* name) { return dlsym(library, name); };
  Lt real;
  real.desc_create = reinterpret_cast<decltype(real.desc_create)>(sym("cublasLtMatmulDescCreate"));
  real.desc_destroy =
      reinterpret_cast<decltype(real.desc_destroy)>(sym("cublasLtMatmulDescDestroy"));
  real.desc_set = reinterpret_cast<decltype(real.desc_set)>(sym("cublasLtMatmulDescSetAttribute"));
  real.layout_create =
      reinterpret_cast<decltype(real.layout_create)>(sym("cublasLtMatrixLayoutCreate"));
  real.layout_destroy =
      reinterpret_cast<decltype(real.layout_destroy)>(sym("cublasLtMatrixLayoutDestroy"));
  real.layout_set =
      reinterpret_cast<decltype(real.layout_set)>(sym("cublasLtMatrixLayoutSetAttribute"));
  real.getters.desc_get =
      reinterpret_cast<decltype(real.getters.desc_get)>(sym("cublasLtMatmulDescGetAttribute"));
  real.getters.layout_get =
      reinterpret_cast<decltype(real.getters.layout_get)>(sym("cublasLtMatrixLayoutGetAttribute"));
  ASSERT_NE(real.getters.layout_get, &cublasLtMatrixLayoutGetAttribute) << "the fake, not the real";
  for (const LtCase& t : kCases) ExpectCase(ReadCase(real, t), t);
  // The real library is never unloaded (it may keep threads or atexit handlers).
}

// Records through the real agent (started once per process: one test case).
TEST(CublasChannelTest, RecordsReachTheTrace) {
  lumos::testing::TempDir dir;
  setenv("LUMOS_OUTPUT_DIR", dir.path().c_str(), 1);
  setenv("LUMOS_CHANNELS", "cublas", 1);
  setenv("LUMOS_FLUSH_INTERVAL_MS", "10", 1);
  ASSERT_TRUE(CublasChannelOn());
  GemmProblem narrow = ReadCase(LinkedLt(), kCases[1]);
  narrow.stream_id = 0x77;
  PushGemmRecord(narrow, 1'000, 3'000, 0);
  GemmProblem wide;
  wide.api = schema::GemmApi::kCublasGemmEx;
  wide.m = 5'000'000'000;
  wide.n = 3;
  wide.k = 1ull << 33;
  wide.batch_count = 1;
  wide.math_mode = schema::GemmMathMode::kTf32TensorOp;
  PushGemmRecord(wide, 4'000, 4'500, CUBLAS_STATUS_NOT_SUPPORTED);
  Agent::Get().Stop();

  std::vector<std::string> files = lumos::testing::ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  auto reader = modeler::TraceReader::Open(dir.File(files[0]));
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::vector<schema::GemmCallEvent> calls;
  modeler::ReadResult result;
  ASSERT_TRUE((*reader)
                  ->ReadFrames(
                      [&](const modeler::FrameEvents& frame) {
                        calls.insert(calls.end(), frame.gemm_calls.begin(), frame.gemm_calls.end());
                        return Status::Ok();
                      },
                      &result)
                  .ok());
  EXPECT_TRUE(result.has_trailer);
  ASSERT_EQ(calls.size(), 2u);
  const schema::GemmCallEvent& a = calls[0];
  EXPECT_EQ(a.api, schema::GemmApi::kCublasltMatmul);
  EXPECT_EQ(a.m, kCases[1].m);
  EXPECT_EQ(a.n, kCases[1].n);
  EXPECT_EQ(a.k, kCases[1].k);
  EXPECT_EQ(a.batch_count, 4u);
  EXPECT_EQ(a.transa, GemmTranspose::kT);
  EXPECT_EQ(a.a_type, DataType::kFloat8E4m3);
  EXPECT_EQ(a.b_type, DataType::kFloat8E5m2);
  EXPECT_EQ(a.c_type, DataType::kBfloat16);
  EXPECT_EQ(a.d_type, DataType::kFloat32);
  EXPECT_EQ(a.compute_type, GemmComputeType::kFloat32FastTf32);
  EXPECT_EQ(a.stream_id, 0x77u);
  EXPECT_EQ(a.start_ns, 1'000);
  EXPECT_EQ(a.duration_ns, 2'000u);
  EXPECT_NE(a.thread_id, 0u);
  EXPECT_EQ(a.return_code, 0);
  const schema::GemmCallEvent& b = calls[1];
  EXPECT_EQ(b.m, 5'000'000'000u);  // Beyond 32 bits: the record's extension.
  EXPECT_EQ(b.k, 1ull << 33);
  EXPECT_EQ(b.n, 3u);
  EXPECT_EQ(b.batch_count, 1u);
  EXPECT_EQ(b.math_mode, schema::GemmMathMode::kTf32TensorOp);
  EXPECT_EQ(b.return_code, CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(b.thread_id, a.thread_id);
}

}  // namespace
}  // namespace lumos::agent::cublas
