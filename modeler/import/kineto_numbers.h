// Design: numbers that are valid JSON but that simdjson refuses, and with them the whole
// document, without saying where: integers beyond 64 bits (below -2^63 or above 2^64 - 1) and
// values beyond a double's range (1e400). One such number (a corrupted id in one event) would
// otherwise refuse a whole trace. MarkOutOfRangeNumbers finds them and rewrites each, in place,
// as a JSON string of the same length made of kOutOfRangeByte, so the document parses; the
// event holding one is then dropped and counted like any event that cannot be converted
// (FindOutOfRange names the field), and the converter warns with the first byte offset.
// A number that is not valid JSON at all (01, 1., -) is reported with its byte offset.
// Private to modeler/import.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "modeler/import/kineto_json.h"

namespace lumos::modeler::kineto {

// DEL: valid unescaped in a JSON string, and never the whole of a real Kineto string.
inline constexpr char kOutOfRangeByte = '\x7f';

struct NumberScan {
  std::vector<size_t> out_of_range;  // Byte offsets of the numbers rewritten.
  bool malformed = false;            // A number that is not valid JSON: nothing rewritten after.
  size_t malformed_offset = 0;
};

// Scans the JSON text in [data, data + size) and rewrites its out-of-range numbers.
NumberScan MarkOutOfRangeNumbers(char* data, size_t size);

// Whether `value` holds a rewritten number; `path` gets where ("args.correlation", "ts").
bool FindOutOfRange(dom::element value, std::string* path);

}  // namespace lumos::modeler::kineto
