#include "modeler/io/kineto_stream.h"

#include <algorithm>
#include <cstdio>

namespace lumos::modeler::io {
namespace {

constexpr size_t kReadChunk = 1 << 20;

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

bool IsSpace(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void Wrap(char open, std::string_view body, char close, io::PaddedText* text) {
  text->Resize(0);
  text->Reserve(body.size() + 2);
  text->Append(&open, 1);
  text->Append(body.data(), body.size());
  text->Append(&close, 1);
}

// Batches stay well inside a small budget too (LUMOS_MAX_MEMORY=64M in tests).
size_t BatchBytes() {
  return static_cast<size_t>(std::min<uint64_t>(kBatchBytes, io::MaxDocumentBytes() / 4 + 1));
}

}  // namespace

KinetoStream::KinetoStream(std::string_view head, io::ByteSource* source, std::string name)
    : source_(source), name_(std::move(name)), buffer_(head), keys_("\n") {}

bool KinetoStream::has_member(std::string_view key) const {
  std::string needle = "\n";
  needle += key;
  needle += '\n';
  return keys_.find(needle) != std::string::npos;
}

bool KinetoStream::Refill() {
  if (input_ended_ || !read_error_.ok() || !too_large_.ok()) return false;
  size_t keep = pos_;
  if (mark_ != kNoMark) {
    const size_t held = buffer_.size() - mark_;
    if (mark_droppable_ && held > kMaxMemberBytes) {
      mark_dropped_ = true;  // A huge header member: its name is enough.
      mark_ = kNoMark;
    } else if (held > io::MaxDocumentBytes()) {
      too_large_ = TooLarge(state_ == State::kEvents ? "one traceEvents element" : "one member");
      return false;
    } else {
      keep = mark_;
    }
  }
  // What is no longer needed goes once it is half the buffer: each byte is moved O(1) times.
  if (keep > 0 && keep >= buffer_.size() / 2) {
    buffer_.erase(0, keep);
    buffer_offset_ += keep;
    pos_ -= keep;
    if (mark_ != kNoMark) mark_ -= keep;
  }
  const size_t old = buffer_.size();
  buffer_.resize(old + kReadChunk);
  auto n = io::ReadFully(source_, buffer_.data() + old, kReadChunk);
  if (!n.ok()) {
    buffer_.resize(old);
    read_error_ = n.status();
    return false;
  }
  buffer_.resize(old + *n);
  if (*n == 0) input_ended_ = true;
  return pos_ < buffer_.size();
}

void KinetoStream::SkipSpace() {
  while (true) {
    const int c = Peek();
    if (!IsSpace(c)) return;
    ++pos_;
  }
}

bool KinetoStream::SkipString() {
  ++pos_;  // The opening quote.
  while (true) {
    if (pos_ >= buffer_.size() && !Refill()) return false;
    const char* begin = buffer_.data();
    const char* p = begin + pos_;
    const char* end = begin + buffer_.size();
    while (p < end && *p != '"' && *p != '\\') ++p;
    pos_ = static_cast<size_t>(p - begin);
    if (p == end) continue;
    ++pos_;
    if (*p == '"') return true;
    // A backslash: the byte after it is escaped, whatever it is.
    if (pos_ >= buffer_.size() && !Refill()) return false;
    ++pos_;
  }
}

bool KinetoStream::SkipValue() {
  const int first = Peek();
  if (first < 0) return false;
  if (first == '"') return SkipString();
  if (first == '{' || first == '[') {
    size_t depth = 0;
    while (true) {
      if (pos_ >= buffer_.size() && !Refill()) return false;
      const char* begin = buffer_.data();
      const char* p = begin + pos_;
      const char* end = begin + buffer_.size();
      for (; p < end; ++p) {
        const char c = *p;
        if (c == '"') break;
        if (c == '{' || c == '[') {
          ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
          pos_ = static_cast<size_t>(p - begin) + 1;
          return true;
        }
      }
      pos_ = static_cast<size_t>(p - begin);
      if (p < end && !SkipString()) return false;
    }
  }
  // A number, true, false or null: up to the next separator (simdjson checks what it is).
  while (true) {
    const int c = Peek();
    if (c < 0 || c == ',' || c == '}' || c == ']' || IsSpace(c)) return true;
    ++pos_;
  }
}

Status KinetoStream::TooLarge(const char* what) {
  return Status::Error(name_ + ": " + what + " at byte offset " + std::to_string(item_offset_) +
                       " is larger than " + io::DescribeDocumentBudget() + ": not read");
}

Status KinetoStream::Unexpected(const char* what) {
  char text[160];
  const int c = Peek();  // A failed read or a piece too large shows here first.
  if (!read_error_.ok()) return read_error_;
  if (!too_large_.ok()) return too_large_;
  if (c < 0) {
    std::snprintf(text, sizeof(text),
                  "the document ends early (at byte %llu) where %s was expected", Ull(bytes_read()),
                  what);
  } else {
    std::snprintf(text, sizeof(text), "%s expected at byte offset %llu, not '%c'", what,
                  Ull(bytes_read()), c >= 0x20 && c < 0x7f ? c : '?');
  }
  return Status::Error(name_ + ": not valid JSON: " + text);
}

PieceInfo KinetoStream::EmitMembers(io::PaddedText* text, bool after_events) {
  Wrap('{', members_, '}', text);
  members_.clear();
  PieceInfo info;
  info.kind = KinetoPiece::kMembers;
  info.after_events = after_events;
  return info;
}

StatusOr<PieceInfo> KinetoStream::Next(io::PaddedText* text) {
  switch (state_) {
    case State::kStart: {
      SkipSpace();
      if (Peek() != '{') {
        // Not an object: read whole (bounded), so simdjson says what is wrong with it.
        if (!read_error_.ok()) return read_error_;
        text->Resize(0);
        text->Append(buffer_.data() + pos_, buffer_.size() - pos_);
        LUMOS_RETURN_IF_ERROR(io::ReadRest(source_, text));
        state_ = State::kEnd;
        PieceInfo info;
        info.kind = KinetoPiece::kWhole;
        info.text_offset = buffer_offset_ + pos_;
        return info;
      }
      ++pos_;
      state_ = State::kMembers;
      return ReadMembers(text);
    }
    case State::kMembers:
      return ReadMembers(text);
    case State::kEvents:
      return ReadEvents(text);
    case State::kEnd:
      break;
  }
  return PieceInfo{};
}

StatusOr<PieceInfo> KinetoStream::ReadMembers(io::PaddedText* text) {
  // After '{' nothing or a member may follow; after a member, ',' or '}'.
  bool need_separator = saw_events_array_;
  bool need_member = false;
  while (true) {
    SkipSpace();
    int c = Peek();
    if (need_separator) {
      if (c == ',') {
        ++pos_;
        need_separator = false;
        need_member = true;
        continue;
      }
      if (c != '}') return Unexpected("',' or '}' after a top-level member");
    }
    if (c == '}' && !need_member) {
      ++pos_;
      SkipSpace();
      if (Peek() >= 0) return Unexpected("nothing more after the closing '}'");
      if (!read_error_.ok()) return read_error_;
      state_ = State::kEnd;
      return EmitMembers(text, saw_events_array_);
    }
    if (c != '"') return Unexpected("a member name (a string)");
    Mark();
    item_offset_ = bytes_read();
    if (!SkipString()) return Unexpected("the end of a member name");
    const std::string key_text(Marked());
    const std::string_view key = std::string_view(key_text).substr(1, key_text.size() - 2);
    keys_.append(key).push_back('\n');
    SkipSpace();
    if (Peek() != ':') return Unexpected("':' after a member name");
    ++pos_;
    SkipSpace();
    if (key == "traceEvents" && Peek() == '[' && !saw_events_array_) {
      ++pos_;
      mark_ = kNoMark;
      saw_events_array_ = true;
      state_ = State::kEvents;
      return EmitMembers(text, false);
    }
    mark_droppable_ = true;
    mark_dropped_ = false;
    const bool ended = !SkipValue();
    mark_droppable_ = false;
    if (ended) return Unexpected("the rest of a member's value");
    if (!members_.empty()) members_ += ',';
    if (mark_dropped_) {
      members_ += key_text;
      members_ += ":null";
    } else {
      members_ += Marked();
    }
    mark_ = kNoMark;
    if (members_.size() > io::MaxDocumentBytes()) {
      return Status::Error(name_ + ": the members outside traceEvents are larger than " +
                           io::DescribeDocumentBudget() + ": not read");
    }
    need_separator = true;
    need_member = false;
  }
}

StatusOr<PieceInfo> KinetoStream::ReadEvents(io::PaddedText* text) {
  PieceInfo info;
  info.kind = KinetoPiece::kEvents;
  info.first_index = next_index_;
  const size_t batch_bytes = BatchBytes();
  while (true) {
    SkipSpace();
    if (Peek() == ']' && info.count == 0 && !after_comma_) {
      ++pos_;  // The end of traceEvents, with no element left for this batch.
      state_ = State::kMembers;
      return ReadMembers(text);
    }
    if (info.count == 0) {
      Mark();
      info.text_offset = buffer_offset_ + pos_ - 1;  // Of the '[' wrapped around the batch.
    }
    const int c = Peek();
    if (c < 0 || c == ']' || c == ',') return Unexpected("a traceEvents element");
    item_offset_ = bytes_read();
    if (!SkipValue()) return Unexpected("the rest of a traceEvents element");
    ++next_index_;
    ++info.count;
    const size_t length = pos_ - mark_;  // Not pos_: a refill below may move the buffer.
    SkipSpace();
    const int separator = Peek();
    if (separator != ',' && separator != ']') {
      return Unexpected("',' or ']' after a traceEvents element");
    }
    ++pos_;
    after_comma_ = separator == ',';
    if (separator == ']' || length >= batch_bytes) {
      Wrap('[', std::string_view(buffer_).substr(mark_, length), ']', text);
      mark_ = kNoMark;
      if (separator == ']') state_ = State::kMembers;
      return info;
    }
  }
}

}  // namespace lumos::modeler::io
