// Design: lenient readers for the values in Kineto JSON, over simdjson's DOM with its error-code
// API only (no exceptions). Kineto's writers changed over the years: ids are integers, but
// some producers quote them; times are integer µs, or fractional µs relative to
// `baseTimeNanoseconds` in newer versions; -1 often means "unknown". These helpers absorb that
// variety in one place. Private to modeler/import.
#pragma once

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lumos::modeler::kineto {

namespace dom = ::simdjson::dom;

// An integer, from an integer, an integral double or a decimal string.
inline std::optional<int64_t> AsInt(dom::element e) {
  switch (e.type()) {
    case dom::element_type::INT64: {
      int64_t v = 0;
      if (e.get_int64().get(v) == simdjson::SUCCESS) return v;
      return std::nullopt;
    }
    case dom::element_type::UINT64: {
      uint64_t v = 0;
      if (e.get_uint64().get(v) == simdjson::SUCCESS && v <= INT64_MAX) {
        return static_cast<int64_t>(v);
      }
      return std::nullopt;
    }
    case dom::element_type::DOUBLE: {
      double d = 0;
      if (e.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d) || d != std::trunc(d) ||
          std::fabs(d) > 9.0e18) {
        return std::nullopt;
      }
      return static_cast<int64_t>(d);
    }
    case dom::element_type::STRING: {
      std::string_view s;
      if (e.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
      int64_t v = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
      return v;
    }
    default:
      return std::nullopt;
  }
}

// An id where Kineto writes -1 (or nothing) for "unknown": the schema's 0.
inline uint64_t IdOrZero(const std::optional<int64_t>& v) {
  return v.has_value() && *v > 0 ? static_cast<uint64_t>(*v) : 0;
}
inline uint32_t Id32OrZero(const std::optional<int64_t>& v) {
  return v.has_value() && *v > 0 && *v <= UINT32_MAX ? static_cast<uint32_t>(*v) : 0;
}

inline std::string_view AsString(dom::element e) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return {};
  return s;
}

// A Kineto time in µs as integer ns. Integers convert exactly. A fractional value is split into
// whole and fractional µs (both exact in a double), so only the sub-µs part is rounded: exact
// to the ns while the value is below 2^43 µs (~100 days), which holds for Kineto's times
// relative to baseTimeNanoseconds. Returns false for non-numbers and out-of-range values.
inline bool MicrosToNanos(dom::element e, int64_t* ns, bool* fractional) {
  constexpr int64_t kMaxMicros = INT64_MAX / 1000;
  switch (e.type()) {
    case dom::element_type::INT64: {
      int64_t v = 0;
      if (e.get_int64().get(v) != simdjson::SUCCESS || v > kMaxMicros || v < -kMaxMicros) {
        return false;
      }
      *ns = v * 1000;
      return true;
    }
    case dom::element_type::UINT64: {
      uint64_t v = 0;
      if (e.get_uint64().get(v) != simdjson::SUCCESS || v > static_cast<uint64_t>(kMaxMicros)) {
        return false;
      }
      *ns = static_cast<int64_t>(v) * 1000;
      return true;
    }
    case dom::element_type::DOUBLE: {
      double d = 0;
      if (e.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d) ||
          std::fabs(d) >= static_cast<double>(kMaxMicros)) {
        return false;
      }
      double whole = std::trunc(d);
      *ns = static_cast<int64_t>(whole) * 1000 + std::llround((d - whole) * 1000.0);
      *fractional = true;
      return true;
    }
    default:
      return false;
  }
}

}  // namespace lumos::modeler::kineto
