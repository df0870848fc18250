// schema/README.md's field ledger, the `// Next id: N` comments and the descriptors agree:
// every message is in the ledger, with every field number, and its next id is above them all.
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "schema/lumos/trace.pb.h"

namespace lumos::schema {
namespace {

struct LedgerRow {
  int next_id = 0;
  std::string fields;
};

std::map<std::string, LedgerRow> ReadLedger() {
  std::ifstream in(std::string(LUMOS_SOURCE_DIR) + "/schema/README.md");
  std::map<std::string, LedgerRow> rows;
  std::regex row(R"(^\| `([\w.]+)` \| (\d+) \| (.*) \|$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) rows[m[1]] = {std::stoi(m[2]), m[3]};
  }
  return rows;
}

void CheckMessage(const google::protobuf::Descriptor* message,
                  const std::map<std::string, LedgerRow>& ledger, int* checked) {
  std::string name = message->full_name().substr(std::string("lumos.trace.").size());
  auto it = ledger.find(name);
  ASSERT_NE(it, ledger.end()) << name << " is missing from the ledger in schema/README.md";
  int max_number = 0;
  for (int i = 0; i < message->field_count(); ++i) {
    const auto* field = message->field(i);
    max_number = std::max(max_number, field->number());
    std::string entry = std::to_string(field->number()) + " `" + field->name() + "`";
    EXPECT_NE(it->second.fields.find(entry), std::string::npos) << name << ": " << entry;
  }
  EXPECT_GT(it->second.next_id, max_number) << name;
  ++*checked;
  for (int i = 0; i < message->nested_type_count(); ++i) {
    CheckMessage(message->nested_type(i), ledger, checked);
  }
}

TEST(LedgerTest, LedgerMatchesDescriptors) {
  std::map<std::string, LedgerRow> ledger = ReadLedger();
  const auto* file = ::lumos::trace::Trace::descriptor()->file();
  int checked = 0;
  for (int i = 0; i < file->message_type_count(); ++i) {
    CheckMessage(file->message_type(i), ledger, &checked);
  }
  EXPECT_EQ(checked, static_cast<int>(ledger.size())) << "the ledger lists unknown messages";
}

TEST(LedgerTest, NextIdCommentsMatchLedger) {
  std::ifstream in(std::string(LUMOS_SOURCE_DIR) + "/schema/lumos/trace.proto");
  std::stringstream text;
  text << in.rdbuf();
  std::string proto = text.str();
  std::map<std::string, LedgerRow> ledger = ReadLedger();
  std::regex message(R"(message (\w+) \{)");
  for (auto it = std::sregex_iterator(proto.begin(), proto.end(), message);
       it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1];
    // The message's own "Next id" is the first one after its nested messages close; find the
    // ledger's number in the text that follows the declaration.
    std::string key = name == "Reading" ? "ClockSnapshot.Reading" : name;
    ASSERT_TRUE(ledger.count(key)) << key;
    std::string expected = "// Next id: " + std::to_string(ledger[key].next_id);
    EXPECT_NE(proto.find(expected, it->position()), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace lumos::schema
