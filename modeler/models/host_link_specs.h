// Design: how fast a GPU reaches host memory (copies between host and device), one direction,
// by spec entry name (hardware_specs.h). specs/hardware.txt has no such field yet; until it has
// one (`host_gb_per_s`, see modeler/models/README.md), this table holds the datasheet figures,
// each with its source. NVIDIA quotes PCIe and NVLink-C2C bandwidth with both directions added;
// the figures here are half of that.
// Threading: constants only.
#pragma once

#include <optional>
#include <string_view>

namespace lumos::modeler::models {

// PCIe Gen4 x16, one direction: what a GPU not in the table is assumed to have.
inline constexpr double kDefaultHostBytesPerS = 32e9;

// The host link of the spec entry `gpu` (its name, e.g. "A100-SXM4-80GB"); nullopt: not known.
std::optional<double> HostLinkBytesPerS(std::string_view gpu);

}  // namespace lumos::modeler::models
