#include "modeler/io/json_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

namespace lumos::modeler::io {
namespace {

std::string Quoted(std::string_view value) {
  std::string out;
  AppendJsonString(value, &out);
  return out;
}

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Quoted("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(Quoted("line\nnext\ttab\r"), R"("line\nnext\ttab\r")");
  EXPECT_EQ(Quoted(std::string("nul\0x\x01\x1f\x7f", 8)), R"("nul\u0000x\u0001\u001f\u007f")");
}

TEST(JsonWriterTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Quoted("rank 0 \u00b7 h\u00f6st \u2192 \U0001F680"),
            "\"rank 0 \u00b7 h\u00f6st \u2192 \U0001F680\"");
  EXPECT_EQ(Quoted("\xff"), R"("\ufffd")");
  EXPECT_EQ(Quoted("a\xc3"), R"("a\ufffd")");                              // Cut short.
  EXPECT_EQ(Quoted("\xc0\xaf"), R"("\ufffd\ufffd")");                      // Overlong '/'.
  EXPECT_EQ(Quoted("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");            // Surrogate.
  EXPECT_EQ(Quoted("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");  // > U+10FFFF.
  // Whatever the bytes, a JSON parser accepts the result.
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse("[" + Quoted(all) + "]").get(doc), simdjson::SUCCESS);
}

TEST(JsonWriterTest, MicrosHaveThreeDecimals) {
  std::string out;
  AppendMicros(0, &out);
  out += " ";
  AppendMicros(1, &out);
  out += " ";
  AppendMicros(123456789, &out);
  out += " ";
  AppendMicros(UINT64_MAX, &out);
  EXPECT_EQ(out, "0.000 0.001 123456.789 18446744073709551.615");
}

TEST(JsonWriterTest, WritesNestedContainersWithSeparatorsAndFlushesInChunks) {
  std::string sink;
  int chunks = 0;
  JsonWriter json(
      [&](std::string_view chunk) {
        sink.append(chunk);
        ++chunks;
        return Status::Ok();
      },
      /*flush_bytes=*/16);
  json.BeginObject();
  json.Key("events");
  json.BeginArray(/*one_per_line=*/true);
  for (int i = 0; i < 3; ++i) {
    json.BeginObject();
    json.KeyInt("i", i);
    json.KeyMicros("ts", 1500 * static_cast<uint64_t>(i));
    json.EndObject();
  }
  json.EndArray();
  json.KeyUint("small", 1ull << 53);
  json.KeyUint("big", (1ull << 53) + 1);  // Would be rounded as a double.
  json.KeyInt("negative", -5);
  json.KeyBool("yes", true);
  json.Key("ratio");
  json.Fixed(2.0 / 3.0, 3);
  json.EndObject();
  ASSERT_TRUE(json.Finish().ok());
  EXPECT_EQ(sink,
            "{\"events\":[\n{\"i\":0,\"ts\":0.000},\n{\"i\":1,\"ts\":1.500},\n"
            "{\"i\":2,\"ts\":3.000}\n],\"small\":9007199254740992,"
            "\"big\":\"9007199254740993\",\"negative\":-5,\"yes\":true,\"ratio\":0.667}");
  EXPECT_GT(chunks, 2);
  EXPECT_EQ(json.bytes_written(), sink.size());
}

TEST(JsonWriterTest, FirstSinkErrorSticks) {
  int calls = 0;
  JsonWriter json(
      [&](std::string_view) {
        ++calls;
        return Status::Error("full");
      },
      /*flush_bytes=*/1);
  json.BeginArray();
  json.BeginObject();
  json.EndObject();
  json.BeginObject();
  json.EndObject();
  json.EndArray();
  EXPECT_FALSE(json.status().ok());
  EXPECT_EQ(json.Finish().message(), "full");
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace lumos::modeler::io
