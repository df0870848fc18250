// Design: chaining the agent's NVTX injection to another injection library (LUMOS_NVTX_CHAIN;
// cupti = CUPTI's own, whose MARKER activity Nsight-style tools read). NVTX loads one injection
// per process; when the agent is it, the other library would see no ranges. So at
// InitializeInjectionNvtx2 the agent loads the chained library and calls ITS
// InitializeInjectionNvtx2 first, then installs its own handlers, which record as before and
// then call the chained library's handler (returning its result where NVTX expects one).
//
// The chained library gets a wrapped export-table getter, not NVTX's own: for CORE and CORE2 it
// sees shadow tables in which the slots the agent hooks (kChainedCoreSlots/kChainedCore2Slots)
// point at this file's NvtxChainSlots, and every other slot at NVTX's real slot. So whatever the
// chained library writes into a hooked slot, at init or later (libcupti.so.13 returns 1 from its
// init without even asking for the tables when there is no driver, so it may patch them
// later), lands where the agent's handlers read it and never overwrites the agent's handlers;
// the slots the agent leaves alone (wide-char calls, naming) are the chained library's
// directly. Other modules and export tables pass through unchanged.
//
// Every NVTX instance in the process (the application's, NCCL's, each library carrying the
// header) calls InitializeInjectionNvtx2 once with its own tables: each gets its own wrapped
// getter (up to kMaxChainedNvtxInstances; later ones get the agent's handlers without the
// chain, and one warning). The chained handlers are shared by all instances: an NVTX handler
// gets no instance context, so a tool installs the same functions in every instance.
//
// Fail open (STYLE.md 3.2): library missing, no InitializeInjectionNvtx2, its init returning 0
// (the shadow slots are then cleared and the real slots it touched restored), or the chain
// looping back into the agent: one warning, the agent's handlers alone. The chained library is
// never closed (it may have started threads; CUPTI does).
// Hot path: a chained call is one acquire load of its slot and one indirect call; with the chain
// off the slot is null and the handler only pays the load.
#pragma once

// We are the tool, not a user: only the types, not NVTX's own implementation.
#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL
#endif
#include <nvtx3/nvToolsExt.h>

#include <atomic>

#include "agent/core/agent_config.h"

namespace lumos::agent {

inline constexpr int kMaxChainedNvtxInstances = 16;

// The slots the agent writes its handlers into. The last five (CORE2) are only written while
// chaining: they take domain handles, which the agent translates before passing them on.
inline constexpr unsigned kChainedCoreSlots[] = {
    NVTX_CBID_CORE_MarkEx,      NVTX_CBID_CORE_MarkA,    NVTX_CBID_CORE_RangeStartEx,
    NVTX_CBID_CORE_RangeStartA, NVTX_CBID_CORE_RangeEnd, NVTX_CBID_CORE_RangePushEx,
    NVTX_CBID_CORE_RangePushA,  NVTX_CBID_CORE_RangePop,
};
inline constexpr unsigned kChainedCore2Slots[] = {
    NVTX_CBID_CORE2_DomainMarkEx,          NVTX_CBID_CORE2_DomainRangeStartEx,
    NVTX_CBID_CORE2_DomainRangeEnd,        NVTX_CBID_CORE2_DomainRangePushEx,
    NVTX_CBID_CORE2_DomainRangePop,        NVTX_CBID_CORE2_DomainRegisterStringA,
    NVTX_CBID_CORE2_DomainCreateA,         NVTX_CBID_CORE2_DomainResourceCreate,
    NVTX_CBID_CORE2_DomainNameCategoryA,   NVTX_CBID_CORE2_DomainNameCategoryW,
    NVTX_CBID_CORE2_DomainRegisterStringW, NVTX_CBID_CORE2_DomainDestroy,
};

// The chained library's handlers for the hooked slots (null: none). Written by the chained
// library with plain stores through the shadow tables, read by the agent's handlers.
struct NvtxChainSlots {
  NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE];
  NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE];
};
extern NvtxChainSlots g_nvtx_chain_slots;

// The chained handler for a hooked slot, as type Fn; null when there is none. Acquire: the
// chained library stored the pointer after setting up what its handler uses (a plain store,
// which on x86-64 and AArch64 is single-copy atomic for an aligned pointer).
template <typename Fn>
inline Fn ChainedCore(unsigned index) {
  return reinterpret_cast<Fn>(std::atomic_ref<NvtxFunctionPointer>(g_nvtx_chain_slots.core[index])
                                  .load(std::memory_order_acquire));
}
template <typename Fn>
inline Fn ChainedCore2(unsigned index) {
  return reinterpret_cast<Fn>(std::atomic_ref<NvtxFunctionPointer>(g_nvtx_chain_slots.core2[index])
                                  .load(std::memory_order_acquire));
}

// Loads the chained library once (config.nvtx_chain; kOff: does nothing, returns false) and
// calls its InitializeInjectionNvtx2 for this NVTX instance. shadow = true: through the wrapped
// getter (the agent then installs its handlers); false: with NVTX's own getter, the agent
// installing nothing (it does not record NVTX, and only passes the injection on). Returns true
// when the chained library initialized; on failure logs one warning (once per process).
// Registration path: locks, dlopen, logging.
bool InitializeNvtxChain(const AgentConfig& config, NvtxGetExportTableFunc_t get_export_table,
                         bool shadow) noexcept;

// Whether any chained library initialized (for this or an earlier NVTX instance).
bool NvtxChainActive() noexcept;

}  // namespace lumos::agent
