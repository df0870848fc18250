// Design: a fixed table of ~200 realistic demangled kernel names (with their class, so the
// event mix can give each a plausible duration and launch configuration). Built once on
// first use and never destroyed, so string_views into it stay valid until exit.
#pragma once

#include <string>
#include <vector>

namespace lumos::bench {

enum class KernelClass {
  kGemm,
  kAttentionForward,
  kAttentionBackward,
  kElementwise,
  kReduction,
  kNorm,
  kSoftmaxLoss,
  kOptimizer,
  kNccl,
  kTriton,
  kMisc,
};

struct KernelName {
  KernelClass cls;
  std::string name;
};

const std::vector<KernelName>& KernelNameTable();

}  // namespace lumos::bench
