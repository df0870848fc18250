// Design: `lumos-model import kineto` as a library call. Inputs are Kineto JSON files, plain or
// gzipped, or tar archives (plain or gzipped) holding one JSON (or .json.gz) per rank; the
// kind is recognised from the bytes, not the file name. One trace in total → `output` is the
// file to write; several → `output` is a directory (created) holding <stem>.pb.zst per trace,
// all with the same job id.
// Archives are read twice, streaming: once to list their traces (so the output layout is
// known before anything is written), then to convert them one member at a time; memory stays
// bounded by the largest single trace.
// Failure behaviour: the first error stops the import and is returned naming the input (and
// byte offset where it applies). Every trace is written to `<dest>.tmp` and renamed when
// complete; on failure the temporary file, the outputs of this call and a directory it
// created are removed, so nothing half-written is left behind.
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
