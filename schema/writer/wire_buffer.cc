#include "schema/writer/wire_buffer.h"

#include "base/logging.h"

namespace lumos::schema {

void WireBuffer::Grow(size_t needed) {
  size_t capacity = capacity_ == 0 ? 4096 : capacity_;
  while (capacity < needed) capacity *= 2;
  auto* grown = static_cast<uint8_t*>(std::realloc(data_, capacity));
  LUMOS_CHECK(grown != nullptr);  // Out of memory: nothing sensible left to do.
  data_ = grown;
  capacity_ = capacity;
}

}  // namespace lumos::schema
