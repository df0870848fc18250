#include <cstdio>

#include "modeler/tools/commands.h"

namespace lumos::modeler {

// TODO(lumos): replaced by the real command in this session.
int RunExport(const Args& args) {
  std::fprintf(stderr, "lumos-model export: not built yet\n");
  return 1;
}

}  // namespace lumos::modeler
