// Design: the subcommands of `lumos-model`. Each takes the arguments after its name and
// returns the process exit code (0 ok; 1 damaged, skipped or unclosed input, or an output that
// could not be written; 2 usage error: base/cli/command_outcome.h); each prints its own
// `--help` (base/cli/arg_parser.h). Errors go to stderr as one line naming file and offset.
#pragma once

#include <string>
#include <vector>

namespace lumos::modeler {

using Args = std::vector<std::string>;

int RunInspect(const Args& args);
int RunExport(const Args& args);
int RunImport(const Args& args);
int RunReplay(const Args& args);
int RunSynth(const Args& args);
int RunCosts(const Args& args);
int RunEstimate(const Args& args);
int RunSearch(const Args& args);
int RunStructure(const Args& args);
int RunSummarize(const Args& args);
int RunDiff(const Args& args);

}  // namespace lumos::modeler
