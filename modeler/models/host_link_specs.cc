#include "modeler/models/host_link_specs.h"

namespace lumos::modeler::models {
namespace {

struct HostLink {
  std::string_view gpu;
  double bytes_per_s;  // One direction.
};

constexpr HostLink kHostLinks[] = {
    // NVIDIA V100 Tensor Core GPU datasheet (2020): "PCIe 32 GB/s" (Gen3 x16, both directions).
    {"V100-SXM2-32GB", 16e9},
    // NVIDIA A100 Tensor Core GPU datasheet (2021): "PCIe Gen4: 64 GB/s" (both directions).
    {"A100-SXM4-40GB", 32e9},
    {"A100-SXM4-80GB", 32e9},
    // NVIDIA H100 Tensor Core GPU datasheet (2023): "PCIe Gen5: 128 GB/s" (both directions).
    {"H100-SXM5-80GB", 64e9},
    // NVIDIA H200 Tensor Core GPU datasheet (2024): "PCIe Gen5: 128 GB/s" (both directions).
    {"H200-SXM-141GB", 64e9},
    // NVIDIA HGX B200 datasheet (2024): PCIe Gen5 x16 per GPU, 128 GB/s both directions (the
    // PCIe 5.0 x16 rate; the datasheet names the generation, not the figure).
    {"B200", 64e9},
    // NVIDIA GB200 NVL72 datasheet (2024): Grace to Blackwell over NVLink-C2C, 900 GB/s both
    // directions per superchip link.
    {"GB200", 450e9},
};

}  // namespace

std::optional<double> HostLinkBytesPerS(std::string_view gpu) {
  for (const HostLink& link : kHostLinks) {
    if (link.gpu == gpu) return link.bytes_per_s;
  }
  return std::nullopt;
}

}  // namespace lumos::modeler::models
