// schema/nccl_names.h: NCCL's API names (the agent's profiler plugin: case-insensitive, "nccl"
// ignored, remembered by address) and kernel names (the importer's tokens) -> schema enums, and
// what makes one table serve both: every row looks itself up, and the kernel tokens match
// whichever table the importer tries first. nccl.h's values: nccl_values_test.cc.
#include "schema/nccl_names.h"

#include <gtest/gtest.h>
#include <strings.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace lumos::schema {
namespace {

TEST(NcclNameTableTest, MapsNcclFunctionNames) {
  EXPECT_EQ(CollectiveOpFromNcclName("AllReduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(CollectiveOpFromNcclName("AlltoAll"), CollectiveOp::kAllToAll);
  EXPECT_EQ(CollectiveOpFromNcclName("ReduceScatter"), CollectiveOp::kReduceScatter);
  EXPECT_EQ(CollectiveOpFromNcclName("Recv"), CollectiveOp::kRecv);
  EXPECT_EQ(CollectiveOpFromNcclName("PutSignal"), CollectiveOp::kUnspecified);  // Newer NCCL.
  EXPECT_EQ(CollectiveOpFromNcclName(nullptr), CollectiveOp::kUnspecified);
  // A kernel's spelling only: not one NCCL passes its profiler.
  EXPECT_EQ(CollectiveOpFromNcclName("AllGatherV"), CollectiveOp::kUnspecified);
}

TEST(NcclNameTableTest, MapsDataTypeNamesWithOrWithoutPrefix) {
  EXPECT_EQ(DataTypeFromNcclName("ncclFloat32"), DataType::kFloat32);
  EXPECT_EQ(DataTypeFromNcclName("float32"), DataType::kFloat32);
  EXPECT_EQ(DataTypeFromNcclName("ncclBfloat16"), DataType::kBfloat16);
  EXPECT_EQ(DataTypeFromNcclName("ncclFloat8e5m2"), DataType::kFloat8E5m2);
  EXPECT_EQ(DataTypeFromNcclName("nccl"), DataType::kUnspecified);
  EXPECT_EQ(DataTypeFromNcclName(""), DataType::kUnspecified);
  // Kernel spellings only.
  EXPECT_EQ(DataTypeFromNcclName("f32"), DataType::kUnspecified);
  EXPECT_EQ(DataTypeFromNcclName("__nv_bfloat16"), DataType::kUnspecified);
}

TEST(NcclNameTableTest, MapsAlgorithmsProtocolsAndReduceOps) {
  EXPECT_EQ(AlgorithmFromNcclName("NVLSTree"), NcclAlgorithm::kNvlsTree);
  EXPECT_EQ(AlgorithmFromNcclName("CollNetDirect"), NcclAlgorithm::kCollnetDirect);
  EXPECT_EQ(AlgorithmFromNcclName("PAT"), NcclAlgorithm::kPat);
  EXPECT_EQ(AlgorithmFromNcclName("COLLNET_DIRECT"), NcclAlgorithm::kUnspecified);
  EXPECT_EQ(ProtocolFromNcclName("LL128"), NcclProtocol::kLl128);
  EXPECT_EQ(ProtocolFromNcclName("Simple"), NcclProtocol::kSimple);
  EXPECT_EQ(ProtocolFromNcclName("LL"), NcclProtocol::kLl);
  EXPECT_EQ(ReduceOpFromNccl(4), ReduceOp::kAvg);
  EXPECT_EQ(ReduceOpFromNccl(5), ReduceOp::kUnspecified);  // A user-made op.
  EXPECT_EQ(ReduceOpFromNccl(-1), ReduceOp::kUnspecified);
  EXPECT_EQ(DataTypeFromNccl(12), DataType::kUnspecified);
  EXPECT_EQ(DataTypeFromNccl(-1), DataType::kUnspecified);
}

// Lookups remember names by address (NCCL passes the same literals); a buffer whose text
// changes between calls is looked up afresh, never answered from what it said before.
TEST(NcclNameTableTest, ARememberedAddressWithNewTextIsLookedUpAgain) {
  char reused[16] = "AllGather";
  EXPECT_EQ(CollectiveOpFromNcclName(reused), CollectiveOp::kAllGather);
  EXPECT_EQ(CollectiveOpFromNcclName(reused), CollectiveOp::kAllGather);  // Remembered.
  std::strcpy(reused, "Broadcast");
  EXPECT_EQ(CollectiveOpFromNcclName(reused), CollectiveOp::kBroadcast);
  std::strcpy(reused, "NoSuchOp");
  EXPECT_EQ(CollectiveOpFromNcclName(reused), CollectiveOp::kUnspecified);
  std::strcpy(reused, "ncclBfloat16");
  EXPECT_EQ(DataTypeFromNcclName(reused), DataType::kBfloat16);
  std::strcpy(reused, "half");
  EXPECT_EQ(DataTypeFromNcclName(reused), DataType::kFloat16);
}

TEST(NcclNameTableTest, RecognisesNcclKernels) {
  EXPECT_TRUE(IsNcclKernelName("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
  EXPECT_TRUE(IsNcclKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(IsNcclKernelName("void ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)"));
  EXPECT_TRUE(IsNcclKernelName("ncclSymkDevKernel_AllReduce_RSxLD_AGxST_bf16"));
  EXPECT_FALSE(IsNcclKernelName("void at::native::vectorized_elementwise_kernel<4>"));
  EXPECT_FALSE(IsNcclKernelName("my_nccl_helper_kernel"));
}

TEST(NcclNameTableTest, KernelFieldsFollowThePrefix) {
  EXPECT_EQ(NcclKernelFields("void ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs)"),
            "AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(NcclKernelFields("ncclDevKernel_SendRecv<4>"), "SendRecv");
  EXPECT_EQ(NcclKernelFields("ncclKernel_"), "");
  EXPECT_EQ(NcclKernelFields("at::native::kernel"), std::nullopt);
}

TEST(NcclNameTableTest, MatchesKernelTokensUpToAFieldsEnd) {
  NcclAlgorithm algorithm = NcclAlgorithm::kUnspecified;
  EXPECT_EQ(MatchNcclKernelToken("COLLNET_DIRECT_SIMPLE", &algorithm), 14u);
  EXPECT_EQ(algorithm, NcclAlgorithm::kCollnetDirect);
  EXPECT_EQ(MatchNcclKernelToken("COLLNET_SIMPLE", &algorithm), 7u);  // NCCL < 2.12.
  EXPECT_EQ(algorithm, NcclAlgorithm::kCollnetChain);
  EXPECT_EQ(MatchNcclKernelToken("NVLS_TREE", &algorithm), 9u);
  EXPECT_EQ(algorithm, NcclAlgorithm::kNvlsTree);
  EXPECT_EQ(MatchNcclKernelToken("Ring_LL", &algorithm), 0u);  // Kernel tokens: exact case.
  EXPECT_EQ(algorithm, NcclAlgorithm::kNvlsTree);              // Untouched.
  CollectiveOp op = CollectiveOp::kUnspecified;
  EXPECT_EQ(MatchNcclKernelToken("ReduceScatter_Sum", &op), 13u);
  EXPECT_EQ(op, CollectiveOp::kReduceScatter);
  EXPECT_EQ(MatchNcclKernelToken("Reduced", &op), 0u);
  ReduceOp reduce_op = ReduceOp::kSum;
  EXPECT_EQ(MatchNcclKernelToken("PreMulSum_f16", &reduce_op), 9u);
  EXPECT_EQ(reduce_op, ReduceOp::kUnspecified);  // Known, but says no reduction.
  DataType data_type = DataType::kUnspecified;
  EXPECT_EQ(MatchNcclKernelToken("__nv_bfloat16", &data_type), 13u);
  EXPECT_EQ(data_type, DataType::kBfloat16);
  NcclProtocol protocol = NcclProtocol::kUnspecified;
  EXPECT_EQ(MatchNcclKernelToken("LL128", &protocol), 5u);
  EXPECT_EQ(protocol, NcclProtocol::kLl128);
}

// Every row of a table, as the test sees it.
struct Row {
  std::string name;
  uint32_t value;
  uint8_t uses;
  int table;
};

template <typename Enum>
void AddRows(std::span<const NcclName<Enum>> table, int index, std::vector<Row>* rows) {
  for (const NcclName<Enum>& row : table) {
    rows->push_back(Row{std::string(row.name), static_cast<uint32_t>(row.value), row.uses, index});
  }
}

// In the order the importer tries them.
std::vector<Row> AllRows() {
  std::vector<Row> rows;
  AddRows(NcclCollectiveOpNames(), 0, &rows);
  AddRows(NcclAlgorithmNames(), 1, &rows);
  AddRows(NcclProtocolNames(), 2, &rows);
  AddRows(NcclReduceOpNames(), 3, &rows);
  AddRows(NcclDataTypeNames(), 4, &rows);
  return rows;
}

// Whether `token` would match where `longer` is written: its prefix, up to a '_'.
bool MatchesInside(const std::string& token, const std::string& longer) {
  return longer.size() > token.size() && longer.compare(0, token.size(), token) == 0 &&
         longer[token.size()] == '_';
}

TEST(NcclNameTableTest, EveryRowLooksItselfUp) {
  for (const NcclName<CollectiveOp>& row : NcclCollectiveOpNames()) {
    CollectiveOp kernel = CollectiveOp::kUnspecified;
    if (row.uses & kNcclApiName) {
      EXPECT_EQ(CollectiveOpFromNcclName(row.name.data()), row.value) << row.name;
      EXPECT_EQ(CollectiveOpFromNcclName(("nccl" + std::string(row.name)).c_str()), row.value);
    }
    if (row.uses & kNcclKernelToken) {
      EXPECT_EQ(MatchNcclKernelToken(row.name, &kernel), row.name.size()) << row.name;
      EXPECT_EQ(kernel, row.value) << row.name;
    }
  }
  for (const NcclName<DataType>& row : NcclDataTypeNames()) {
    DataType kernel = DataType::kUnspecified;
    if (row.uses & kNcclApiName) {
      EXPECT_EQ(DataTypeFromNcclName(row.name.data()), row.value) << row.name;
      EXPECT_EQ(DataTypeFromNccl(row.nccl_value), row.value) << row.name;
    }
    if (row.uses & kNcclKernelToken) {
      EXPECT_EQ(MatchNcclKernelToken(row.name, &kernel), row.name.size()) << row.name;
      EXPECT_EQ(kernel, row.value) << row.name;
    }
  }
  for (const NcclName<NcclAlgorithm>& row : NcclAlgorithmNames()) {
    NcclAlgorithm kernel = NcclAlgorithm::kUnspecified;
    if (row.uses & kNcclApiName) {
      EXPECT_EQ(AlgorithmFromNcclName(row.name.data()), row.value) << row.name;
    }
    if (row.uses & kNcclKernelToken) {
      EXPECT_EQ(MatchNcclKernelToken(row.name, &kernel), row.name.size()) << row.name;
      EXPECT_EQ(kernel, row.value) << row.name;
    }
  }
  for (const NcclName<NcclProtocol>& row : NcclProtocolNames()) {
    NcclProtocol kernel = NcclProtocol::kUnspecified;
    if (row.uses & kNcclApiName) {
      EXPECT_EQ(ProtocolFromNcclName(row.name.data()), row.value) << row.name;
    }
    if (row.uses & kNcclKernelToken) {
      EXPECT_EQ(MatchNcclKernelToken(row.name, &kernel), row.name.size()) << row.name;
      EXPECT_EQ(kernel, row.value) << row.name;
    }
  }
  for (const NcclName<ReduceOp>& row : NcclReduceOpNames()) {
    ReduceOp kernel = ReduceOp::kSum;
    if (row.uses & kNcclApiName) {
      EXPECT_EQ(ReduceOpFromNccl(row.nccl_value), row.value) << row.name;
    }
    if (row.uses & kNcclKernelToken) {
      EXPECT_EQ(MatchNcclKernelToken(row.name, &kernel), row.name.size()) << row.name;
      EXPECT_EQ(kernel, row.value) << row.name;
    }
  }
}

// Each enum value NCCL has gets an API name: ops, algorithms, protocols and reductions all of
// theirs (the schema's data types include some NCCL does not have).
TEST(NcclNameTableTest, EveryValueHasAnApiName) {
  const std::vector<Row> rows = AllRows();
  auto named = [&](int table, uint32_t value) {
    for (const Row& row : rows) {
      if (row.table == table && row.value == value && (row.uses & kNcclApiName)) return true;
    }
    return false;
  };
  for (uint32_t v = 1; v <= static_cast<uint32_t>(CollectiveOp::kScatter); ++v) {
    EXPECT_TRUE(named(0, v)) << "op " << v;
  }
  for (uint32_t v = 1; v <= static_cast<uint32_t>(NcclAlgorithm::kPat); ++v) {
    EXPECT_TRUE(named(1, v)) << "algorithm " << v;
  }
  for (uint32_t v = 1; v <= static_cast<uint32_t>(NcclProtocol::kSimple); ++v) {
    EXPECT_TRUE(named(2, v)) << "protocol " << v;
  }
  for (uint32_t v = 1; v <= static_cast<uint32_t>(ReduceOp::kAvg); ++v) {
    EXPECT_TRUE(named(3, v)) << "reduce op " << v;
  }
  for (uint32_t v = 1; v <= static_cast<uint32_t>(DataType::kFloat8E5m2); ++v) {
    EXPECT_TRUE(named(4, v)) << "data type " << v;
  }
}

// The API look-up takes the first row it finds: no two API names of a table may be equal in
// another case, and none may start with the "nccl" it strips.
TEST(NcclNameTableTest, ApiNamesAreUniqueInAnyCase) {
  const std::vector<Row> rows = AllRows();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!(rows[i].uses & kNcclApiName)) continue;
    EXPECT_NE(strncasecmp(rows[i].name.c_str(), "nccl", 4), 0) << rows[i].name;
    for (size_t j = i + 1; j < rows.size(); ++j) {
      if (rows[j].table != rows[i].table || !(rows[j].uses & kNcclApiName)) continue;
      EXPECT_NE(strcasecmp(rows[i].name.c_str(), rows[j].name.c_str()), 0) << rows[i].name;
    }
  }
}

// The kernel-token look-up takes the first row that matches up to a '_': a token that is
// another's prefix there comes after it in its table ("COLLNET" after "COLLNET_DIRECT"), and no
// token is in two tables or another table's prefix there, so the order in which the importer
// tries the tables never decides what a field is.
TEST(NcclNameTableTest, KernelTokensNeverShadowOneAnother) {
  const std::vector<Row> rows = AllRows();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!(rows[i].uses & kNcclKernelToken)) continue;
    for (size_t j = 0; j < rows.size(); ++j) {
      if (j == i || !(rows[j].uses & kNcclKernelToken)) continue;
      const bool same_table = rows[i].table == rows[j].table;
      EXPECT_FALSE(rows[i].name == rows[j].name) << rows[i].name;
      if (same_table) {
        EXPECT_FALSE(i < j && MatchesInside(rows[i].name, rows[j].name))
            << rows[i].name << " before " << rows[j].name;
      } else {
        EXPECT_FALSE(MatchesInside(rows[i].name, rows[j].name))
            << rows[i].name << " in " << rows[j].name;
      }
    }
  }
}

}  // namespace
}  // namespace lumos::schema
