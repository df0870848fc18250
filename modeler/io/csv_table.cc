// CSV tables read whole; see csv_table.h.
#include "modeler/io/csv_table.h"

#include <charconv>
#include <utility>

#include "modeler/io/text_file.h"

namespace lumos::modeler::io {
namespace {

std::vector<std::string> SplitFields(std::string_view line) {
  std::vector<std::string> fields;
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    fields.emplace_back(io::Trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

}  // namespace

int CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string CsvTable::Where(size_t row) const {
  return path + ":" + std::to_string(row < lines.size() ? lines[row] : 0);
}

StatusOr<CsvTable> ParseCsv(std::string_view text, std::string path) {
  // A UTF-8 byte order mark (spreadsheets write one) is not part of the first column's name.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  CsvTable table;
  table.path = std::move(path);
  Status status = io::ForEachLine(text, [&](std::string_view line, size_t number) -> Status {
    if (io::Trim(line).empty()) return Status::Ok();
    if (line.find('"') != std::string_view::npos) {
      return ErrorStatus("%s:%zu: quoted fields are not supported", table.path.c_str(), number);
    }
    std::vector<std::string> fields = SplitFields(line);
    if (table.header.empty()) {
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].empty()) {
          return ErrorStatus("%s:%zu: column %zu of the header has no name", table.path.c_str(),
                             number, i + 1);
        }
        for (size_t j = 0; j < i; ++j) {
          if (fields[j] == fields[i]) {
            return ErrorStatus("%s:%zu: column '%s' twice in the header", table.path.c_str(),
                               number, fields[i].c_str());
          }
        }
      }
      table.header = std::move(fields);
      table.lines.push_back(number);  // lines[0]: the header, until the end.
      return Status::Ok();
    }
    if (fields.size() != table.header.size()) {
      return ErrorStatus("%s:%zu: %zu fields, the header has %zu", table.path.c_str(), number,
                         fields.size(), table.header.size());
    }
    table.rows.push_back(std::move(fields));
    table.lines.push_back(number);
    return Status::Ok();
  });
  LUMOS_RETURN_IF_ERROR(status);
  if (table.header.empty()) return ErrorStatus("%s: empty (no header line)", table.path.c_str());
  table.lines.erase(table.lines.begin());
  return table;
}

StatusOr<CsvTable> ReadCsv(const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(std::string text, io::ReadTextFile(path));
  return ParseCsv(text, path);
}

StatusOr<uint64_t> ParseWholeNumber(std::string_view text, std::string_view column, uint64_t max) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0) {
    return ErrorStatus("%.*s: '%.*s' must be a whole number > 0", static_cast<int>(column.size()),
                       column.data(), static_cast<int>(text.size()), text.data());
  }
  if (value > max) {
    return ErrorStatus("%.*s: %llu is more than %llu", static_cast<int>(column.size()),
                       column.data(), static_cast<unsigned long long>(value),
                       static_cast<unsigned long long>(max));
  }
  return value;
}

}  // namespace lumos::modeler::io
