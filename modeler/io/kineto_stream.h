// Design: reads a Kineto JSON document as a stream, so the memory an import takes follows the
// events it keeps, not the size of the text (a 14 MB .json.gz can expand to 3 GiB, and real
// traces of large jobs reach gigabytes). A small scanner walks the top-level object:
// the elements of "traceEvents" are handed out in batches of about kBatchBytes of JSON text,
// each made a complete JSON array "[e,e,...]" that simdjson parses (and validates) on its own;
// every other top-level member is collected into a small JSON object for the header
// (kineto_header.cc), the members before traceEvents as one piece and those after it as
// another (Kineto writes baseTimeNanoseconds before or after the events, by version).
// The scanner checks only the structure it walks (strings, nesting, separators); what it hands
// out is validated by simdjson, so malformed JSON is still refused, with a byte offset.
// A document that does not start with '{' is not streamed: it is read whole (within
// io::MaxDocumentBytes) so its error says what it is.
// Bounds: one piece (a batch, one element, a header member) at most io::MaxDocumentBytes();
// a header member above kMaxMemberBytes keeps its name with a null value (a PyTorch Execution
// Trace's "nodes" is recognised by its name). Read by modeler/import (the importer) and
// modeler/models/kernels (the non-GEMM kernel model's validation traces, kernel_kineto.h).
// Threading: one stream per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "modeler/io/byte_source.h"

namespace lumos::modeler::io {

inline constexpr size_t kBatchBytes = 4u << 20;
inline constexpr size_t kMaxMemberBytes = 64u << 20;

enum class KinetoPiece {
  kMembers,  // `text` is a JSON object: top-level members other than traceEvents.
  kEvents,   // `text` is a JSON array of `count` traceEvents elements, the first `first_index`.
  kEnd,      // The document ended (after its closing '}').
  kWhole,    // Not an object: `text` is the whole document (parse it for the right error).
};

struct PieceInfo {
  KinetoPiece kind = KinetoPiece::kEnd;
  size_t first_index = 0;     // kEvents: index of its first element in traceEvents.
  size_t count = 0;           // kEvents: elements in the batch.
  uint64_t text_offset = 0;   // Document offset of text[0] as if it were there (not kMembers).
  bool after_events = false;  // kMembers: the members after traceEvents.
};

class KinetoStream {
 public:
  // `head` holds the first bytes of the document, already read from `source` by the caller;
  // `name` identifies the input in messages.
  KinetoStream(std::string_view head, io::ByteSource* source, std::string name);

  // The next piece into `text` (replaced). Errors name the input and a byte offset.
  StatusOr<PieceInfo> Next(io::PaddedText* text);

  // Facts known once kEnd is returned.
  bool saw_events_array() const { return saw_events_array_; }
  bool has_member(std::string_view key) const;  // Any top-level key, even one left out.
  uint64_t bytes_read() const { return buffer_offset_ + pos_; }

 private:
  enum class State { kStart, kMembers, kEvents, kEnd };

  // The byte at pos_ (refilling the buffer), or -1 at the end of the input or on a read error
  // (kept in read_error_).
  int Peek() {
    if (pos_ < buffer_.size() || Refill()) return static_cast<unsigned char>(buffer_[pos_]);
    return -1;
  }
  bool Refill();
  void SkipSpace();
  bool SkipString();  // From the opening quote; false if the input ends inside it.
  bool SkipValue();   // Any JSON value, structure only; false if the input ends inside it.
  void Mark() { mark_ = pos_; }
  std::string_view Marked() const { return std::string_view(buffer_).substr(mark_, pos_ - mark_); }
  Status Unexpected(const char* what);
  Status TooLarge(const char* what);

  StatusOr<PieceInfo> ReadMembers(io::PaddedText* text);
  StatusOr<PieceInfo> ReadEvents(io::PaddedText* text);
  PieceInfo EmitMembers(io::PaddedText* text, bool after_events);

  io::ByteSource* source_;
  std::string name_;
  std::string buffer_;
  size_t pos_ = 0;
  static constexpr size_t kNoMark = static_cast<size_t>(-1);
  size_t mark_ = kNoMark;        // Bytes from here on are kept by Refill.
  uint64_t item_offset_ = 0;     // Document offset of the element or member being read.
  bool mark_droppable_ = false;  // A header member: past kMaxMemberBytes, dropped instead.
  bool mark_dropped_ = false;
  uint64_t buffer_offset_ = 0;  // Document offset of buffer_[0].
  bool input_ended_ = false;
  Status read_error_ = Status::Ok();
  Status too_large_ = Status::Ok();

  State state_ = State::kStart;
  std::string members_;  // "key":value,... collected since the last kMembers piece.
  std::string keys_;     // Every top-level key, '\n'-separated, for has_member().
  bool saw_events_array_ = false;
  size_t next_index_ = 0;     // Of the next traceEvents element.
  bool after_comma_ = false;  // In traceEvents: an element must come next.
};

}  // namespace lumos::modeler::io
