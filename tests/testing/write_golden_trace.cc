// Writes the golden trace of the current schema version (2.4 now):
//   build/tests/testing/lumos_write_golden_trace tests/data/schema_v2.4/every_packet_kind.pb.zst
// Run once per released schema version; old golden files are never regenerated.
#include <cstdio>

#include "tests/testing/every_packet_kind.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.pb.zst\n", argv[0]);
    return 2;
  }
  lumos::testing::WriteEveryPacketKind(argv[1]);
  return 0;
}
