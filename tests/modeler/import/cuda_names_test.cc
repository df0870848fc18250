#include "modeler/import/cuda_names.h"

#include <gtest/gtest.h>

namespace lumos::modeler::kineto {
namespace {

using schema::ApiKind;
using schema::CopyKind;
using schema::MemoryKind;
using schema::SyncType;

TEST(CudaNamesTest, ClassifiesApiCalls) {
  EXPECT_EQ(ClassifyApiName("cudaLaunchKernel"), ApiKind::kLaunchKernel);
  EXPECT_EQ(ClassifyApiName("cudaLaunchKernel_ptsz"), ApiKind::kLaunchKernel);
  EXPECT_EQ(ClassifyApiName("__cudaLaunchKernel_v13000"),
            ApiKind::kLaunchKernel);  // CUDA 13 <<<>>>
  EXPECT_EQ(ClassifyApiName("cudaLaunchKernelExC_v11060"), ApiKind::kLaunchKernel);
  EXPECT_EQ(ClassifyApiName("cudaLaunchCooperativeKernel"), ApiKind::kLaunchKernel);
  EXPECT_EQ(ClassifyApiName("cuLaunchKernel"), ApiKind::kLaunchKernel);
  EXPECT_EQ(ClassifyApiName("cuLaunchKernelEx"), ApiKind::kLaunchKernel);
  EXPECT_EQ(ClassifyApiName("cudaLaunchHostFunc"), ApiKind::kOther);
  EXPECT_EQ(ClassifyApiName("cudaGraphLaunch"), ApiKind::kLaunchGraph);
  EXPECT_EQ(ClassifyApiName("cudaMemcpy"), ApiKind::kMemcpy);
  EXPECT_EQ(ClassifyApiName("cudaMemcpy2D"), ApiKind::kMemcpy);
  EXPECT_EQ(ClassifyApiName("cudaMemcpyAsync"), ApiKind::kMemcpyAsync);
  EXPECT_EQ(ClassifyApiName("cuMemcpyHtoDAsync_v2"), ApiKind::kMemcpyAsync);
  EXPECT_EQ(ClassifyApiName("cudaMemset"), ApiKind::kMemset);
  EXPECT_EQ(ClassifyApiName("cudaMemsetAsync"), ApiKind::kMemsetAsync);
  EXPECT_EQ(ClassifyApiName("cuMemsetD32Async"), ApiKind::kMemsetAsync);
  EXPECT_EQ(ClassifyApiName("cudaEventRecord"), ApiKind::kEventRecord);
  EXPECT_EQ(ClassifyApiName("cudaEventRecordWithFlags"), ApiKind::kEventRecord);
  EXPECT_EQ(ClassifyApiName("cudaStreamWaitEvent"), ApiKind::kStreamWaitEvent);
  EXPECT_EQ(ClassifyApiName("cudaEventSynchronize"), ApiKind::kEventSynchronize);
  EXPECT_EQ(ClassifyApiName("cudaStreamSynchronize"), ApiKind::kStreamSynchronize);
  EXPECT_EQ(ClassifyApiName("cudaDeviceSynchronize"), ApiKind::kDeviceSynchronize);
  EXPECT_EQ(ClassifyApiName("cuCtxSynchronize"), ApiKind::kDeviceSynchronize);
  EXPECT_EQ(ClassifyApiName("cudaEventQuery"), ApiKind::kEventQuery);
  EXPECT_EQ(ClassifyApiName("cudaStreamQuery"), ApiKind::kStreamQuery);
  EXPECT_EQ(ClassifyApiName("cudaMalloc"), ApiKind::kMalloc);
  EXPECT_EQ(ClassifyApiName("cudaMallocAsync"), ApiKind::kMalloc);
  EXPECT_EQ(ClassifyApiName("cuMemAlloc_v2"), ApiKind::kMalloc);
  EXPECT_EQ(ClassifyApiName("cudaFreeHost"), ApiKind::kFree);
  EXPECT_EQ(ClassifyApiName("cudaStreamGetCaptureInfo_v2"), ApiKind::kOther);
  EXPECT_EQ(ClassifyApiName("INVALID"), ApiKind::kOther);
  EXPECT_EQ(ClassifyApiName(""), ApiKind::kOther);
}

TEST(CudaNamesTest, ParsesMemcpyAndMemsetNames) {
  MemcpyKinds k = ParseMemcpyName("Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(k.copy, CopyKind::kHtod);
  EXPECT_EQ(k.src, MemoryKind::kPageable);
  EXPECT_EQ(k.dst, MemoryKind::kDevice);
  k = ParseMemcpyName("Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(k.copy, CopyKind::kDtoh);
  EXPECT_EQ(k.dst, MemoryKind::kPinned);
  k = ParseMemcpyName("Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(k.copy, CopyKind::kDtod);
  EXPECT_EQ(ParseMemcpyName("Memcpy PtoP (Device -> Device)").copy, CopyKind::kPtop);
  EXPECT_EQ(ParseMemcpyName("Memcpy HtoA (Pageable -> Array)").dst, MemoryKind::kArray);
  k = ParseMemcpyName("Memcpy Unknown (Unknown -> Managed Static)");
  EXPECT_EQ(k.copy, CopyKind::kUnspecified);
  EXPECT_EQ(k.src, MemoryKind::kUnspecified);
  EXPECT_EQ(k.dst, MemoryKind::kManaged);
  EXPECT_EQ(ParseMemcpyName("Memcpy").copy, CopyKind::kUnspecified);
  EXPECT_EQ(ParseMemcpyName("Memcpy HtoD (oops").src, MemoryKind::kUnspecified);
  EXPECT_EQ(ParseMemsetName("Memset (Device)"), MemoryKind::kDevice);
  EXPECT_EQ(ParseMemsetName("Memset (Unknown)"), MemoryKind::kUnspecified);
  EXPECT_EQ(ParseMemsetName("Memset"), MemoryKind::kUnspecified);
}

TEST(CudaNamesTest, MapsSyncKinds) {
  EXPECT_EQ(SyncTypeFromKineto("Event Sync"), SyncType::kEventSynchronize);
  EXPECT_EQ(SyncTypeFromKineto("Stream Wait Event"), SyncType::kStreamWaitEvent);
  EXPECT_EQ(SyncTypeFromKineto("Stream Sync"), SyncType::kStreamSynchronize);
  EXPECT_EQ(SyncTypeFromKineto("Context Sync"), SyncType::kContextSynchronize);
  EXPECT_EQ(SyncTypeFromKineto("Unknown Sync"), SyncType::kUnspecified);
}

}  // namespace
}  // namespace lumos::modeler::kineto
