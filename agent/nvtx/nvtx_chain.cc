#include "agent/nvtx/nvtx_chain.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "agent/cupti/cupti_library.h"
#include "base/logging.h"

namespace lumos::agent {

NvtxChainSlots g_nvtx_chain_slots = {};

namespace {

// NVTX's tables hold 16 slots today; a newer NVTX may hold more, and the chained library then
// sees the first kMaxTableSlots (the rest are calls neither tool knows yet).
constexpr unsigned kMaxTableSlots = 64;

constexpr bool Hooked(const unsigned* begin, const unsigned* end, unsigned index) {
  return std::find(begin, end, index) != end;
}
bool HookedCore(unsigned index) {
  return Hooked(std::begin(kChainedCoreSlots), std::end(kChainedCoreSlots), index);
}
bool HookedCore2(unsigned index) {
  return Hooked(std::begin(kChainedCore2Slots), std::end(kChainedCore2Slots), index);
}

// One NVTX instance as the chained library sees it. Filled under g_mutex before the chained
// library gets the getter; read-only afterwards except `dead` (the chain failed: the getter
// then hands out nothing, also to a library that asks late).
struct ShadowInstance {
  NvtxGetExportTableFunc_t real_getter = nullptr;
  const NvtxExportTableCallbacks* real_callbacks = nullptr;
  NvtxExportTableCallbacks callbacks = {};  // Ours: GetModuleFunctionTable is ModuleTableFor<N>.
  NvtxFunctionPointer* core[kMaxTableSlots] = {};
  unsigned core_size = 0;
  NvtxFunctionPointer* core2[kMaxTableSlots] = {};
  unsigned core2_size = 0;
  std::atomic<bool> dead{false};
};

// Never destroyed (trivially destructible), reachable from the chained library at any time.
ShadowInstance g_instances[kMaxChainedNvtxInstances];
static_assert(std::is_trivially_destructible_v<ShadowInstance>);

std::mutex g_mutex;                   // Instance allocation, loading, warnings: registration only.
int g_instance_count = 0;             // Under g_mutex.
void* g_library = nullptr;            // Under g_mutex: the chained library, once loaded.
bool g_gave_up = false;               // Under g_mutex: a failure was reported; no more attempts.
std::atomic<bool> g_active{false};    // Some instance's chained init succeeded.
std::string* g_chain_name = nullptr;  // Under g_mutex (leaked: read by the exit check).

const void* GetExportTable(int instance, uint32_t table_id) noexcept {
  ShadowInstance& shadow = g_instances[instance];
  if (shadow.dead.load(std::memory_order_acquire)) return nullptr;
  if (table_id == NVTX_ETID_CALLBACKS) return &shadow.callbacks;
  return shadow.real_getter(table_id);
}

int GetModuleFunctionTable(int instance, NvtxCallbackModule module, NvtxFunctionTable* out_table,
                           unsigned int* out_size) noexcept {
  ShadowInstance& shadow = g_instances[instance];
  if (shadow.dead.load(std::memory_order_acquire) || out_table == nullptr || out_size == nullptr) {
    return 0;
  }
  if (module == NVTX_CB_MODULE_CORE) {
    *out_table = shadow.core;
    *out_size = shadow.core_size;
    return 1;
  }
  if (module == NVTX_CB_MODULE_CORE2) {
    *out_table = shadow.core2;
    *out_size = shadow.core2_size;
    return 1;
  }
  return shadow.real_callbacks->GetModuleFunctionTable(module, out_table, out_size);
}

// NVTX's getter carries no context, so each instance gets functions of its own.
template <int N>
const void* NVTX_API GetExportTableFor(uint32_t table_id) noexcept {
  return GetExportTable(N, table_id);
}
template <int N>
int NVTX_API ModuleTableFor(NvtxCallbackModule module, NvtxFunctionTable* out_table,
                            unsigned int* out_size) noexcept {
  return GetModuleFunctionTable(N, module, out_table, out_size);
}
template <int... N>
constexpr auto MakeGetters(std::integer_sequence<int, N...>) {
  struct Getters {
    NvtxGetExportTableFunc_t export_table[sizeof...(N)];
    decltype(&ModuleTableFor<0>) module_table[sizeof...(N)];
  };
  return Getters{{&GetExportTableFor<N>...}, {&ModuleTableFor<N>...}};
}
constexpr auto kGetters = MakeGetters(std::make_integer_sequence<int, kMaxChainedNvtxInstances>());

// Points the instance's shadow tables at g_nvtx_chain_slots for hooked slots, at NVTX's real
// slots otherwise. False when NVTX does not hand out its CORE/CORE2 tables.
bool BuildShadow(int instance, NvtxGetExportTableFunc_t real_getter) {
  ShadowInstance& shadow = g_instances[instance];
  shadow.real_getter = real_getter;
  shadow.real_callbacks =
      static_cast<const NvtxExportTableCallbacks*>(real_getter(NVTX_ETID_CALLBACKS));
  if (shadow.real_callbacks == nullptr ||
      shadow.real_callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      shadow.real_callbacks->GetModuleFunctionTable == nullptr) {
    return false;
  }
  shadow.callbacks.struct_size = sizeof(NvtxExportTableCallbacks);
  shadow.callbacks.GetModuleFunctionTable = kGetters.module_table[instance];
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned int core_size = 0, core2_size = 0;
  if (shadow.real_callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) == 0 ||
      shadow.real_callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) ==
          0 ||
      core == nullptr || core2 == nullptr) {
    return false;
  }
  shadow.core_size = std::min(core_size, kMaxTableSlots);
  for (unsigned i = 0; i < shadow.core_size; ++i) {
    shadow.core[i] =
        i < NVTX_CBID_CORE_SIZE && HookedCore(i) ? &g_nvtx_chain_slots.core[i] : core[i];
  }
  shadow.core2_size = std::min(core2_size, kMaxTableSlots);
  for (unsigned i = 0; i < shadow.core2_size; ++i) {
    shadow.core2[i] =
        i < NVTX_CBID_CORE2_SIZE && HookedCore2(i) ? &g_nvtx_chain_slots.core2[i] : core2[i];
  }
  return true;
}

// The values of NVTX's real slots the chained library may write directly (not hooked), so a
// failed init can be undone.
struct RealSlotValues {
  NvtxFunctionPointer core[kMaxTableSlots] = {};
  NvtxFunctionPointer core2[kMaxTableSlots] = {};
};
void SaveReal(const ShadowInstance& shadow, RealSlotValues* saved) {
  for (unsigned i = 0; i < shadow.core_size; ++i) {
    if (shadow.core[i] != nullptr) saved->core[i] = *shadow.core[i];
  }
  for (unsigned i = 0; i < shadow.core2_size; ++i) {
    if (shadow.core2[i] != nullptr) saved->core2[i] = *shadow.core2[i];
  }
}
void RestoreReal(const ShadowInstance& shadow, const RealSlotValues& saved) {
  for (unsigned i = 0; i < shadow.core_size; ++i) {
    if (shadow.core[i] != nullptr) *shadow.core[i] = saved.core[i];
  }
  for (unsigned i = 0; i < shadow.core2_size; ++i) {
    if (shadow.core2[i] != nullptr) *shadow.core2[i] = saved.core2[i];
  }
}

bool AnyChainedHandler() {
  for (unsigned i : kChainedCoreSlots) {
    if (ChainedCore<NvtxFunctionPointer>(i) != nullptr) return true;
  }
  for (unsigned i : kChainedCore2Slots) {
    if (ChainedCore2<NvtxFunctionPointer>(i) != nullptr) return true;
  }
  return false;
}

// At exit: a chained library that initialized but never installed a handler the agent calls
// (libcupti.so.13 without a CUDA driver) gave the user nothing; say so once.
void WarnIfChainNeverInstalled() {
  if (g_active.load(std::memory_order_acquire) && !AnyChainedHandler()) {
    const bool cupti = *g_chain_name == "cupti";
    LUMOS_LOG(Warn,
              "LUMOS_NVTX_CHAIN=%s: the chained library initialized but installed no NVTX "
              "handlers%s; the agent recorded NVTX alone",
              g_chain_name->c_str(), cupti ? " (libcupti does not without a CUDA driver)" : "");
  }
}

// One line, for the warning: the loader's attempts come one per line.
std::string OneLine(std::string text) {
  for (size_t pos; (pos = text.find("\n  ")) != std::string::npos;) text.replace(pos, 3, "; ");
  return text;
}

// Opens the chained library (once per process). Null with *why set when it cannot.
void* OpenChained(const AgentConfig& config, std::string* why) {
  if (config.nvtx_chain == NvtxChain::kCupti) {
    std::string tried;
    void* handle = cupti::OpenCuptiLibrary(config.cupti_library, &tried);
    if (handle == nullptr) *why = "libcupti.so.13 not found (tried: " + OneLine(tried) + ")";
    return handle;
  }
  // RTLD_LOCAL: its symbols stay out of the job's global scope, as NVTX itself loads an injection.
  void* handle = dlopen(config.nvtx_chain_library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    *why = "cannot load it: " + std::string(error != nullptr ? error : "dlopen failed");
  }
  return handle;
}

// Whether `fn` is in the same shared object as this code (a chain that loops back to the agent).
bool IsInThisObject(const void* fn) {
  Dl_info theirs{}, ours{};
  return dladdr(fn, &theirs) != 0 &&
         dladdr(reinterpret_cast<const void*>(&OpenChained), &ours) != 0 &&
         theirs.dli_fbase == ours.dli_fbase;
}

}  // namespace

bool InitializeNvtxChain(const AgentConfig& config, NvtxGetExportTableFunc_t get_export_table,
                         bool shadow) noexcept {
  if (config.nvtx_chain == NvtxChain::kOff || get_export_table == nullptr) return false;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_gave_up) return false;
  if (g_chain_name == nullptr) {
    g_chain_name = new (std::nothrow) std::string(
        config.nvtx_chain == NvtxChain::kCupti ? std::string("cupti") : config.nvtx_chain_library);
    if (g_chain_name == nullptr) return false;  // Out of memory: NVTX unchained, never a throw.
  }
  const char* alone = shadow ? "the agent records NVTX alone" : "NVTX is not chained";
  auto give_up = [&](const std::string& why) {
    g_gave_up = true;
    LUMOS_LOG(Warn, "LUMOS_NVTX_CHAIN=%s: %s; %s", g_chain_name->c_str(), why.c_str(), alone);
    return false;
  };
  if (g_library == nullptr) {
    std::string why;
    g_library = OpenChained(config, &why);
    if (g_library == nullptr) return give_up(why);
  }
  auto init = reinterpret_cast<NvtxInitializeInjectionNvtxFunc_t>(
      dlsym(g_library, "InitializeInjectionNvtx2"));
  if (init == nullptr) return give_up("the library has no InitializeInjectionNvtx2");
  if (IsInThisObject(reinterpret_cast<const void*>(init))) {
    return give_up("that is the agent itself");
  }
  if (!shadow) {
    // The agent records no NVTX: the chained library gets NVTX's own tables, as if alone.
    if (init(get_export_table) == 0) return give_up("its InitializeInjectionNvtx2 returned 0");
    g_active.store(true, std::memory_order_release);
    return true;
  }
  if (g_instance_count == kMaxChainedNvtxInstances) {
    // Earlier instances keep their chain; this one's NVTX calls reach the agent only.
    return give_up("more than " + std::to_string(kMaxChainedNvtxInstances) +
                   " NVTX instances in the process; the later ones are not chained");
  }
  const int instance = g_instance_count;
  if (!BuildShadow(instance, get_export_table)) return give_up("NVTX has no CORE/CORE2 tables");
  ++g_instance_count;
  RealSlotValues saved;
  SaveReal(g_instances[instance], &saved);
  if (init(kGetters.export_table[instance]) == 0) {
    g_instances[instance].dead.store(true, std::memory_order_release);
    RestoreReal(g_instances[instance], saved);
    // Its half-written handlers must never be called (unless an earlier instance's chain works).
    if (!g_active.load(std::memory_order_acquire)) {
      for (NvtxFunctionPointer& slot : g_nvtx_chain_slots.core) {
        std::atomic_ref<NvtxFunctionPointer>(slot).store(nullptr, std::memory_order_release);
      }
      for (NvtxFunctionPointer& slot : g_nvtx_chain_slots.core2) {
        std::atomic_ref<NvtxFunctionPointer>(slot).store(nullptr, std::memory_order_release);
      }
    }
    return give_up("its InitializeInjectionNvtx2 returned 0");
  }
  if (!g_active.exchange(true, std::memory_order_acq_rel)) atexit(&WarnIfChainNeverInstalled);
  return true;
}

bool NvtxChainActive() noexcept { return g_active.load(std::memory_order_acquire); }

}  // namespace lumos::agent
