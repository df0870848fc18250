// Design: `lumos-model import kineto` as a library call. Inputs are Kineto JSON files, plain or
// gzipped, or tar archives (plain or gzipped) holding one JSON (or .json.gz) per rank; the
// kind is recognised from the bytes, not the file name. One trace in total → `output` is the
// file to write, unless it ends in '/' or is a directory; several → `output` is a directory
// (created) holding <stem>.pb.zst per trace, all with the same job id.
// Archives are read twice, streaming: once to list their traces (so the output layout is
// known before anything is written), then to convert them one member at a time; memory stays
// bounded by the largest single trace.
// Failure behaviour: the first error stops the import and is returned naming the input (and
// byte offset where it applies). Outputs are all or nothing (io::OutputSet): every trace is
// written to a temporary file next to its destination, and all are renamed once every one is
// complete; on failure the temporary files and a directory this call created are removed and
// every file that existed before is left exactly as it was. An output that is an input is
// refused.
// Threading: independent calls may run concurrently on different outputs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/import/kineto_converter.h"

namespace lumos::modeler::kineto {

struct ImportRequest {
  std::vector<std::string> inputs;
  std::string output;
  std::string job_id;  // Empty: the stem of the single input, else of the output directory.
  int zstd_level = 19;
  // Replace an output lumos-model did not write (its own earlier imports are replaced anyway).
  bool force = false;
};

struct ImportedTrace {
  std::string source;  // The input path, or "archive:member".
  std::string output_path;
  ConvertStats stats;
};

StatusOr<std::vector<ImportedTrace>> ImportKineto(const ImportRequest& request);

// The file name of `path` without its directory and trace extensions (.json, .json.gz, .gz,
// .tar.gz, .tgz, .tar, .pb.zst): "in/worker0.pt.trace.json.gz" → "worker0.pt.trace".
std::string TraceStem(std::string_view path);

}  // namespace lumos::modeler::kineto
