// The measured-cost and query tables (modeler/models/query/cost_table.h): the shared tables read
// whole, the kind told by the header, and each malformed row one error naming file:line.
#include <gtest/gtest.h>

#include <string>

#include "modeler/models/gemm/gemm_table.h"

namespace lumos::modeler::models {
namespace {

std::string Costs(const std::string& name) {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/" + name;
}

TEST(CostTableTest, ReadsEverySharedTableAndTellsItsKind) {
  const std::pair<const char*, TableKind> tables[] = {
      {"gemm_a100_bf16.csv", TableKind::kGemm},  {"gemm_h100_bf16.csv", TableKind::kGemm},
      {"gemm_h100_fp8.csv", TableKind::kGemm},   {"nccl_a100.csv", TableKind::kCollective},
      {"nccl_h100.csv", TableKind::kCollective},
  };
  for (const auto& [name, kind] : tables) {
    auto table = io::ReadCsv(Costs(name));
    ASSERT_TRUE(table.ok()) << table.status().message();
    auto detected = DetectTableKind(*table);
    ASSERT_TRUE(detected.ok()) << detected.status().message();
    EXPECT_EQ(*detected, kind) << name;
    if (kind != TableKind::kGemm) continue;
    auto rows = ReadGemmRows(*table, Latency::kRequired);
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    EXPECT_EQ(rows->size(), table->rows.size());
    EXPECT_GT(rows->size(), 9000u) << name;
    // The first data row, as the file has it (README: line 2 of every table).
    EXPECT_EQ(table->Where(0), Costs(name) + ":2");
    for (const GemmRow& row : *rows) {
      ASSERT_GT(row.latency_ns, 0);
      ASSERT_EQ(row.shape.batch, 1);
    }
  }
}

TEST(CostTableTest, MicrosecondsRoundTripThroughIntegerNanoseconds) {
  for (const char* text : {"2.581", "243814.819", "0.001", "12"}) {
    auto ns = ParseMicroseconds(text);
    ASSERT_TRUE(ns.ok()) << text;
    const std::string back = FormatMicroseconds(*ns);
    EXPECT_DOUBLE_EQ(std::stod(back), std::stod(text)) << text << " -> " << back;
  }
  EXPECT_EQ(FormatMicroseconds(2581), "2.581");
  EXPECT_EQ(FormatMicroseconds(7), "0.007");
  for (const char* bad : {"0", "-1", "nan", "inf", "1e30", "abc", ""}) {
    EXPECT_FALSE(ParseMicroseconds(bad).ok()) << bad;
  }
}

TEST(CostTableTest, ColumnsInAnyOrderAndQueriesWithoutLatencyOrGpu) {
  auto table =
      io::ParseCsv("k, m ,n,dtype,batch,note\n64,1,32,half,4,x\n\n128,2,64,bf16,1,y\n", "q.csv");
  ASSERT_TRUE(table.ok()) << table.status().message();
  auto rows = ReadGemmRows(*table, Latency::kIgnored);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].shape.m, 1);
  EXPECT_EQ((*rows)[0].shape.k, 64);
  EXPECT_EQ((*rows)[0].shape.batch, 4);
  EXPECT_EQ((*rows)[0].dtype, DType::kFp16);
  EXPECT_EQ((*rows)[0].latency_ns, -1);
  EXPECT_EQ(table->Where(1), "q.csv:4");  // The empty line counts.
  // A query table is not a measured table.
  auto measured = ReadGemmRows(*table, Latency::kRequired);
  ASSERT_FALSE(measured.ok());
  EXPECT_EQ(measured.status().message(),
            "q.csv: a measured GEMM table needs gpu and latency_us columns");
}

struct BadTable {
  const char* name;
  const char* text;
  const char* error;
};

class MalformedTableTest : public ::testing::TestWithParam<BadTable> {};

TEST_P(MalformedTableTest, IsOneErrorNamingTheRow) {
  Status status;
  auto table = io::ParseCsv(GetParam().text, "t.csv");
  if (!table.ok()) {
    status = table.status();
  } else if (auto kind = DetectTableKind(*table); !kind.ok()) {
    status = kind.status();
  } else {
    status = ReadGemmRows(*table, Latency::kRequired).status();
  }
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    EveryKindOfMistake, MalformedTableTest,
    ::testing::Values(
        BadTable{"Empty", "", "t.csv: empty (no header line)"},
        BadTable{"NoKnownColumns", "a,b\n1,2\n",
                 "t.csv: the header 'a,b' is neither a GEMM table (m, n, k, dtype columns), a "
                 "collective table (op, ranks, bytes) nor kernel queries (class)"},
        BadTable{"TooFewFields", "gpu,dtype,m,n,k,latency_us\nH100,bf16,1,2,3\n",
                 "t.csv:2: 5 fields, the header has 6"},
        BadTable{"NegativeM", "gpu,dtype,m,n,k,latency_us\nH100,bf16,-1,2,3,4\n",
                 "t.csv:2: m: '-1' must be a whole number > 0"},
        BadTable{"ZeroK", "gpu,dtype,m,n,k,latency_us\nH100,bf16,1,2,0,4\n",
                 "t.csv:2: k: '0' must be a whole number > 0"},
        BadTable{"FractionalN", "gpu,dtype,m,n,k,latency_us\nH100,bf16,1,2.5,3,4\n",
                 "t.csv:2: n: '2.5' must be a whole number > 0"},
        BadTable{"BadDtype", "gpu,dtype,m,n,k,latency_us\nH100,int3,1,2,3,4\n",
                 "t.csv:2: dtype: unknown 'int3' (fp32, tf32, bf16, fp16, fp8)"},
        BadTable{"BadLatency", "gpu,dtype,m,n,k,latency_us\nH100,bf16,1,2,3,fast\n",
                 "t.csv:2: latency_us: 'fast' must be a number of µs > 0"},
        BadTable{"EmptyGpu", "gpu,dtype,m,n,k,latency_us\n,bf16,1,2,3,4\n", "t.csv:2: gpu: empty"},
        BadTable{"Quoted", "gpu,dtype,m,n,k,latency_us\n\"H100\",bf16,1,2,3,4\n",
                 "t.csv:2: quoted fields are not supported"},
        BadTable{"ColumnTwice", "m,m,n,k,dtype\n", "t.csv:1: column 'm' twice in the header"},
        BadTable{"UnnamedColumn", "m,,n,k,dtype\n", "t.csv:1: column 2 of the header has no name"},
        BadTable{"HugeNumber", "gpu,dtype,m,n,k,latency_us\nH100,bf16,99999999999999999999,2,3,4\n",
                 "t.csv:2: m: '99999999999999999999' must be a whole number > 0"}),
    [](const ::testing::TestParamInfo<BadTable>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace lumos::modeler::models
