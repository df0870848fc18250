// Which kernels a GEMM call's shape goes to (modeler/trace/gemm_link.h): by the launch's
// correlation id when the call names it, else by the launching API call's thread and start
// within the call's span (innermost call), never for failed calls or graph launches.
#include "modeler/trace/gemm_link.h"

#include <gtest/gtest.h>

#include <vector>

namespace lumos::modeler {
namespace {

using schema::ApiCallEvent;
using schema::ApiKind;
using schema::GemmCallEvent;
using schema::KernelEvent;

GemmCallEvent Gemm(uint32_t thread, int64_t start, uint64_t duration, uint64_t m,
                   uint64_t correlation = 0, int32_t status = 0) {
  GemmCallEvent g;
  g.start_ns = start;
  g.duration_ns = duration;
  g.thread_id = thread;
  g.m = m;
  g.correlation_id = correlation;
  g.return_code = status;
  return g;
}

ApiCallEvent Launch(uint32_t thread, int64_t start, uint64_t correlation,
                    ApiKind kind = ApiKind::kLaunchKernel) {
  ApiCallEvent a;
  a.start_ns = start;
  a.duration_ns = 5;
  a.thread_id = thread;
  a.correlation_id = correlation;
  a.kind = kind;
  return a;
}

KernelEvent Kernel(uint64_t correlation) {
  KernelEvent k;
  k.correlation_id = correlation;
  return k;
}

// The m of the GEMM call each kernel got (0: none).
std::vector<uint64_t> LinkedM(const std::vector<KernelEvent>& kernels,
                              const std::vector<ApiCallEvent>& launches,
                              const std::vector<GemmCallEvent>& gemms) {
  std::vector<uint64_t> m;
  for (uint32_t index : LinkKernelsToGemmCalls(kernels, launches, gemms)) {
    m.push_back(index == kNoGemm ? 0 : gemms[index].m);
  }
  return m;
}

TEST(GemmLinkTest, LaunchesInsideTheCallOnItsThreadGetItsShape) {
  const std::vector<GemmCallEvent> gemms = {Gemm(7, 100, 100, 64)};
  const std::vector<ApiCallEvent> launches = {
      Launch(7, 120, 1),  // Split-K: two kernels of one call, both get the shape.
      Launch(7, 180, 2), Launch(7, 250, 3),  // After the call.
      Launch(8, 150, 4),                     // Another thread, same time.
      Launch(7, 99, 5),                      // Just before.
      Launch(7, 200, 6),                     // At the call's end: inside.
  };
  EXPECT_EQ(LinkedM({Kernel(1), Kernel(2), Kernel(3), Kernel(4), Kernel(5), Kernel(6), Kernel(99)},
                    launches, gemms),
            (std::vector<uint64_t>{64, 64, 0, 0, 0, 64, 0}));
}

TEST(GemmLinkTest, NestedCallsGiveTheInnermostShape) {
  // An operator (aten::linear) around another (aten::addmm), a sibling after it, and one long
  // call that an earlier, shorter one does not hide.
  const std::vector<GemmCallEvent> gemms = {Gemm(1, 0, 1000, 10), Gemm(1, 100, 100, 20),
                                            Gemm(1, 400, 50, 30)};
  const std::vector<ApiCallEvent> launches = {Launch(1, 150, 1), Launch(1, 300, 2),
                                              Launch(1, 420, 3), Launch(1, 1000, 4),
                                              Launch(1, 1001, 5)};
  EXPECT_EQ(LinkedM({Kernel(1), Kernel(2), Kernel(3), Kernel(4), Kernel(5)}, launches, gemms),
            (std::vector<uint64_t>{20, 10, 30, 10, 0}));
}

TEST(GemmLinkTest, ANamedLaunchWinsAndFailedCallsAndGraphsLinkNothing) {
  const std::vector<GemmCallEvent> gemms = {
      Gemm(1, 0, 1000, 10),                      // By span.
      Gemm(2, 5000, 10, 20, /*correlation=*/3),  // Names launch 3, wherever it is.
      Gemm(1, 100, 10, 30, 0, /*status=*/7),     // Failed: launched nothing.
  };
  const std::vector<ApiCallEvent> launches = {
      Launch(1, 50, 3),                          // In call 0's span, but call 1 names it.
      Launch(1, 105, 4),                         // In the failed call: call 0's.
      Launch(1, 200, 5, ApiKind::kLaunchGraph),  // A graph launch: its kernels get nothing.
      Launch(1, 300, 0),                         // No correlation id.
  };
  EXPECT_EQ(LinkedM({Kernel(3), Kernel(4), Kernel(5), Kernel(5), Kernel(0)}, launches, gemms),
            (std::vector<uint64_t>{20, 10, 0, 0, 0}));
}

TEST(GemmLinkTest, NoGemmCallsLinksNothing) {
  EXPECT_EQ(LinkKernelsToGemmCalls({Kernel(1), Kernel(2)}, {Launch(1, 1, 1)}, {}),
            (std::vector<uint32_t>{kNoGemm, kNoGemm}));
  GemmLinker linker;
  linker.Finish();
  EXPECT_EQ(linker.GemmOf(1), kNoGemm);
  EXPECT_EQ(linker.gemm_calls(), 0u);
}

TEST(GemmLinkTest, ACallRunningToTheEndOfTimeStillLinks) {
  // duration up to the int64 end: no overflow in the span's end.
  const std::vector<GemmCallEvent> gemms = {Gemm(1, INT64_MAX - 10, UINT64_MAX, 5)};
  EXPECT_EQ(LinkedM({Kernel(1)}, {Launch(1, INT64_MAX - 5, 1)}, gemms), (std::vector<uint64_t>{5}));
}

}  // namespace
}  // namespace lumos::modeler
