// Design: sizes of memory users give (the agent's LUMOS_* byte sizes, the modeler's
// --max-memory) and the budget a modeler command may plan to use before it allocates: by
// default half of this machine's physical memory, less when an address-space limit (ulimit -v)
// is lower, so a command refuses a job it cannot finish instead of being killed halfway.
// Threading: pure functions (the budget reads sysconf and getrlimit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lumos {

// A byte size: decimal digits, optionally followed by K, M, G or T (binary multiples, any case),
// optionally followed by "B" or "iB": "65536", "64K", "64KiB", "1m", "2GB". nullopt when
// malformed or above 2^62.
std::optional<uint64_t> ParseSizeBytes(std::string_view text);

// "512 B", "3.2 MiB", "41.0 GiB", "9.9 TiB": for messages.
std::string FormatBytes(double bytes);

// This machine's physical memory (sysconf), 0 when unknown.
uint64_t PhysicalMemoryBytes();

// The default planning budget: half the physical memory, capped by RLIMIT_AS when set
// (at most 3/4 of it: the process's code and inputs need the rest); 4 GiB when neither is known.
uint64_t DefaultMemoryBudget();

// The process's budget: what SetMemoryBudget set (lumos-model: LUMOS_MAX_MEMORY, a command's
// --max-memory), else DefaultMemoryBudget(). Set it before any thread reads it.
uint64_t MemoryBudget();
void SetMemoryBudget(uint64_t bytes);
// Whether the budget was set by the user (messages name the knob).
bool MemoryBudgetWasSet();

}  // namespace lumos
