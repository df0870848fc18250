#include "tests/modeler/import/import_test_util.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace lumos::modeler::kineto::testing {

JsonCounts CountJson(const std::string& json) {
  JsonCounts c;
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  EXPECT_EQ(parser.parse(padded).get(root), simdjson::SUCCESS);
  int64_t rank = -1;
  if (root["distributedInfo"]["rank"].get(rank) == simdjson::SUCCESS) c.rank = rank;
  simdjson::dom::array events;
  EXPECT_EQ(root["traceEvents"].get(events), simdjson::SUCCESS);
  for (simdjson::dom::element e : events) {
    std::string_view ph, cat, name;
    if (e["ph"].get(ph) != simdjson::SUCCESS || ph != "X") continue;
    if (e["cat"].get(cat) != simdjson::SUCCESS) cat = "";
    if (e["name"].get(name) != simdjson::SUCCESS) name = "";
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (name.rfind("ProfilerStep#", 0) == 0) ++c.steps;
    if (cat == "kernel") {
      ++c.kernels;
      if (lower.find("nccl") != std::string::npos) ++c.nccl_kernels;
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      ++c.api_calls;
    } else if (cat == "gpu_memcpy") {
      ++c.memcpys;
    } else if (cat == "gpu_memset") {
      ++c.memsets;
    } else if (cat == "cuda_sync") {
      ++c.syncs;
    } else if (cat != "Trace") {
      ++c.host_ranges;
    }
  }
  return c;
}

std::vector<const ReadPacket*> ReadBack::Of(const std::string& kind) const {
  std::vector<const ReadPacket*> out;
  for (const ReadPacket& p : packets) {
    const auto* field = p.packet.GetDescriptor()->FindFieldByNumber(p.packet.data_case());
    if (field != nullptr && field->name() == kind) out.push_back(&p);
  }
  return out;
}

ReadBack ReadTrace(const std::string& path) {
  ReadBack back;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return back;
  back.header = (*reader)->header();
  Status status = (*reader)->ReadPackets(
      [&](const pb::TracePacket& packet, const PacketContext& context) {
        ReadPacket p{packet, context.start_ns, ""};
        if (packet.has_kernel()) p.name = context.String(packet.kernel().name_iid());
        if (packet.has_api_call()) p.name = context.String(packet.api_call().name_iid());
        if (packet.has_host_range()) p.name = context.String(packet.host_range().name_iid());
        const auto* field = packet.GetDescriptor()->FindFieldByNumber(packet.data_case());
        if (field != nullptr) ++back.counts[field->name()];
        back.packets.push_back(std::move(p));
        return Status::Ok();
      },
      &back.result);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(back.result.damage.ok()) << back.result.damage.message();
  EXPECT_TRUE(back.result.has_trailer) << path;
  return back;
}

std::string SharedTraceDir() { return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces"; }

}  // namespace lumos::modeler::kineto::testing
