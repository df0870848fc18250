// Design: GPU and network specs by name, from one text format (specs/hardware.txt describes
// it). The built-in table is that file, compiled in and read by the same parser as a user's
// `--specs FILE`, so the shipped figures are checked by the parser's own tests and each keeps
// its source comment beside it. Adding a file adds entries or replaces entries of the same name
// (whole entries); the CUDA device names listed in an entry (`device`) map trace headers onto
// it, the entry added last winning. A malformed line is one error "FILE:LINE: what"; nothing of
// that file is kept then.
// Units inside: bytes, bytes per second, FLOP per second, integer ns (STYLE.md 2.3).
// Threading: a SpecTable is built by one thread; const methods may then be called from any.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/models/hardware/dtype.h"

namespace lumos::modeler::models {

// PCIe Gen4 x16, one direction: the host link of a GPU whose entry gives none.
inline constexpr double kDefaultHostBytesPerS = 32e9;

struct GpuSpec {
  std::string name;                  // "H100-SXM5-80GB"
  std::vector<std::string> devices;  // CUDA device names: "NVIDIA H100 80GB HBM3"
  int sms = 0;
  std::optional<int> boost_clock_mhz;
  std::array<double, kDTypeCount> peak_flops_per_s{};  // Dense; 0: the dtype is not supported.
  double hbm_bytes_per_s = 0;
  std::optional<double> hbm_bytes;
  std::optional<double> l2_bytes;
  std::optional<double> nvlink_bytes_per_s;  // Both directions added, as NVIDIA quotes it.
  std::optional<int> nvlink_domain_gpus;
  std::optional<int> compute_capability;   // 90 for "9.0".
  bool nvls = false;                       // NVLink SHARP in the NVLink switches.
  std::optional<double> host_bytes_per_s;  // The host link (PCIe, NVLink-C2C), one direction.
  std::string where;                       // "FILE:LINE" of the entry's first line.

  double PeakFlops(DType dtype) const { return peak_flops_per_s[static_cast<int>(dtype)]; }
};

struct NetworkSpec {
  std::string name;        // "ib400", or the text of --net given as numbers.
  double bytes_per_s = 0;  // Per GPU, one direction.
  int64_t latency_ns = 0;  // One-way small-message latency per hop (an assumption: see file).
  std::string about;
  std::string where;
};

class SpecTable {
 public:
  // The compiled-in table (specs/hardware.txt). Parsed on first use.
  static const SpecTable& Builtin();
  // The text of specs/hardware.txt as compiled in, and the name its errors use.
  static std::string_view BuiltinText();
  static constexpr std::string_view kBuiltinName = "modeler/models/hardware/specs/hardware.txt";

  // Adds the entries of `text`; `file_name` names it in errors. On error nothing is added.
  Status Add(std::string_view text, std::string_view file_name);
  // Reads `path` (a regular file, base/input_file.h) and adds it.
  Status AddFile(const std::string& path);

  // By entry name or CUDA device name, case-insensitive, a leading "NVIDIA " ignored.
  const GpuSpec* FindGpu(std::string_view name) const;
  const NetworkSpec* FindNetwork(std::string_view name) const;
  // `--net`: a network's name, or numbers "GBITGbps,LATENCYus" (e.g. "400Gbps,3us").
  StatusOr<NetworkSpec> ResolveNetwork(std::string_view text) const;

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  const std::vector<NetworkSpec>& networks() const { return networks_; }
  // "A100-SXM4-80GB, H100-SXM5-80GB, ...", for error messages.
  std::string GpuNames() const;
  std::string NetworkNames() const;

 private:
  std::vector<GpuSpec> gpus_;  // In the order added; a replaced entry moves to the end.
  std::vector<NetworkSpec> networks_;
};

// "gpu 'X' is not in the specs (known: ...; add it with --specs FILE)".
Status UnknownGpu(std::string_view name, const SpecTable& specs);

}  // namespace lumos::modeler::models
