#include "modeler/trace/window_stamp.h"

#include <cstdio>

namespace lumos::modeler {
namespace {

constexpr uint64_t kNsPerSecond = 1'000'000'000;

struct Civil {
  int64_t year;
  unsigned month, day, hour, minute, second;
};

// Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant's algorithms).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

Civil CivilFromSeconds(uint64_t seconds) {
  const auto days = static_cast<int64_t>(seconds / 86400);
  const auto rest = static_cast<unsigned>(seconds % 86400);
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0);
  return {y, m, d, rest / 3600, rest / 60 % 60, rest % 60};
}

bool LeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && LeapYear(y) ? 29 : kDays[m - 1];
}

}  // namespace

std::string WindowStamp(uint64_t realtime_ns) {
  const Civil c = CivilFromSeconds(realtime_ns / kNsPerSecond);
  char text[40];
  std::snprintf(text, sizeof(text), "%04lld%02u%02uT%02u%02u%02uZ", static_cast<long long>(c.year),
                c.month, c.day, c.hour, c.minute, c.second);
  return text;
}

std::string Iso8601Utc(uint64_t realtime_ns) {
  const Civil c = CivilFromSeconds(realtime_ns / kNsPerSecond);
  char text[48];
  std::snprintf(text, sizeof(text), "%04lld-%02u-%02uT%02u:%02u:%02u.%06lluZ",
                static_cast<long long>(c.year), c.month, c.day, c.hour, c.minute, c.second,
                static_cast<unsigned long long>(realtime_ns % kNsPerSecond / 1000));
  return text;
}

std::optional<uint64_t> ParseWindowStamp(std::string_view text) {
  if (text.size() != 16 || text[8] != 'T' || text[15] != 'Z') return std::nullopt;
  auto number = [&text](size_t at, size_t digits) -> std::optional<unsigned> {
    unsigned value = 0;
    for (size_t i = at; i < at + digits; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      value = value * 10 + static_cast<unsigned>(text[i] - '0');
    }
    return value;
  };
  const auto year = number(0, 4), month = number(4, 2), day = number(6, 2);
  const auto hour = number(9, 2), minute = number(11, 2), second = number(13, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (*year < 1970 || *month < 1 || *month > 12 || *day < 1 || *day > DaysInMonth(*year, *month) ||
      *hour > 23 || *minute > 59 || *second > 59) {
    return std::nullopt;
  }
  const int64_t days = DaysFromCivil(*year, *month, *day);
  const uint64_t seconds = static_cast<uint64_t>(days) * 86400 + uint64_t{*hour} * 3600 +
                           uint64_t{*minute} * 60 + *second;
  return seconds * kNsPerSecond;
}

}  // namespace lumos::modeler
