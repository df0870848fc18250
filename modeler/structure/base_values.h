// Design: `--base K=V,...` of `lumos-model structure`: keys from SetupKeys(), whole positive
// numbers; each value becomes origin kGiven. A small local parser (the estimate's settings
// parser in modeler/whatif/ may replace it). Errors name the item and why: an unknown key (and
// the keys there are), a value that is not a whole positive number, a key given twice, an
// empty item. Threading: pure function.
#pragma once

#include <string_view>

#include "base/status.h"
#include "modeler/structure/job_structure.h"

namespace lumos::modeler::structure {

StatusOr<Setup> ParseBaseValues(std::string_view text);

}  // namespace lumos::modeler::structure
