// Design: the constants of NCCL's own cost model (src/graph/tuning.cc and src/graph/
// tuning/nvls.cc in NCCL 2.19-2.29, ncclTopoTuneModel), which the collective model
// (collective_model.h) starts from where nothing was measured. Latencies in µs, indexed by
// protocol: LL, LL128, Simple. Values restated from NCCL's tables; the code is ours.
#pragma once

namespace lumos::modeler::models::nccl {

// baseLat, ring: the fixed latency of one call.
inline constexpr double kRingBaseUs[3] = {6.6, 14.0, 8.4};
// hwLat[NVLINK][RING]: per ring step over NVLink.
inline constexpr double kNvlinkStepUs[3] = {0.6, 1.9, 3.4};
// hwLat[NET][RING] and hwLat[NET][TREE]: per step over the network.
inline constexpr double kNetRingStepUs[3] = {2.7, 4.0, 14.0};
inline constexpr double kNetTreeStepUs[3] = {5.0, 8.5, 14.0};
// Link cost per byte relative to Simple: LL carries 4 data bytes per 8 (busBw x 0.5), LL128
// 120 per 128 (busBw x 0.92).
inline constexpr double kProtocolLinkFactor[3] = {2.0, 1.0 / 0.92, 1.0};
// What NCCL's ring reaches of a NIC's line rate across nodes (busBw): NVIDIA's measurements,
// 192 GB/s all-reduce on a DGX A100's 8x 200 Gb/s (NVIDIA/nccl#812) and "24 [GB/s] on perfect
// setups" per 200 Gb/s NIC (NVIDIA/nccl-tests#160); 46-48 GB/s per 400 Gb/s NDR NIC
// (NVIDIA/nccl-tests#290). Not NCCL's constant: the measured ratio, 192 / 200.
inline constexpr double kNetBusEfficiency = 0.96;
// Tree all-reduce: busBw x 0.92.
inline constexpr double kTreeEfficiency = 0.92;
// nvlsEfficiency[Hopper], and NVLS's base latency above ring Simple's (baseLat NVLS 23 µs
// against ring Simple 8.4 µs).
inline constexpr double kNvlsEfficiency = 0.85;
inline constexpr double kNvlsExtraBaseUs = 23.0 - 8.4;

// Per-architecture protocol limits (single node), GB/s: llMaxBws (LL, the whole collective)
// and perChMaxRingLL128Bws (LL128, per channel), for Volta, Ampere, Hopper, Blackwell
// (compute capability 7.x, 8.x, 9.x, 10.x). NCCL caps the LL and LL128 bandwidth with them;
// the model uses their ratio between two GPUs (the count of channels cancels).
inline constexpr double kLlMaxGbps[4] = {39.0, 87.7, 141.0, 282.0};
inline constexpr double kLl128PerChannelGbps[4] = {20.0, 20.0, 36.7, 40.0};

// The index of a compute capability (70, 80, 90, 100, ...) in those tables; -1: unknown.
inline constexpr int ArchIndex(unsigned compute_capability) {
  return compute_capability >= 100  ? 3
         : compute_capability >= 90 ? 2
         : compute_capability >= 80 ? 1
         : compute_capability >= 70 ? 0
                                    : -1;
}

}  // namespace lumos::modeler::models::nccl
