#include "tests/modeler/import/import_test_util.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace lumos::modeler::kineto::testing {

std::string Gzip(const std::string& data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string TarHeader(const std::string& name, uint64_t size, char type) {
  std::string h(512, '\0');
  std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
  std::snprintf(h.data() + 100, 8, "%07o", 0644);
  std::snprintf(h.data() + 108, 8, "%07o", 0);
  std::snprintf(h.data() + 116, 8, "%07o", 0);
  std::snprintf(h.data() + 124, 12, "%011llo", static_cast<unsigned long long>(size));
  std::snprintf(h.data() + 136, 12, "%011o", 0);
  h[156] = type;
  std::memcpy(h.data() + 257,
              "ustar\0"
              "00",
              8);
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h.data() + 148, 8, "%06o", sum);
  return h;
}

std::string TarArchive(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string tar;
  for (const auto& [name, content] : files) {
    tar += TarHeader(name, content.size());
    tar += content;
    tar.append((512 - content.size() % 512) % 512, '\0');
  }
  tar.append(1024, '\0');
  return tar;
}

std::string GunzipFile(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  EXPECT_NE(file, nullptr) << path;
  if (file == nullptr) return "";
  std::string out;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) out.append(buffer, n);
  EXPECT_EQ(n, 0) << path;
  gzclose(file);
  return out;
}

std::vector<std::pair<std::string, std::string>> Untar(const std::string& tar) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t offset = 0; offset + 512 <= tar.size();) {
    const char* h = tar.data() + offset;
    if (h[0] == '\0') break;
    uint64_t size = std::strtoull(std::string(h + 124, 12).c_str(), nullptr, 8);
    if (h[156] == '0' || h[156] == '\0') {
      files.emplace_back(std::string(h, strnlen(h, 100)), tar.substr(offset + 512, size));
    }
    offset += 512 + (size + 511) / 512 * 512;
  }
  return files;
}

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
