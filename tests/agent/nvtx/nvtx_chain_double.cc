// A stand-in NVTX injection library for the chaining tests (LUMOS_NVTX_CHAIN=<this .so>): it
// exports InitializeInjectionNvtx2, counts the calls each NVTX entry point sends it, checks that
// every domain/string handle and range id it receives is one it handed out, and at exit writes
// "<name> <count>" lines to $NVTX_CHAIN_DOUBLE_REPORT. Its results are recognizable: push/pop
// return 100 + depth, range ids start at 1000001, handles point into its own arrays.
// $NVTX_CHAIN_DOUBLE_MODE:
//   eager (default): installs every handler in its init, as NVTX injections usually do.
//   lazy: installs only NameOsThreadA in its init, the rest at the first NameOsThreadA call,
//     through the getter it kept (as a library that patches the tables later would).
//   fail: installs every handler, then returns 0 from its init.
//   none: returns 1 and installs nothing (what libcupti.so.13 does without a CUDA driver).
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>

#include <atomic>
#include <cstdio>
#include <cstring>

namespace {

enum Counter {
  kInit,
  kRangePushA,
  kRangePushEx,
  kRangePop,
  kRangeStartA,
  kRangeStartEx,
  kRangeEnd,
  kMarkA,
  kMarkEx,
  kNameOsThreadA,
  kDomainCreateA,
  kDomainRegisterStringA,
  kDomainRangePushEx,
  kDomainRangePop,
  kDomainRangeStartEx,
  kDomainRangeEnd,
  kDomainMarkEx,
  kDomainDestroy,
  kNullDomain,     // Domain calls with a null handle (the default domain).
  kForeignDomain,  // Domain handles this library never made.
  kForeignString,  // Registered-string handles this library never made.
  kUnknownEnd,     // Range ids this library never issued, or ended twice.
  kCounters,
};
constexpr const char* kCounterNames[kCounters] = {
    "init",
    "RangePushA",
    "RangePushEx",
    "RangePop",
    "RangeStartA",
    "RangeStartEx",
    "RangeEnd",
    "MarkA",
    "MarkEx",
    "NameOsThreadA",
    "DomainCreateA",
    "DomainRegisterStringA",
    "DomainRangePushEx",
    "DomainRangePop",
    "DomainRangeStartEx",
    "DomainRangeEnd",
    "DomainMarkEx",
    "DomainDestroy",
    "null_domain",
    "foreign_domain",
    "foreign_string",
    "unknown_end",
};

std::atomic<int> g_counts[kCounters];
void Count(Counter counter) { g_counts[counter].fetch_add(1, std::memory_order_relaxed); }

constexpr int kMaxHandles = 64;
char g_domains[kMaxHandles];  // A domain handle is the address of one of these bytes.
char g_strings[kMaxHandles];
std::atomic<int> g_next_domain{0}, g_next_string{0};

constexpr uint64_t kFirstRangeId = 1000001;
constexpr int kMaxRanges = 256;
std::atomic<uint64_t> g_next_range{kFirstRangeId};
std::atomic<bool> g_open[kMaxRanges];

thread_local int t_depth = 0;
NvtxGetExportTableFunc_t g_get_export_table = nullptr;

void CheckDomain(nvtxDomainHandle_t domain) {
  const char* handle = reinterpret_cast<const char*>(domain);
  if (handle == nullptr) {
    Count(kNullDomain);
  } else if (handle < g_domains || handle >= g_domains + g_next_domain.load()) {
    Count(kForeignDomain);
  }
}
void CheckAttributes(const nvtxEventAttributes_t* attributes) {
  if (attributes == nullptr || attributes->messageType != NVTX_MESSAGE_TYPE_REGISTERED) return;
  const char* handle = reinterpret_cast<const char*>(attributes->message.registered);
  if (handle < g_strings || handle >= g_strings + g_next_string.load()) Count(kForeignString);
}
int Push() { return 100 + t_depth++; }
int Pop() { return t_depth > 0 ? 100 + --t_depth : -1; }
nvtxRangeId_t Start() {
  const uint64_t id = g_next_range.fetch_add(1);
  if (id - kFirstRangeId < kMaxRanges) g_open[id - kFirstRangeId].store(true);
  return id;
}
void End(nvtxRangeId_t id) {
  if (id < kFirstRangeId || id - kFirstRangeId >= kMaxRanges ||
      !g_open[id - kFirstRangeId].exchange(false)) {
    Count(kUnknownEnd);
  }
}

int NVTX_API RangePushA(const char*) { return Count(kRangePushA), Push(); }
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) {
  return Count(kRangePushEx), CheckAttributes(a), Push();
}
int NVTX_API RangePop() { return Count(kRangePop), Pop(); }
nvtxRangeId_t NVTX_API RangeStartA(const char*) { return Count(kRangeStartA), Start(); }
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) {
  return Count(kRangeStartEx), CheckAttributes(a), Start();
}
void NVTX_API RangeEnd(nvtxRangeId_t id) { Count(kRangeEnd), End(id); }
void NVTX_API MarkA(const char*) { Count(kMarkA); }
void NVTX_API MarkEx(const nvtxEventAttributes_t* a) { Count(kMarkEx), CheckAttributes(a); }
nvtxDomainHandle_t NVTX_API DomainCreateA(const char*) {
  Count(kDomainCreateA);
  const int index = g_next_domain.fetch_add(1);
  return index < kMaxHandles ? reinterpret_cast<nvtxDomainHandle_t>(&g_domains[index]) : nullptr;
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t domain, const char*) {
  Count(kDomainRegisterStringA), CheckDomain(domain);
  const int index = g_next_string.fetch_add(1);
  return index < kMaxHandles ? reinterpret_cast<nvtxStringHandle_t>(&g_strings[index]) : nullptr;
}
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  return Count(kDomainRangePushEx), CheckDomain(domain), CheckAttributes(a), Push();
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t domain) {
  return Count(kDomainRangePop), CheckDomain(domain), Pop();
}
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t domain,
                                          const nvtxEventAttributes_t* a) {
  return Count(kDomainRangeStartEx), CheckDomain(domain), CheckAttributes(a), Start();
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id) {
  Count(kDomainRangeEnd), CheckDomain(domain), End(id);
}
void NVTX_API DomainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  Count(kDomainMarkEx), CheckDomain(domain), CheckAttributes(a);
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t domain) {
  Count(kDomainDestroy), CheckDomain(domain);
}

bool Tables(NvtxFunctionTable* core, unsigned* core_size, NvtxFunctionTable* core2,
            unsigned* core2_size) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(g_get_export_table(NVTX_ETID_CALLBACKS));
  return callbacks != nullptr &&
         callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, core, core_size) != 0 &&
         callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, core2, core2_size) != 0;
}

template <typename Fn>
void Set(NvtxFunctionTable table, unsigned size, unsigned index, Fn fn) {
  if (index < size && table[index] != nullptr) {
    *table[index] = reinterpret_cast<NvtxFunctionPointer>(fn);
  }
}

void InstallAll() {
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (!Tables(&core, &core_size, &core2, &core2_size)) return;
  Set(core, core_size, NVTX_CBID_CORE_RangePushA, &RangePushA);
  Set(core, core_size, NVTX_CBID_CORE_RangePushEx, &RangePushEx);
  Set(core, core_size, NVTX_CBID_CORE_RangePop, &RangePop);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartA, &RangeStartA);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartEx, &RangeStartEx);
  Set(core, core_size, NVTX_CBID_CORE_RangeEnd, &RangeEnd);
  Set(core, core_size, NVTX_CBID_CORE_MarkA, &MarkA);
  Set(core, core_size, NVTX_CBID_CORE_MarkEx, &MarkEx);
  Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &DomainCreateA);
  Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &DomainRegisterStringA);
  Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &DomainRangePushEx);
  Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &DomainRangePop);
  Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &DomainRangeStartEx);
  Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &DomainRangeEnd);
  Set(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &DomainMarkEx);
  Set(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &DomainDestroy);
}

std::atomic<bool> g_lazy_done{false};

void NVTX_API NameOsThreadA(uint32_t, const char*) {
  Count(kNameOsThreadA);
  if (!g_lazy_done.exchange(true)) InstallAll();
}

void InstallNameOsThread() {
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (Tables(&core, &core_size, &core2, &core2_size)) {
    Set(core, core_size, NVTX_CBID_CORE_NameOsThreadA, &NameOsThreadA);
  }
}

void WriteReport() {
  const char* path = getenv("NVTX_CHAIN_DOUBLE_REPORT");
  if (path == nullptr) return;
  FILE* file = std::fopen(path, "w");
  if (file == nullptr) return;
  for (int i = 0; i < kCounters; ++i)
    std::fprintf(file, "%s %d\n", kCounterNames[i], g_counts[i].load());
  std::fclose(file);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  if (g_counts[kInit].fetch_add(1) == 0) atexit(&WriteReport);
  g_get_export_table = get_export_table;
  const char* mode_env = getenv("NVTX_CHAIN_DOUBLE_MODE");
  const char* mode = mode_env != nullptr ? mode_env : "eager";
  if (std::strcmp(mode, "none") == 0) return 1;
  if (std::strcmp(mode, "lazy") == 0) {
    g_lazy_done = false;
    InstallNameOsThread();  // The rest at its first call.
    return 1;
  }
  g_lazy_done = true;
  InstallNameOsThread();
  InstallAll();
  return std::strcmp(mode, "fail") == 0 ? 0 : 1;
}
