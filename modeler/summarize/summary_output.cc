#include "modeler/summarize/summary_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/status.h"

namespace lumos::modeler::summarize {
namespace {

constexpr size_t kFlushBytes = 1 << 20;
constexpr const char kManifest[] = "manifest.json";
constexpr const char kFormatName[] = "lumos-summary";

bool Exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

// A directory holding a manifest.json of this format.
bool IsSummary(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  std::ifstream in(dir + "/" + kManifest);
  if (!in) return false;
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  std::string wanted = "\"format\":\"";
  wanted += kFormatName;
  wanted += '"';
  return head.find(wanted) != std::string::npos;
}

// Removes the files a summary consists of, then the directory; what else is there stays
// (and keeps the directory).
Status RemoveSummary(const std::string& dir) {
  std::vector<std::string> names = {kManifest};
  for (Table t : kTables) {
    for (Format f : {Format::kNdjson, Format::kCsv}) names.push_back(SummaryOutput::FileName(t, f));
  }
  for (const std::string& name : names) {
    std::string path = dir;
    path += '/';
    path += name;
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return ErrorStatus("%s: cannot remove: %s", path.c_str(), std::strerror(errno));
    }
  }
  if (rmdir(dir.c_str()) != 0) {
    return ErrorStatus("%s: the replaced summary's directory holds other files: left there (%s)",
                       dir.c_str(), std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

std::string SummaryOutput::FileName(Table table, Format format) {
  return std::string(TableName(table)) + "." + FormatExtension(format);
}

Status CheckOutput(const std::string& out, bool force) {
  if (out.empty()) return Status::Error("-o: an empty path");
  std::string trimmed = out;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  if (Exists(trimmed + ".partial")) {
    return ErrorStatus(
        "%s.partial exists: another summarize is writing it, or one was killed (remove it)",
        trimmed.c_str());
  }
  if (!Exists(trimmed)) return Status::Ok();
  if (!force) return ErrorStatus("%s exists (--force replaces a summary)", trimmed.c_str());
  if (!IsSummary(trimmed)) {
    return ErrorStatus(
        "%s exists and is not a summary directory (no lumos-summary "
        "manifest.json): not replaced, even with --force",
        trimmed.c_str());
  }
  // A summary with other files in it: --force would swap them into OUT.partial (which then
  // blocks the next run). Refused before anything is read, naming them.
  std::vector<std::string> others;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(trimmed, error)) {
    const std::string name = entry.path().filename().string();
    bool ours = name == "manifest.json";
    for (Table t : kTables) {
      for (Format f : {Format::kNdjson, Format::kCsv})
        ours = ours || name == SummaryOutput::FileName(t, f);
    }
    if (!ours) others.push_back(name);
  }
  if (error) return ErrorStatus("%s: %s", trimmed.c_str(), error.message().c_str());
  if (!others.empty()) {
    std::string list;
    for (size_t i = 0; i < others.size() && i < 5; ++i) list += (i ? ", " : "") + others[i];
    if (others.size() > 5) list += ", ... (" + std::to_string(others.size()) + " in all)";
    return ErrorStatus(
        "%s is a summary directory holding files summarize did not write (%s): not replaced, "
        "even with --force (move them, or choose another -o)",
        trimmed.c_str(), list.c_str());
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<SummaryOutput>> SummaryOutput::Create(const std::string& out,
                                                               Format format) {
  std::unique_ptr<SummaryOutput> o(new SummaryOutput());
  o->out_ = out;
  while (o->out_.size() > 1 && o->out_.back() == '/') o->out_.pop_back();
  o->partial_ = o->out_ + ".partial";
  o->format_ = format;
  LUMOS_RETURN_IF_ERROR(o->set_.UseDirectory(o->partial_));
  for (Table t : kTables) {
    LUMOS_ASSIGN_OR_RETURN(io::OutputFile * file,
                           o->set_.Add(o->partial_ + "/" + FileName(t, format)));
    o->files_[static_cast<int>(t)] = file;
    if (format == Format::kCsv) o->buffers_[static_cast<int>(t)] = CsvHeader(t);
  }
  return o;
}

Status SummaryOutput::Flush(Table table, bool all) {
  std::string& buffer = buffers_[static_cast<int>(table)];
  if (buffer.empty() || (!all && buffer.size() < kFlushBytes)) return Status::Ok();
  Status status = files_[static_cast<int>(table)]->Write(buffer);
  buffer.clear();
  return status;
}

Status SummaryOutput::Add(Table table, const std::vector<std::vector<Value>>& rows) {
  std::string& buffer = buffers_[static_cast<int>(table)];
  for (const std::vector<Value>& row : rows) {
    AppendRow(format_, table, row, &buffer);
    ++rows_[static_cast<int>(table)];
    if (buffer.size() >= kFlushBytes) LUMOS_RETURN_IF_ERROR(Flush(table, false));
  }
  return Status::Ok();
}

Status SummaryOutput::Commit(const std::string& windows_json, bool force) {
  for (Table t : kTables) LUMOS_RETURN_IF_ERROR(Flush(t, true));
  std::ostringstream m;
  m << "{\"format\":\"" << kFormatName << "\",\"summary_version\":" << kSummaryVersion
    << ",\"producer\":\"lumos-model summarize\",\"row_format\":\"" << FormatExtension(format_)
    << "\",\n\"tables\":[";
  for (Table t : kTables) {
    if (t != Table::kIterations) m << ",";
    m << "\n{\"name\":\"" << TableName(t) << "\",\"file\":\"" << FileName(t, format_)
      << "\",\"rows\":" << rows_[static_cast<int>(t)] << ",\"columns\":[";
    bool first = true;
    for (const Column& c : Columns(t)) {
      m << (first ? "" : ",") << "{\"name\":\"" << c.name << "\",\"type\":\""
        << ColumnTypeName(c.type) << "\"}";
      first = false;
    }
    m << "]}";
  }
  m << "],\n\"windows\":" << windows_json << "}\n";
  LUMOS_ASSIGN_OR_RETURN(io::OutputFile * manifest, set_.Add(partial_ + "/" + kManifest));
  LUMOS_RETURN_IF_ERROR(manifest->Write(m.str()));
  LUMOS_RETURN_IF_ERROR(set_.Commit());
  if (renameat2(AT_FDCWD, partial_.c_str(), AT_FDCWD, out_.c_str(), RENAME_NOREPLACE) == 0) {
    return Status::Ok();
  }
  if (errno != EEXIST || !force) {
    return ErrorStatus("%s: cannot rename to %s: %s (the summary is complete in %s)",
                       partial_.c_str(), out_.c_str(), std::strerror(errno), partial_.c_str());
  }
  if (!IsSummary(out_)) {
    return ErrorStatus(
        "%s appeared meanwhile and is not a summary: not replaced (the summary is "
        "complete in %s)",
        out_.c_str(), partial_.c_str());
  }
  if (renameat2(AT_FDCWD, partial_.c_str(), AT_FDCWD, out_.c_str(), RENAME_EXCHANGE) != 0) {
    return ErrorStatus("%s: cannot replace %s: %s (the summary is complete in %s)",
                       partial_.c_str(), out_.c_str(), std::strerror(errno), partial_.c_str());
  }
  return RemoveSummary(partial_);  // The old summary, now there.
}

}  // namespace lumos::modeler::summarize
