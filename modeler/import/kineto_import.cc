#include "modeler/import/kineto_import.h"

#include <sys/stat.h>

#include <memory>
#include <set>

#include "modeler/io/byte_source.h"
#include "modeler/io/output_file.h"
#include "modeler/io/tar_reader.h"
#include "modeler/trace/trace_reader.h"

namespace lumos::modeler::kineto {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view BaseName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Archive members worth converting: JSON traces, not macOS resource forks ("._x.json").
bool IsTraceMember(std::string_view name) {
  std::string_view base = BaseName(name);
  if (base.substr(0, 2) == "._" || name.find("__MACOSX/") != std::string_view::npos) return false;
  return EndsWith(name, ".json") || EndsWith(name, ".json.gz");
}

struct OpenedInput {
  std::unique_ptr<io::ByteSource> source;
  std::string head;  // The first bytes, already read to recognise the format.
  bool tar = false;
};

StatusOr<OpenedInput> OpenInput(const std::string& path) {
  OpenedInput input;
  LUMOS_ASSIGN_OR_RETURN(input.source, io::OpenByteSource(path));
  input.head.resize(io::kTarBlock);
  LUMOS_ASSIGN_OR_RETURN(size_t n,
                         io::ReadFully(input.source.get(), input.head.data(), io::kTarBlock));
  input.head.resize(n);
  input.tar = n == io::kTarBlock && io::IsTarHeader(input.head.data());
  return input;
}

// One trace to convert: a whole input file or one member of an archive.
struct PlannedTrace {
  size_t input = 0;
  std::string member;  // Empty for a whole file.
  std::string source;
  std::string destination;
};

// Lists the traces of every input, in input and archive order.
StatusOr<std::vector<PlannedTrace>> ListTraces(const std::vector<std::string>& inputs) {
  std::vector<PlannedTrace> plan;
  for (size_t i = 0; i < inputs.size(); ++i) {
    LUMOS_ASSIGN_OR_RETURN(OpenedInput input, OpenInput(inputs[i]));
    if (!input.tar) {
      plan.push_back({i, "", inputs[i], ""});
      continue;
    }
    io::TarReader reader(input.source.get(), std::move(input.head));
    io::TarEntry entry;
    size_t found = 0;
    while (true) {
      LUMOS_ASSIGN_OR_RETURN(bool more, reader.Next(&entry));
      if (!more) break;
      if (!IsTraceMember(entry.name)) continue;
      plan.push_back({i, entry.name, inputs[i] + ":" + entry.name, ""});
      ++found;
    }
    if (found == 0) {
      return ErrorStatus("%s: the archive holds no .json or .json.gz trace", inputs[i].c_str());
    }
  }
  return plan;
}

// Where each trace goes. -o names a directory when it ends in '/', when it is one already, or
// when there are several traces (then it is created if missing); else it is the output file.
Status AssignDestinations(const ImportRequest& request, std::vector<PlannedTrace>* plan,
                          io::OutputSet* outputs) {
  const std::string& out = request.output;
  struct stat st {};
  const bool exists = ::stat(out.c_str(), &st) == 0;
  const bool is_directory = (exists && S_ISDIR(st.st_mode)) || EndsWith(out, "/");
  if (plan->size() == 1 && !is_directory) {
    (*plan)[0].destination = out;
  } else {
    if (!is_directory) {
      if (exists) {
        return ErrorStatus("%s exists and is not a directory; %zu traces need a directory",
                           out.c_str(), plan->size());
      }
      if (EndsWith(out, ".pb.zst")) {
        return ErrorStatus("%zu traces to write: -o needs a directory, not the file name %s",
                           plan->size(), out.c_str());
      }
    }
    LUMOS_RETURN_IF_ERROR(outputs->UseDirectory(out));
    std::set<std::string> used;
    for (PlannedTrace& trace : *plan) {
      std::string stem = TraceStem(trace.member.empty() ? trace.source : trace.member);
      trace.destination = out;
      if (!EndsWith(out, "/")) trace.destination += '/';
      trace.destination += stem;
      trace.destination += ".pb.zst";
      if (!used.insert(trace.destination).second) {
        return ErrorStatus("two inputs would both be written to %s (%s); rename one",
                           trace.destination.c_str(), trace.source.c_str());
      }
    }
  }
  for (const PlannedTrace& trace : *plan) {
    for (const std::string& input : request.inputs) {
      if (io::SameFile(trace.destination, input)) {
        return ErrorStatus("the output %s is the input %s: choose another output",
                           trace.destination.c_str(), input.c_str());
      }
    }
  }
  return Status::Ok();
}

// Converts one trace, the document `head` + the rest of `source`, into a new output of
// `outputs` (a temporary file until the set commits).
Status ConvertOne(std::string_view head, io::ByteSource* source, const PlannedTrace& trace,
                  ConvertOptions options, const io::ReplacePolicy& replace, io::OutputSet* outputs,
                  std::vector<ImportedTrace>* done) {
  options.source_path = trace.source;
  LUMOS_ASSIGN_OR_RETURN(io::OutputFile * file, outputs->Add(trace.destination, replace));
  ImportedTrace result{trace.source, trace.destination, {}};
  LUMOS_RETURN_IF_ERROR(file->Reword(
      ConvertKinetoStream(head, source, trace.source, file->write_path(), options, &result.stats)));
  LUMOS_RETURN_IF_ERROR(file->Finish());  // Closed now: one open file at a time.
  done->push_back(std::move(result));
  return Status::Ok();
}

}  // namespace

std::string TraceStem(std::string_view path) {
  std::string_view base = BaseName(path);
  for (std::string_view ext : {".json.gz", ".tar.gz", ".pb.zst", ".json", ".tgz", ".tar", ".gz"}) {
    if (EndsWith(base, ext) && base.size() > ext.size()) {
      base.remove_suffix(ext.size());
      break;
    }
  }
  return std::string(base);
}

StatusOr<std::vector<ImportedTrace>> ImportKineto(const ImportRequest& request) {
  if (request.inputs.empty()) return ErrorStatus("no input traces");
  if (request.output.empty()) return ErrorStatus("no output path");
  LUMOS_ASSIGN_OR_RETURN(std::vector<PlannedTrace> plan, ListTraces(request.inputs));
  // Every trace is written to a temporary file; all are renamed at the end, or none.
  io::OutputSet outputs;
  LUMOS_RETURN_IF_ERROR(AssignDestinations(request, &plan, &outputs));
  // Earlier imports are replaced; anything else at a destination only with --force.
  io::ReplacePolicy replace;
  replace.force = request.force;
  replace.own_trace = [](const std::string& path) {
    return TraceMadeBy(path, pb::PRODUCER_KINETO_IMPORT);
  };

  ConvertOptions options;
  options.zstd_level = request.zstd_level;
  options.job_id = !request.job_id.empty()      ? request.job_id
                   : request.inputs.size() == 1 ? TraceStem(request.inputs[0])
                                                : TraceStem(request.output);
  std::vector<ImportedTrace> done;
  io::PaddedText member_bytes;
  size_t next = 0;
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    LUMOS_ASSIGN_OR_RETURN(OpenedInput input, OpenInput(request.inputs[i]));
    if (!input.tar) {  // Streamed: a file of any size (gunzipped on the fly).
      LUMOS_RETURN_IF_ERROR(ConvertOne(input.head, input.source.get(), plan[next++], options,
                                       replace, &outputs, &done));
      continue;
    }
    io::TarReader reader(input.source.get(), std::move(input.head));
    io::TarEntry entry;
    while (true) {
      LUMOS_ASSIGN_OR_RETURN(bool more, reader.Next(&entry));
      if (!more) break;
      if (!IsTraceMember(entry.name)) continue;
      if (next >= plan.size() || plan[next].input != i || plan[next].member != entry.name) {
        return ErrorStatus("%s changed while it was being read", request.inputs[i].c_str());
      }
      // A member is read whole, as stored (within the budget), and streamed from memory:
      // gunzipped on the fly when it is a .json.gz.
      const PlannedTrace& trace = plan[next++];
      LUMOS_RETURN_IF_ERROR(reader.ReadBody(&member_bytes));
      LUMOS_ASSIGN_OR_RETURN(auto member, io::OpenMemorySource(member_bytes.data(),
                                                               member_bytes.size(), trace.source));
      LUMOS_RETURN_IF_ERROR(ConvertOne({}, member.get(), trace, options, replace, &outputs, &done));
    }
  }
  if (next != plan.size()) {
    return ErrorStatus("the inputs changed while they were being read");
  }
  LUMOS_RETURN_IF_ERROR(outputs.Commit());
  return done;
}

}  // namespace lumos::modeler::kineto
