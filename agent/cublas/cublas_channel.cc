#include "agent/cublas/cublas_channel.h"

#include <atomic>
#include <limits>

#include "agent/core/record.h"
#include "agent/core/thread_rings.h"
#include "agent/runtime/agent_runtime.h"
#include "base/logging.h"

namespace lumos::agent::cublas {
namespace {

using schema::DataType;
using schema::GemmComputeType;

// 0 = not decided yet, 1 = on, 2 = off.
std::atomic<int> g_state{0};

int DecideOrThrow() {
  Agent& agent = Agent::Get();
  agent.LoadConfig();
  if (!agent.config().enabled || !agent.config().channels.Has(schema::Channel::kCublas)) return 2;
  return agent.Start() ? 1 : 2;
}

// Runs inside the job's cuBLAS call: no exception may escape into it.
int Decide() noexcept {
  try {
    return DecideOrThrow();
  } catch (...) {
    LUMOS_LOG(Warn, "cublas: set-up failed with an exception; the channel is off");
    return 2;
  }
}

constexpr uint32_t kNarrowMax = std::numeric_limits<uint32_t>::max();

uint32_t Narrow(uint64_t value) {
  return value < kNarrowMax ? static_cast<uint32_t>(value) : kNarrowMax;
}

}  // namespace

bool CublasChannelOn() noexcept {
  // Relaxed: see the header (the word publishes no data).
  int value = g_state.load(std::memory_order_relaxed);
  if (value == 0) {
    // Racing first calls decide the same way (Start() is call_once); either store wins.
    value = Decide();
    g_state.store(value, std::memory_order_relaxed);
  }
  return value == 1 && Agent::Get().enabled().enabled();
}

DataType DataTypeFromCuda(cudaDataType type) noexcept {
  switch (type) {
    case CUDA_R_16F:
      return DataType::kFloat16;
    case CUDA_C_16F:
      return DataType::kComplexFloat16;
    case CUDA_R_16BF:
      return DataType::kBfloat16;
    case CUDA_C_16BF:
      return DataType::kComplexBfloat16;
    case CUDA_R_32F:
      return DataType::kFloat32;
    case CUDA_C_32F:
      return DataType::kComplexFloat32;
    case CUDA_R_64F:
      return DataType::kFloat64;
    case CUDA_C_64F:
      return DataType::kComplexFloat64;
    case CUDA_R_8I:
      return DataType::kInt8;
    case CUDA_R_8U:
      return DataType::kUint8;
    case CUDA_R_32I:
      return DataType::kInt32;
    case CUDA_R_32U:
      return DataType::kUint32;
    case CUDA_R_64I:
      return DataType::kInt64;
    case CUDA_R_64U:
      return DataType::kUint64;
    case CUDA_R_8F_E4M3:
      return DataType::kFloat8E4m3;
    case CUDA_R_8F_E5M2:
      return DataType::kFloat8E5m2;
    case CUDA_R_6F_E2M3:
      return DataType::kFloat6E2m3;
    case CUDA_R_6F_E3M2:
      return DataType::kFloat6E3m2;
    case CUDA_R_4F_E2M1:
      return DataType::kFloat4E2m1;
    default:  // Complex integers, 4- and 16-bit integers, UE8M0 scales: no schema value.
      return DataType::kUnspecified;
  }
}

schema::GemmTranspose TransposeFromCublas(cublasOperation_t op) noexcept {
  switch (op) {
    case CUBLAS_OP_N:
      return schema::GemmTranspose::kN;
    case CUBLAS_OP_T:
      return schema::GemmTranspose::kT;
    case CUBLAS_OP_C:
      return schema::GemmTranspose::kC;
    case CUBLAS_OP_CONJG:
      return schema::GemmTranspose::kConjg;
  }
  return schema::GemmTranspose::kUnspecified;
}

GemmComputeType ComputeTypeFromCublas(cublasComputeType_t type) noexcept {
  switch (type) {
    case CUBLAS_COMPUTE_16F:
      return GemmComputeType::kFloat16;
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return GemmComputeType::kFloat16Pedantic;
    case CUBLAS_COMPUTE_32F:
      return GemmComputeType::kFloat32;
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      return GemmComputeType::kFloat32Pedantic;
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return GemmComputeType::kFloat32FastFloat16;
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return GemmComputeType::kFloat32FastBfloat16;
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return GemmComputeType::kFloat32FastTf32;
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
      return GemmComputeType::kFloat32EmulatedBf16x9;
    case CUBLAS_COMPUTE_64F:
      return GemmComputeType::kFloat64;
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      return GemmComputeType::kFloat64Pedantic;
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
      return GemmComputeType::kFloat64EmulatedFixedpoint;
    case CUBLAS_COMPUTE_32I:
      return GemmComputeType::kInt32;
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      return GemmComputeType::kInt32Pedantic;
  }
  return GemmComputeType::kUnspecified;
}

schema::GemmMathMode MathModeFromCublas(cublasMath_t mode) noexcept {
  switch (static_cast<int>(mode) &
          ~static_cast<int>(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) {
    case CUBLAS_DEFAULT_MATH:
      return schema::GemmMathMode::kDefault;
    case CUBLAS_TENSOR_OP_MATH:
      return schema::GemmMathMode::kTensorOp;
    case CUBLAS_PEDANTIC_MATH:
      return schema::GemmMathMode::kPedantic;
    case CUBLAS_TF32_TENSOR_OP_MATH:
      return schema::GemmMathMode::kTf32TensorOp;
    case CUBLAS_FP32_EMULATED_BF16X9_MATH:
      return schema::GemmMathMode::kFp32EmulatedBf16x9;
    case CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH:
      return schema::GemmMathMode::kFp64EmulatedFixedpoint;
    default:
      return schema::GemmMathMode::kUnspecified;
  }
}

void ReadLtProblem(const LtGetters& getters, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                   cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                   GemmProblem* problem) noexcept {
  problem->api = schema::GemmApi::kCublasltMatmul;
  problem->batch_count = 0;
  if (getters.desc_get == nullptr || getters.layout_get == nullptr) return;
  size_t written = 0;
  // Each attribute's type is the one cublasLt.h documents for it.
  auto desc_i32 = [&](cublasLtMatmulDescAttributes_t attribute, int32_t* value) {
    return desc != nullptr &&
           getters.desc_get(desc, attribute, value, sizeof(*value), &written) ==
               CUBLAS_STATUS_SUCCESS &&
           written == sizeof(*value);
  };
  auto layout = [&](cublasLtMatrixLayout_t matrix, cublasLtMatrixLayoutAttribute_t attribute,
                    auto* value) {
    return matrix != nullptr &&
           getters.layout_get(matrix, attribute, value, sizeof(*value), &written) ==
               CUBLAS_STATUS_SUCCESS &&
           written == sizeof(*value);
  };
  auto type_of = [&](cublasLtMatrixLayout_t matrix) {
    uint32_t type = 0;
    return layout(matrix, CUBLASLT_MATRIX_LAYOUT_TYPE, &type)
               ? DataTypeFromCuda(static_cast<cudaDataType>(type))
               : DataType::kUnspecified;
  };
  int32_t value = 0;
  if (desc_i32(CUBLASLT_MATMUL_DESC_TRANSA, &value)) {
    problem->transa = TransposeFromCublas(static_cast<cublasOperation_t>(value));
  }
  if (desc_i32(CUBLASLT_MATMUL_DESC_TRANSB, &value)) {
    problem->transb = TransposeFromCublas(static_cast<cublasOperation_t>(value));
  }
  if (desc_i32(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &value)) {
    problem->compute_type = ComputeTypeFromCublas(static_cast<cublasComputeType_t>(value));
  }
  if (d == nullptr) d = c;
  uint64_t rows = 0, cols = 0;
  if (layout(d, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows)) problem->m = rows;
  if (layout(d, CUBLASLT_MATRIX_LAYOUT_COLS, &cols)) problem->n = cols;
  int32_t batch = 0;
  if (layout(d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch))
    problem->batch_count = Dimension(batch);
  // op(A) is m x k: A is m x k as stored, k x m when transposed.
  const bool a_transposed = problem->transa != schema::GemmTranspose::kN &&
                            problem->transa != schema::GemmTranspose::kUnspecified;
  uint64_t inner = 0;
  if (layout(a, a_transposed ? CUBLASLT_MATRIX_LAYOUT_ROWS : CUBLASLT_MATRIX_LAYOUT_COLS, &inner)) {
    problem->k = inner;
  }
  problem->a_type = type_of(a);
  problem->b_type = type_of(b);
  problem->d_type = type_of(d);
  problem->c_type = c == d ? problem->d_type : type_of(c);
}

void PushGemmRecord(const GemmProblem& problem, int64_t start_ns, int64_t end_ns,
                    int32_t status) noexcept {
  ThreadRings* rings = Agent::Get().rings();
  if (rings == nullptr) return;
  ThreadRing* ring = rings->CurrentThreadRing();
  Record head{};
  head.kind = RecordKind::kGemmCall;
  head.thread_id = ring->thread_id();
  head.start_ns = start_ns;
  head.end_ns = end_ns;
  GemmPayload& p = head.payload.gemm;
  p.stream_id = problem.stream_id;
  p.m = Narrow(problem.m);
  p.n = Narrow(problem.n);
  p.k = Narrow(problem.k);
  p.batch_count = Narrow(problem.batch_count);
  p.return_code = status;
  p.api = static_cast<uint8_t>(problem.api);
  p.transa = static_cast<uint8_t>(problem.transa);
  p.transb = static_cast<uint8_t>(problem.transb);
  p.a_type = static_cast<uint8_t>(problem.a_type);
  p.b_type = static_cast<uint8_t>(problem.b_type);
  p.c_type = static_cast<uint8_t>(problem.c_type);
  p.d_type = static_cast<uint8_t>(problem.d_type);
  p.compute_type = static_cast<uint8_t>(problem.compute_type);
  p.math_mode = static_cast<uint8_t>(problem.math_mode);
  if (problem.m < kNarrowMax && problem.n < kNarrowMax && problem.k < kNarrowMax &&
      problem.batch_count < kNarrowMax) {
    ring->Push(head);
    return;
  }
  Record extension{};
  extension.kind = RecordKind::kExtension;
  extension.payload.gemm_ext = {
      .m = problem.m, .n = problem.n, .k = problem.k, .batch_count = problem.batch_count};
  ring->Push(head, extension);
}

}  // namespace lumos::agent::cublas
