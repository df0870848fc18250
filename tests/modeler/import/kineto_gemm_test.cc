// GEMM and attention shapes of Kineto operators (modeler/import/kineto_gemm.h): each operator's
// "Input Dims" / "Input type" / "Concrete Inputs" as PyTorch writes them, parsed one by one;
// then a small hand-written trace converted by the real converter and loaded by the modeler
// (LoadJob), where each kernel gets the shape of the operator that launched it, or none.
#include "modeler/import/kineto_gemm.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "modeler/graph/job.h"
#include "modeler/import/kineto_converter.h"
#include "modeler/trace/trace_summary.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::kineto {
namespace {

using schema::AttentionMask;
using schema::DataType;
using schema::GemmApi;
using schema::GemmCallEvent;

// Parses an operator's args as they appear in a trace: {"Input Dims": ..., "Input type": ...,
// "Concrete Inputs": ...} (the last two may be left out).
struct Parsed {
  bool ok = false;
  GemmCallEvent shape;
};
Parsed Parse(const char* name, const std::string& args_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element args;
  Parsed parsed;
  EXPECT_EQ(parser.parse(simdjson::padded_string(args_json)).get(args), simdjson::SUCCESS)
      << args_json;
  std::optional<simdjson::dom::element> types, concrete;
  simdjson::dom::element dims, value;
  if (args["Input type"].get(value) == simdjson::SUCCESS) types = value;
  if (args["Concrete Inputs"].get(value) == simdjson::SUCCESS) concrete = value;
  EXPECT_EQ(args["Input Dims"].get(dims), simdjson::SUCCESS);
  parsed.ok = ParseGemmOperator(name, dims, types, concrete, &parsed.shape);
  return parsed;
}

void ExpectProblem(const Parsed& p, uint64_t m, uint64_t n, uint64_t k, uint64_t batch) {
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.shape.m, m);
  EXPECT_EQ(p.shape.n, n);
  EXPECT_EQ(p.shape.k, k);
  EXPECT_EQ(p.shape.batch_count, batch);
}

TEST(KinetoGemmTest, MatmulOperatorsGiveTheirProblem) {
  // control.json.gz's first aten::mm: [4096, 64] x [64, 2798] in float.
  Parsed mm = Parse("aten::mm", R"({"Input Dims": [[4096, 64], [64, 2798]],
                                    "Input type": ["float", "float"]})");
  ExpectProblem(mm, 4096, 2798, 64, 1);
  EXPECT_EQ(mm.shape.api, GemmApi::kFrameworkMatmul);
  EXPECT_EQ(mm.shape.a_type, DataType::kFloat32);
  EXPECT_EQ(mm.shape.d_type, DataType::kFloat32);
  EXPECT_EQ(mm.shape.transa, schema::GemmTranspose::kUnspecified);  // Not in the trace.
  EXPECT_EQ(mm.shape.heads, 0u);
  EXPECT_EQ(mm.shape.mask, AttentionMask::kUnspecified);
  // addmm and baddbmm: the first input is the bias.
  Parsed addmm = Parse("aten::addmm", R"({"Input Dims": [[512], [1024, 1705], [1705, 512], [], []],
      "Input type": ["float", "float", "float", "Scalar", "Scalar"]})");
  ExpectProblem(addmm, 1024, 512, 1705, 1);
  ExpectProblem(Parse("aten::bmm", R"({"Input Dims": [[1024, 96, 50], [1024, 50, 8]]})"), 96, 8, 50,
                1024);
  Parsed baddbmm = Parse("aten::baddbmm", R"({"Input Dims": [[8, 1, 1], [8, 3, 5], [8, 5, 7],
      [], []], "Input type": ["c10::BFloat16", "c10::Half", "c10::Half", "Scalar", "Scalar"]})");
  ExpectProblem(baddbmm, 3, 7, 5, 8);
  EXPECT_EQ(baddbmm.shape.a_type, DataType::kFloat16);  // The operands', not the bias's.
  // matmul broadcasts the leading dimensions; 1-D operands are a row and a column vector.
  ExpectProblem(Parse("aten::matmul", R"({"Input Dims": [[8, 1, 32, 64], [4, 64, 16]]})"), 32, 16,
                64, 32);
  ExpectProblem(Parse("aten::matmul", R"({"Input Dims": [[1024, 96, 50], [50, 15]]})"), 96, 15, 50,
                1024);
  ExpectProblem(Parse("aten::matmul", R"({"Input Dims": [[64], [3, 64, 16]]})"), 1, 16, 64, 3);
  ExpectProblem(Parse("aten::matmul", R"({"Input Dims": [[64], [64]]})"), 1, 1, 64, 1);
  // linear(x, w [n, k], bias): m is every leading dimension of x.
  ExpectProblem(Parse("aten::linear", R"({"Input Dims": [[2, 512, 1024], [4096, 1024], [4096]]})"),
                1024, 4096, 1024, 1);
  // FP8 and int8 matmuls: the output type is not the operands'.
  Parsed scaled = Parse("aten::_scaled_mm", R"({"Input Dims": [[16, 32], [32, 64], [], []],
      "Input type": ["c10::Float8_e4m3fn", "c10::Float8_e5m2", "float", "float"]})");
  ExpectProblem(scaled, 16, 64, 32, 1);
  EXPECT_EQ(scaled.shape.a_type, DataType::kFloat8E4m3);
  EXPECT_EQ(scaled.shape.b_type, DataType::kFloat8E5m2);
  EXPECT_EQ(scaled.shape.c_type, DataType::kUnspecified);
  Parsed int_mm = Parse("aten::_int_mm", R"({"Input Dims": [[32, 64], [64, 16]],
      "Input type": ["signed char", "signed char"]})");
  ExpectProblem(int_mm, 32, 16, 64, 1);
  EXPECT_EQ(int_mm.shape.a_type, DataType::kInt8);
  EXPECT_EQ(int_mm.shape.d_type, DataType::kInt32);
}

TEST(KinetoGemmTest, ShapesThatDoNotFitAreSkipped) {
  EXPECT_FALSE(Parse("aten::mm", R"({"Input Dims": [[4, 5], [6, 7]]})").ok);     // Inner dims.
  EXPECT_FALSE(Parse("aten::mm", R"({"Input Dims": [[2, 4, 5], [5, 7]]})").ok);  // 3-D.
  EXPECT_FALSE(Parse("aten::mm", R"({"Input Dims": [[4, -1], [-1, 7]]})").ok);   // Negative.
  EXPECT_FALSE(Parse("aten::mm", R"({"Input Dims": [[4, 5]]})").ok);             // One input.
  EXPECT_FALSE(Parse("aten::mm", R"({"Input Dims": "[[4, 5], [5, 7]]"})").ok);   // Not arrays.
  EXPECT_FALSE(Parse("aten::bmm", R"({"Input Dims": [[2, 4, 5], [3, 5, 7]]})").ok);
  EXPECT_FALSE(Parse("aten::matmul", R"({"Input Dims": [[2, 4, 5], [3, 5, 7]]})").ok);
  EXPECT_FALSE(Parse("aten::linear", R"({"Input Dims": [[8, 64], [32, 63], [32]]})").ok);
  EXPECT_FALSE(Parse("aten::add", R"({"Input Dims": [[4, 5], [5, 7]]})").ok);  // Not a GEMM.
  // A size past 2^62 is no tensor's.
  EXPECT_FALSE(Parse("aten::mm", R"({"Input Dims": [[9223372036854775807, 5], [5, 7]]})").ok);
}

TEST(KinetoGemmTest, AttentionOperatorsGiveTheirProblem) {
  // SDPA's flash route, [B, H, L, D], is_causal True in "Concrete Inputs" (PyTorch 2.3+).
  Parsed flash = Parse("aten::_scaled_dot_product_flash_attention",
                       R"({"Input Dims": [[2, 16, 1024, 128], [2, 16, 1024, 128],
                           [2, 16, 1024, 128], [], [], [], []],
                           "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16",
                           "Scalar", "Scalar", "Scalar", ""],
                           "Concrete Inputs": ["", "", "", "0.0", "True", "False", ""]})");
  ExpectProblem(flash, 1024, 1024, 128, 32);
  EXPECT_EQ(flash.shape.api, GemmApi::kFrameworkAttention);
  EXPECT_EQ(flash.shape.heads, 16u);
  EXPECT_EQ(flash.shape.kv_heads, 16u);
  EXPECT_EQ(flash.shape.head_dim_v, 128u);
  EXPECT_EQ(flash.shape.mask, AttentionMask::kCausal);
  EXPECT_EQ(flash.shape.a_type, DataType::kBfloat16);
  EXPECT_EQ(flash.shape.d_type, DataType::kBfloat16);
  // flash-attn's own op, [B, L, H, D], grouped-query (32 query heads on 8 key/value heads), a
  // value head dimension of its own, not causal.
  Parsed gqa = Parse("flash_attn::_flash_attn_forward",
                     R"({"Input Dims": [[4, 2048, 32, 128], [4, 4096, 8, 128], [4, 4096, 8, 64],
                         [], [], [], [], [], [], [], []],
                         "Concrete Inputs": ["", "", "", "0.0", "0.125", "False", "-1", "-1",
                         "0.0", "", "False"]})");
  ExpectProblem(gqa, 2048, 4096, 128, 128);
  EXPECT_EQ(gqa.shape.heads, 32u);
  EXPECT_EQ(gqa.shape.kv_heads, 8u);
  EXPECT_EQ(gqa.shape.head_dim_v, 64u);
  EXPECT_EQ(gqa.shape.mask, AttentionMask::kNone);
  // Backward: the query follows the output's gradient; is_causal is argument 11.
  Parsed backward = Parse("aten::_flash_attention_backward",
                          R"({"Input Dims": [[2, 512, 8, 64], [2, 512, 8, 64], [2, 512, 8, 64],
                              [2, 512, 8, 64], [2, 512, 8, 64], [2, 8, 512], [], [], [], [], [],
                              [], [], []],
                              "Concrete Inputs": ["", "", "", "", "", "", "", "", "512", "512",
                              "0.0", "True", "", ""]})");
  ExpectProblem(backward, 512, 512, 64, 16);
  EXPECT_EQ(backward.shape.api, GemmApi::kFrameworkAttentionBackward);
  EXPECT_EQ(backward.shape.mask, AttentionMask::kCausal);
}

TEST(KinetoGemmTest, AttentionMaskFromScalarsOrTensors) {
  const std::string qkv = R"([2, 4, 256, 64], [2, 4, 256, 64], [2, 4, 256, 64])";
  auto mask_of = [](const char* name, const std::string& args) {
    Parsed p = Parse(name, args);
    EXPECT_TRUE(p.ok) << name << " " << args;
    return p.shape.mask;
  };
  // No "Concrete Inputs" (PyTorch before 2.3, as in the shared traces): not known...
  EXPECT_EQ(mask_of("aten::scaled_dot_product_attention", "{\"Input Dims\": [" + qkv + ", []]}"),
            AttentionMask::kUnspecified);
  // ... unless an attn_mask tensor was passed.
  EXPECT_EQ(mask_of("aten::scaled_dot_product_attention",
                    "{\"Input Dims\": [" + qkv + ", [2, 1, 256, 256]]}"),
            AttentionMask::kTensor);
  EXPECT_EQ(mask_of("aten::scaled_dot_product_attention",
                    "{\"Input Dims\": [" + qkv +
                        ", [], [], [], []], \"Concrete Inputs\": "
                        "[\"\", \"\", \"\", \"\", \"0.0\", \"False\", \"\", \"False\"]}"),
            AttentionMask::kNone);
  // The efficient kernels take custom_mask_type (0 none, 1 and 2 causal) and a bias tensor.
  const std::string blhd = R"([2, 256, 4, 64], [2, 256, 4, 64], [2, 256, 4, 64])";
  auto efficient = [&](const char* bias, const char* mask_type) {
    return "{\"Input Dims\": [" + blhd + ", " + bias +
           ", [], [], [], [], [], [], []], \"Concrete Inputs\": [\"\", \"\", \"\", \"\", \"\", "
           "\"\", \"\", \"\", \"0.0\", \"" +
           mask_type + "\", \"False\"]}";
  };
  EXPECT_EQ(mask_of("aten::_efficient_attention_forward", efficient("[]", "1")),
            AttentionMask::kCausal);
  EXPECT_EQ(mask_of("aten::_efficient_attention_forward", efficient("[]", "2")),
            AttentionMask::kCausal);
  EXPECT_EQ(mask_of("aten::_efficient_attention_forward", efficient("[]", "0")),
            AttentionMask::kNone);
  EXPECT_EQ(mask_of("aten::_efficient_attention_forward", efficient("[2, 4, 256, 256]", "0")),
            AttentionMask::kTensor);
}

TEST(KinetoGemmTest, AttentionShapesThatDoNotFitAreSkipped) {
  // Variable-length (packed [total, H, D]) inputs have no batch.
  EXPECT_FALSE(
      Parse("aten::_flash_attention_forward",
            R"({"Input Dims": [[4096, 16, 64], [4096, 16, 64], [4096, 16, 64], [9], [9]]})")
          .ok);
  // 12 query heads do not group onto 8 key heads; head dimensions of Q and K differ.
  EXPECT_FALSE(Parse("flash_attn::_flash_attn_forward",
                     R"({"Input Dims": [[1, 64, 12, 64], [1, 64, 8, 64], [1, 64, 8, 64]]})")
                   .ok);
  EXPECT_FALSE(Parse("aten::_scaled_dot_product_flash_attention",
                     R"({"Input Dims": [[1, 8, 64, 64], [1, 8, 64, 128], [1, 8, 64, 128]]})")
                   .ok);
  // A value that does not fit leaves head_dim_v not known, the rest stands.
  Parsed odd_value = Parse("aten::_scaled_dot_product_flash_attention",
                           R"({"Input Dims": [[1, 8, 64, 64], [1, 8, 64, 64], [1, 8, 32, 64]]})");
  ExpectProblem(odd_value, 64, 64, 64, 8);
  EXPECT_EQ(odd_value.shape.head_dim_v, 0u);
}

// One thread running a training step's operators, a second (autograd) thread the backward,
// a third launching alongside. Times in µs; kernels on stream 7.
constexpr const char kStepTrace[] = R"JSON({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 101, "ts": 10, "dur": 30,
   "args": {"External id": 1, "Input Dims": [[8, 64], [32, 64], [32]],
   "Input type": ["float", "float", "float"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 101, "ts": 12, "dur": 20,
   "args": {"External id": 2, "Input Dims": [[32], [8, 64], [64, 32], [], []],
   "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 101, "ts": 14,
   "dur": 2, "args": {"correlation": 100}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 101, "ts": 20,
   "dur": 2, "args": {"correlation": 101}},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 101, "ts": 25,
   "dur": 2, "args": {"correlation": 102}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 103, "ts": 20,
   "dur": 2, "args": {"correlation": 110}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 1, "tid": 101, "ts": 50, "dur": 30,
   "args": {"External id": 3, "Input Dims": [[4, 8, 64], [4, 64, 16]]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 1, "tid": 101, "ts": 52, "dur": 5,
   "args": {"External id": 4, "Input Dims": [[4, 8, 64], [4, 8, 64], []]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 101, "ts": 53,
   "dur": 2, "args": {"correlation": 103}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 1, "tid": 101, "ts": 60, "dur": 10,
   "args": {"External id": 5, "Input Dims": [[4, 8, 64], [4, 64, 16]]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 101, "ts": 62,
   "dur": 2, "args": {"correlation": 104}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::fill_", "pid": 1, "tid": 101, "ts": 90, "dur": 4,
   "args": {"External id": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 101, "ts": 90, "dur": 10,
   "args": {"External id": 6, "Input Dims": [[2, 3], [3, 5]]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 101, "ts": 91,
   "dur": 1, "args": {"correlation": 105}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 101, "ts": 96,
   "dur": 1, "args": {"correlation": 106}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::scaled_dot_product_attention", "pid": 1,
   "tid": 101, "ts": 110, "dur": 40, "args": {"External id": 8,
   "Input Dims": [[2, 16, 128, 64], [2, 16, 128, 64], [2, 16, 128, 64], [], [], [], [], []],
   "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "Scalar", "Scalar",
   "", "Scalar"],
   "Concrete Inputs": ["", "", "", "", "0.0", "True", "", "False"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::_scaled_dot_product_flash_attention", "pid": 1,
   "tid": 101, "ts": 112, "dur": 36, "args": {"External id": 9,
   "Input Dims": [[2, 16, 128, 64], [2, 16, 128, 64], [2, 16, 128, 64], [], [], [], []],
   "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar",
   "Scalar", ""],
   "Concrete Inputs": ["", "", "", "0.0", "True", "False", ""]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::_flash_attention_forward", "pid": 1, "tid": 101,
   "ts": 115, "dur": 30, "args": {"External id": 10,
   "Input Dims": [[2, 128, 16, 64], [2, 128, 16, 64], [2, 128, 16, 64], [], [], [], [], [],
   [], [], [], [], [], [], []],
   "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "Scalar",
   "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", "", "", ""],
   "Concrete Inputs": ["", "", "", "", "", "128", "128", "0.0", "True", "False", "0.125", "",
   "", "", ""]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 101, "ts": 120,
   "dur": 3, "args": {"correlation": 107}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::_scaled_dot_product_flash_attention_backward",
   "pid": 1, "tid": 102, "ts": 200, "dur": 30, "args": {"External id": 11,
   "Input Dims": [[2, 16, 128, 64], [2, 16, 128, 64], [2, 16, 128, 64], [2, 16, 128, 64],
   [2, 16, 128, 64], [2, 16, 128], [], [], [], [], [], [], [], []]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::_flash_attention_backward", "pid": 1, "tid": 102,
   "ts": 202, "dur": 25, "args": {"External id": 12,
   "Input Dims": [[2, 128, 16, 64], [2, 128, 16, 64], [2, 128, 16, 64], [2, 128, 16, 64],
   [2, 128, 16, 64], [2, 16, 128], [], [], [], [], [], [], [], []]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 102, "ts": 205,
   "dur": 2, "args": {"correlation": 108}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 102, "ts": 210,
   "dur": 2, "args": {"correlation": 109}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::elementwise_kernel<128, 2>(int)",
   "pid": 0, "tid": 7, "ts": 300, "dur": 1, "args": {"stream": 7, "correlation": 100}},
  {"ph": "X", "cat": "kernel", "name": "sm80_gemm", "pid": 0, "tid": 7, "ts": 302, "dur": 1,
   "args": {"stream": 7, "correlation": 101}},
  {"ph": "X", "cat": "kernel", "name": "splitKreduce_kernel", "pid": 0, "tid": 7, "ts": 304,
   "dur": 1, "args": {"stream": 7, "correlation": 102}},
  {"ph": "X", "cat": "kernel", "name": "copy_kernel", "pid": 0, "tid": 7, "ts": 306, "dur": 1,
   "args": {"stream": 7, "correlation": 103}},
  {"ph": "X", "cat": "kernel", "name": "gemm_bmm", "pid": 0, "tid": 7, "ts": 308, "dur": 1,
   "args": {"stream": 7, "correlation": 104}},
  {"ph": "X", "cat": "kernel", "name": "fill_kernel", "pid": 0, "tid": 7, "ts": 310, "dur": 1,
   "args": {"stream": 7, "correlation": 105}},
  {"ph": "X", "cat": "kernel", "name": "gemm_small", "pid": 0, "tid": 7, "ts": 312, "dur": 1,
   "args": {"stream": 7, "correlation": 106}},
  {"ph": "X", "cat": "kernel", "name": "flash_fwd_kernel", "pid": 0, "tid": 7, "ts": 314,
   "dur": 1, "args": {"stream": 7, "correlation": 107}},
  {"ph": "X", "cat": "kernel", "name": "flash_bwd_dq_dk_dv", "pid": 0, "tid": 7, "ts": 316,
   "dur": 1, "args": {"stream": 7, "correlation": 108}},
  {"ph": "X", "cat": "kernel", "name": "flash_bwd_convert_dq", "pid": 0, "tid": 7, "ts": 318,
   "dur": 1, "args": {"stream": 7, "correlation": 109}},
  {"ph": "X", "cat": "kernel", "name": "other_thread", "pid": 0, "tid": 7, "ts": 320, "dur": 1,
   "args": {"stream": 7, "correlation": 110}}
]})JSON";

class KinetoGemmLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    io::PaddedText text;
    text.Append(kStepTrace, sizeof(kStepTrace) - 1);
    path_ = dir_.File("step.pb.zst");
    ASSERT_TRUE(ConvertKinetoText(text, "step.json", path_, {}, &stats_).ok());
    auto job = LoadJob({path_});
    ASSERT_TRUE(job.ok()) << job.status().message();
    const RankTrace& rank = job->ranks.at(0);
    for (size_t i = 0; i < rank.kernels.size(); ++i) {
      const GemmCallEvent* g = rank.GemmOf(i);
      shapes_[std::string(rank.kernels[i].name)] = g != nullptr ? *g : GemmCallEvent();
      if (g != nullptr) names_[std::string(rank.kernels[i].name)] = std::string(g->name);
    }
  }
  bool Shaped(const std::string& kernel) const { return shapes_.at(kernel).api != GemmApi{}; }
  const GemmCallEvent& Of(const std::string& kernel) const { return shapes_.at(kernel); }

  ::lumos::testing::TempDir dir_;
  std::string path_;
  ConvertStats stats_;
  std::map<std::string, GemmCallEvent> shapes_;  // By kernel name; api 0: no shape.
  std::map<std::string, std::string> names_;     // The operator each shape came from.
};

TEST_F(KinetoGemmLinkTest, EachKernelGetsTheShapeOfTheOperatorThatLaunchedIt) {
  ASSERT_EQ(shapes_.size(), 11u);
  EXPECT_EQ(stats_.gemm_calls, 7u);  // One per launch of a GEMM or attention operator.
  // aten::linear -> aten::addmm: the GEMM and its split-K reduction (a runtime and a driver
  // launch) get addmm's problem, the bias copy before them (ATen's own kernel) none.
  ASSERT_TRUE(Shaped("sm80_gemm"));
  EXPECT_EQ(names_.at("sm80_gemm"), "aten::addmm");
  EXPECT_EQ(Of("sm80_gemm").m, 8u);
  EXPECT_EQ(Of("sm80_gemm").n, 32u);
  EXPECT_EQ(Of("sm80_gemm").k, 64u);
  EXPECT_EQ(Of("sm80_gemm").a_type, DataType::kFloat32);
  EXPECT_EQ(Of("sm80_gemm").external_id, 2u);
  EXPECT_EQ(Of("sm80_gemm").correlation_id, 101u);
  EXPECT_EQ(Of("splitKreduce_kernel").correlation_id, 102u);
  EXPECT_EQ(Of("splitKreduce_kernel").m, 8u);
  EXPECT_FALSE(Shaped("void at::native::elementwise_kernel<128, 2>(int)"));
  // aten::matmul -> aten::copy_ (no shape) and aten::bmm (its own).
  EXPECT_FALSE(Shaped("copy_kernel"));
  ASSERT_TRUE(Shaped("gemm_bmm"));
  EXPECT_EQ(names_.at("gemm_bmm"), "aten::bmm");
  EXPECT_EQ(Of("gemm_bmm").batch_count, 4u);
  // aten::fill_ starts with aten::mm (same µs) but is inside it: its launch is fill_'s.
  EXPECT_FALSE(Shaped("fill_kernel"));
  ASSERT_TRUE(Shaped("gemm_small"));
  EXPECT_EQ(Of("gemm_small").m, 2u);
  EXPECT_EQ(Of("gemm_small").n, 5u);
  // SDPA -> flash -> _flash_attention_forward, the innermost, launches the kernel.
  ASSERT_TRUE(Shaped("flash_fwd_kernel"));
  const GemmCallEvent& fwd = Of("flash_fwd_kernel");
  EXPECT_EQ(names_.at("flash_fwd_kernel"), "aten::_flash_attention_forward");
  EXPECT_EQ(fwd.api, GemmApi::kFrameworkAttention);
  EXPECT_EQ(fwd.m, 128u);
  EXPECT_EQ(fwd.n, 128u);
  EXPECT_EQ(fwd.k, 64u);
  EXPECT_EQ(fwd.batch_count, 32u);
  EXPECT_EQ(fwd.heads, 16u);
  EXPECT_EQ(fwd.kv_heads, 16u);
  EXPECT_EQ(fwd.head_dim_v, 64u);
  EXPECT_EQ(fwd.mask, AttentionMask::kCausal);
  EXPECT_EQ(fwd.a_type, DataType::kBfloat16);
  // The backward on the autograd thread: both of its kernels; no scalars recorded there.
  for (const char* kernel : {"flash_bwd_dq_dk_dv", "flash_bwd_convert_dq"}) {
    ASSERT_TRUE(Shaped(kernel)) << kernel;
    EXPECT_EQ(Of(kernel).api, GemmApi::kFrameworkAttentionBackward);
    EXPECT_EQ(Of(kernel).batch_count, 32u);
    EXPECT_EQ(Of(kernel).mask, AttentionMask::kUnspecified);
  }
  // A launch on another thread at the time of aten::addmm is not addmm's.
  EXPECT_FALSE(Shaped("other_thread"));
}

TEST_F(KinetoGemmLinkTest, InspectCountsGemmAndAttentionShapes) {
  auto summary = SummarizeTrace(path_);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->kernels, 11u);
  EXPECT_EQ(summary->gemm_calls, 4u);
  EXPECT_EQ(summary->kernels_with_gemm_shape, 4u);
  EXPECT_EQ(summary->attention_calls, 3u);
  EXPECT_EQ(summary->kernels_with_attention_shape, 3u);
}

// Times before the trace's base: the end of an operator at -10 µs was taken as INT64_MAX minus
// its start, a signed overflow (UBSan, found by lumos_kineto_import_fuzzer). It links as any.
TEST(KinetoGemmEdgeTest, OperatorsBeforeTimeZeroLinkTheirKernels) {
  constexpr const char kTrace[] = R"JSON({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 101, "ts": -10, "dur": 5,
     "args": {"External id": 1, "Input Dims": [[2, 3], [3, 5]]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 101,
     "ts": -9, "dur": 1, "args": {"correlation": 100}},
    {"ph": "X", "cat": "kernel", "name": "gemm_small", "pid": 0, "tid": 7, "ts": 0, "dur": 1,
     "args": {"stream": 7, "correlation": 100}}
  ]})JSON";
  ::lumos::testing::TempDir dir;
  io::PaddedText text;
  text.Append(kTrace, sizeof(kTrace) - 1);
  ConvertStats stats;
  const std::string path = dir.File("early.pb.zst");
  ASSERT_TRUE(ConvertKinetoText(text, "early.json", path, {}, &stats).ok());
  EXPECT_EQ(stats.gemm_calls, 1u);
  auto job = LoadJob({path});
  ASSERT_TRUE(job.ok()) << job.status().message();
  const RankTrace& rank = job->ranks.at(0);
  ASSERT_EQ(rank.kernels.size(), 1u);
  const GemmCallEvent* gemm = rank.GemmOf(0);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->m, 2u);
  EXPECT_EQ(gemm->n, 5u);
  EXPECT_EQ(gemm->start_ns, -10'000);
}

}  // namespace
}  // namespace lumos::modeler::kineto
