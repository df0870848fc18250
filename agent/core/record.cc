#include "agent/core/record.h"

namespace lumos::agent::internal {

void SetCutNvtxInlineName(Record* record, const char* text) {
  record->flags |= kRecordFlagNameTruncated;
  size_t length = kInlineNameBytes;
  // Back off while the first byte left out continues a character (10xxxxxx), so the kept prefix
  // ends on a character boundary. At most 3 steps for valid UTF-8. The caller found more than
  // kInlineNameBytes bytes before the terminator, so text[length] is readable.
  for (int i = 0; i < 3 && length > 0 && (static_cast<unsigned char>(text[length]) & 0xC0) == 0x80;
       ++i) {
    --length;
  }
  NvtxPayload& nvtx = record->payload.nvtx;
  std::memcpy(nvtx.name.text, text, length);
  nvtx.name_length = static_cast<uint8_t>(length);
}

}  // namespace lumos::agent::internal
