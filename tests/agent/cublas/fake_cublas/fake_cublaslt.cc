// A test double for libcublasLt.so.13 (SONAME libcublasLt.so.13, symbols versioned
// libcublasLt.so.13 like the real library's), for what cannot run here: the real cuBLASLt
// needs a GPU to run a matmul. It stands in for a GPU, not for cuBLASLt's arithmetic.
//   Handles are fake; matmul descriptors and matrix layouts are real objects in cuBLASLt's
//   opaque storage, with the attributes the agent reads (compute and scale type, transposes;
//   type, order, rows, columns, leading dimension, batch count and stride), each checked for
//   its documented size as cuBLASLt does. cublasLtMatmul does no work: it counts the call
//   (fake_cublaslt_matmul_calls) and returns CUBLAS_STATUS_INVALID_VALUE for a null
//   descriptor or layout, else CUBLAS_STATUS_SUCCESS.
//   Built twice: as here, and with FAKE_CUBLAS_BARE (fake_cublas_bare/): without the two
//   GetAttribute functions, so the agent's recording must fail open.
#include <cublasLt.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace {

struct Desc {
  int32_t compute_type = 0;
  int32_t scale_type = 0;
  int32_t transa = CUBLAS_OP_N;
  int32_t transb = CUBLAS_OP_N;
};
static_assert(sizeof(Desc) <= sizeof(cublasLtMatmulDescOpaque_t));

struct Layout {
  uint32_t type = 0;
  int32_t order = CUBLASLT_ORDER_COL;
  uint64_t rows = 0;
  uint64_t cols = 0;
  int64_t ld = 0;
  int32_t batch_count = 1;
  int64_t batch_stride = 0;
};
static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));

std::atomic<int> g_matmul_calls{0};
int g_handle = 0;

Desc* DescOf(cublasLtMatmulDesc_t desc) { return reinterpret_cast<Desc*>(desc->data); }
Layout* LayoutOf(cublasLtMatrixLayout_t layout) { return reinterpret_cast<Layout*>(layout->data); }

// Copies an attribute of type T in or out, with cuBLASLt's size checks.
template <typename T>
cublasStatus_t Put(T* field, const void* buf, size_t size) {
  if (buf == nullptr || size != sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(field, buf, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}
template <typename T>
[[maybe_unused]] cublasStatus_t Get(const T& field, void* buf, size_t size, size_t* written) {
  if (written != nullptr) *written = sizeof(T);
  if (buf == nullptr || size < sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, &field, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT int fake_cublaslt_matmul_calls() { return g_matmul_calls.load(); }

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = reinterpret_cast<cublasLtHandle_t>(&g_handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t /*handle*/) { return CUBLAS_STATUS_SUCCESS; }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *desc = new cublasLtMatmulDescOpaque_t{};
  Desc* d = new (DescOf(*desc)) Desc();
  d->compute_type = compute;
  d->scale_type = scale;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t size) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  Desc* d = DescOf(desc);
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return Put(&d->compute_type, buf, size);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return Put(&d->scale_type, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSA:
      return Put(&d->transa, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSB:
      return Put(&d->transb, buf, size);
    default:
      return CUBLAS_STATUS_SUCCESS;  // Accepted and not kept: nothing the agent reads.
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new cublasLtMatrixLayoutOpaque_t{};
  Layout* l = new (LayoutOf(*layout)) Layout();
  l->type = static_cast<uint32_t>(type);
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  Layout* l = LayoutOf(layout);
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      return Put(&l->type, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
      return Put(&l->order, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      return Put(&l->rows, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      return Put(&l->cols, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_LD:
      return Put(&l->ld, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return Put(&l->batch_count, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return Put(&l->batch_stride, buf, size);
    default:
      return CUBLAS_STATUS_SUCCESS;
  }
}

#ifndef FAKE_CUBLAS_BARE
cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t size, size_t* written) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  const Desc* d = DescOf(desc);
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return Get(d->compute_type, buf, size, written);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return Get(d->scale_type, buf, size, written);
    case CUBLASLT_MATMUL_DESC_TRANSA:
      return Get(d->transa, buf, size, written);
    case CUBLASLT_MATMUL_DESC_TRANSB:
      return Get(d->transb, buf, size, written);
    default:
      return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                size_t size, size_t* written) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  const Layout* l = LayoutOf(layout);
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      return Get(l->type, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
      return Get(l->order, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      return Get(l->rows, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      return Get(l->cols, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_LD:
      return Get(l->ld, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return Get(l->batch_count, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return Get(l->batch_stride, buf, size, written);
    default:
      return CUBLAS_STATUS_INVALID_VALUE;
  }
}
#endif

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                              const void* /*alpha*/, const void* /*A*/, cublasLtMatrixLayout_t a,
                              const void* /*B*/, cublasLtMatrixLayout_t b, const void* /*beta*/,
                              const void* /*C*/, cublasLtMatrixLayout_t c, void* /*D*/,
                              cublasLtMatrixLayout_t d, const cublasLtMatmulAlgo_t* /*algo*/,
                              void* /*workspace*/, size_t /*workspace_bytes*/,
                              cudaStream_t /*stream*/) {
  g_matmul_calls.fetch_add(1);
  if (handle == nullptr || desc == nullptr || a == nullptr || b == nullptr || c == nullptr ||
      d == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}
