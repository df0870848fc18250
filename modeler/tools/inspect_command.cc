#include <cstdio>

#include "modeler/tools/commands.h"

namespace lumos::modeler {

int RunInspect(const Args& args) {
  std::fprintf(stderr, "lumos-model inspect: not built yet\n");
  return 1;
}

}  // namespace lumos::modeler
