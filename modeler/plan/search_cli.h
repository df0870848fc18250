// `lumos-model search` (search.h): the command, its options and its output (text, --json,
// --csv). Exit status: 0 answered; 1 the cost model file cannot be read; 2 bad arguments (an
// unknown key, a model that cannot exist, a GPU or network the specs do not know).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace lumos::modeler::plan {

int RunSearchCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

// `lumos-model estimate --model SPEC --set LAYOUT --gpu NAME`: one layout, no trace (the same
// fast path, exit codes as above).
int RunModelEstimateCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace lumos::modeler::plan
