// GEMM shapes in one orientation (modeler/trace/gemm_orientation.h): a cuBLAS call turned
// row-major by hand, a framework op left alone (the loaded real trace: tests/modeler/graph's
// job_gemm_test.cc).
#include "modeler/trace/gemm_orientation.h"

#include <gtest/gtest.h>

#include <vector>

namespace lumos::modeler {
namespace {

using schema::DataType;
using schema::GemmApi;
using schema::GemmTranspose;

TEST(GemmOrientationTest, ACublasCallIsTurnedRowMajorAndAFrameworkOpIsNot) {
  schema::GemmCallEvent cublas;
  cublas.api = GemmApi::kCublasltMatmul;
  cublas.m = 3072;  // Output features: y^T = W x^T, column-major.
  cublas.n = 4096;  // Tokens.
  cublas.k = 1024;
  cublas.transa = GemmTranspose::kT;
  cublas.transb = GemmTranspose::kN;
  cublas.a_type = DataType::kBfloat16;
  cublas.b_type = DataType::kFloat32;
  schema::GemmCallEvent framework = cublas;
  framework.api = GemmApi::kFrameworkMatmul;
  std::vector<schema::GemmCallEvent> calls = {cublas, framework};
  EXPECT_EQ(GemmCallsToRowMajor(&calls), 1u);
  EXPECT_EQ(calls[0].m, 4096u);
  EXPECT_EQ(calls[0].n, 3072u);
  EXPECT_EQ(calls[0].k, 1024u);
  EXPECT_EQ(calls[0].transa, GemmTranspose::kN);
  EXPECT_EQ(calls[0].transb, GemmTranspose::kT);
  EXPECT_EQ(calls[0].a_type, DataType::kFloat32);
  EXPECT_EQ(calls[0].b_type, DataType::kBfloat16);
  EXPECT_EQ(calls[1], framework);
  for (GemmApi api : {GemmApi::kCublasGemm, GemmApi::kCublasGemmBatched,
                      GemmApi::kCublasGemmStridedBatched, GemmApi::kCublasGemmEx,
                      GemmApi::kCublasGemmBatchedEx, GemmApi::kCublasGemmStridedBatchedEx}) {
    EXPECT_TRUE(IsColumnMajorGemmApi(api));
  }
  EXPECT_FALSE(IsColumnMajorGemmApi(GemmApi::kFrameworkAttention));
  EXPECT_FALSE(IsColumnMajorGemmApi(GemmApi::kUnspecified));
}

}  // namespace
}  // namespace lumos::modeler
