// Byte sizes and the memory budget; see memory_budget.h.
#include "base/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace lumos {
namespace {

// `text` without the blanks (spaces, tabs) around it.
std::string_view Trimmed(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

std::optional<uint64_t> ParseSizeBytes(std::string_view text) {
  text = Trimmed(text);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 19) return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 0; i < digits; ++i) value = value * 10 + static_cast<uint64_t>(text[i] - '0');
  std::string unit(Trimmed(text.substr(digits)));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // The multiple's letter, then nothing, "b" or "ib"; a bare "b" is bytes.
  static constexpr std::string_view kLetters = "kmgt";
  int shift = 0;
  if (!unit.empty() && unit != "b") {
    const size_t letter = kLetters.find(unit.front());
    const std::string_view rest = std::string_view(unit).substr(1);
    if (letter == std::string_view::npos || !(rest.empty() || rest == "b" || rest == "ib")) {
      return std::nullopt;
    }
    shift = 10 * static_cast<int>(letter + 1);
  }
  constexpr uint64_t kMax = uint64_t{1} << 62;
  if (value > (kMax >> shift)) return std::nullopt;
  return value << shift;
}

std::string FormatBytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  char text[64];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%.0f B", bytes);
  } else {
    std::snprintf(text, sizeof(text), "%.1f %s", bytes, kUnits[unit]);
  }
  return text;
}

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

namespace {
uint64_t g_budget = 0;  // 0: not set.
}  // namespace

uint64_t MemoryBudget() { return g_budget != 0 ? g_budget : DefaultMemoryBudget(); }
void SetMemoryBudget(uint64_t bytes) { g_budget = bytes; }
bool MemoryBudgetWasSet() { return g_budget != 0; }

uint64_t DefaultMemoryBudget() {
  uint64_t budget = PhysicalMemoryBytes() / 2;
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const uint64_t address_space = static_cast<uint64_t>(limit.rlim_cur) / 4 * 3;
    budget = budget == 0 ? address_space : std::min(budget, address_space);
  }
  return budget == 0 ? uint64_t{4} << 30 : budget;
}

}  // namespace lumos
