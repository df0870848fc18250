// The spec parser (modeler/models/hardware/hardware_specs.h) on the shipped table and on user
// files: every GPU the issue names is there, trace headers' device names map onto it, a user file
// adds and replaces entries, and every malformed file is one error naming file:line.
#include "modeler/models/hardware/hardware_specs.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/testing/sample_trace.h"

namespace lumos::modeler::models {
namespace {

using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

TEST(HardwareSpecsTest, BuiltinTableHasEveryGpuOfTheIssueAndOfTheSharedTraces) {
  const SpecTable& specs = SpecTable::Builtin();
  for (const char* name : {"A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "B200", "GB200",
                           "V100-SXM2-32GB", "A100-SXM4-40GB"}) {
    const GpuSpec* gpu = specs.FindGpu(name);
    ASSERT_NE(gpu, nullptr) << name;
    EXPECT_GT(gpu->sms, 0) << name;
    EXPECT_GT(gpu->hbm_bytes_per_s, 0) << name;
    EXPECT_TRUE(gpu->hbm_bytes.has_value()) << name;
    EXPECT_TRUE(gpu->nvlink_bytes_per_s.has_value()) << name;
    EXPECT_TRUE(gpu->nvlink_domain_gpus.has_value()) << name;
    EXPECT_GT(gpu->PeakFlops(DType::kFp32), 0) << name;
    // Tensor cores: dense peaks above the fp32 one.
    EXPECT_GT(gpu->PeakFlops(DType::kFp16), gpu->PeakFlops(DType::kFp32)) << name;
  }
  // fp8 from Hopper on, bf16 and tf32 from Ampere on.
  EXPECT_GT(specs.FindGpu("H100-SXM5-80GB")->PeakFlops(DType::kFp8), 0);
  EXPECT_EQ(specs.FindGpu("A100-SXM4-80GB")->PeakFlops(DType::kFp8), 0);
  EXPECT_EQ(specs.FindGpu("V100-SXM2-32GB")->PeakFlops(DType::kBf16), 0);
  // Dense, not sparse: H100's bf16 is 989.4 TFLOP/s (the datasheet's 1,979 is with sparsity).
  EXPECT_DOUBLE_EQ(specs.FindGpu("H100-SXM5-80GB")->PeakFlops(DType::kBf16), 989.4e12);
  EXPECT_FALSE(specs.FindGpu("B200")->l2_bytes.has_value());  // Unknown, said so.
  EXPECT_EQ(*specs.FindGpu("GB200")->nvlink_domain_gpus, 72);
}

// What the collective model needs of a GPU: its NVLink domain, NVLS (NVLink SHARP: Hopper and
// Blackwell NVSwitch systems, not A100's or V100's) and its architecture.
TEST(HardwareSpecsTest, BuiltinGpusSayTheirArchitectureAndWhetherTheirSwitchesReduce) {
  const SpecTable& specs = SpecTable::Builtin();
  const std::tuple<const char*, int, bool> cases[] = {
      {"V100-SXM2-32GB", 70, false}, {"A100-SXM4-40GB", 80, false}, {"A100-SXM4-80GB", 80, false},
      {"H100-SXM5-80GB", 90, true},  {"H200-SXM-141GB", 90, true},  {"B200", 100, true},
      {"GB200", 100, true},
  };
  for (const auto& [name, compute_capability, nvls] : cases) {
    const GpuSpec* gpu = specs.FindGpu(name);
    ASSERT_NE(gpu, nullptr) << name;
    ASSERT_TRUE(gpu->compute_capability.has_value()) << name;
    EXPECT_EQ(*gpu->compute_capability, compute_capability) << name;
    EXPECT_EQ(gpu->nvls, nvls) << name;
  }
  // Not given: unknown architecture, no NVLS.
  SpecTable mine;
  ASSERT_TRUE(mine.Add("gpu X1\n  sms 10\n  tflops bf16 100\n  hbm_gb_per_s 1000\n"
                       "gpu X2\n  sms 10\n  tflops bf16 100\n  hbm_gb_per_s 1000\n"
                       "  compute_capability 12.1\n  nvls yes\n",
                       "mine.txt")
                  .ok());
  EXPECT_FALSE(mine.FindGpu("X1")->compute_capability.has_value());
  EXPECT_FALSE(mine.FindGpu("X1")->nvls);
  EXPECT_EQ(*mine.FindGpu("X2")->compute_capability, 121);
  EXPECT_TRUE(mine.FindGpu("X2")->nvls);
}

TEST(HardwareSpecsTest, BuiltinGpusSayTheirHostLinkOneDirectionAndAUserFileSetsIt) {
  const SpecTable& specs = SpecTable::Builtin();
  // Half of each datasheet's both-directions figure (specs/hardware.txt names the source).
  const std::pair<const char*, double> cases[] = {
      {"V100-SXM2-32GB", 16e9}, {"A100-SXM4-40GB", 32e9}, {"A100-SXM4-80GB", 32e9},
      {"H100-SXM5-80GB", 64e9}, {"H200-SXM-141GB", 64e9}, {"B200", 64e9},
      {"GB200", 450e9},
  };
  for (const auto& [name, bytes_per_s] : cases) {
    const GpuSpec* gpu = specs.FindGpu(name);
    ASSERT_NE(gpu, nullptr) << name;
    ASSERT_TRUE(gpu->host_bytes_per_s.has_value()) << name;
    EXPECT_DOUBLE_EQ(*gpu->host_bytes_per_s, bytes_per_s) << name;
  }
  SpecTable mine;
  ASSERT_TRUE(mine.Add("gpu X1\n  sms 10\n  tflops bf16 100\n  hbm_gb_per_s 1000\n"
                       "gpu X2\n  sms 10\n  tflops bf16 100\n  hbm_gb_per_s 1000\n"
                       "  host_gb_per_s 25.5\n"
                       "gpu X3\n  sms 10\n  tflops bf16 100\n  hbm_gb_per_s 1000\n"
                       "  host_gb_per_s unknown\n",
                       "mine.txt")
                  .ok());
  EXPECT_FALSE(mine.FindGpu("X1")->host_bytes_per_s.has_value());
  EXPECT_DOUBLE_EQ(*mine.FindGpu("X2")->host_bytes_per_s, 25.5e9);
  EXPECT_FALSE(mine.FindGpu("X3")->host_bytes_per_s.has_value());
}

TEST(HardwareSpecsTest, CudaDeviceNamesOfTraceHeadersMapOntoEntries) {
  const SpecTable& specs = SpecTable::Builtin();
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"},
      {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
      {"A100-SXM4-80GB", "A100-SXM4-80GB"},
      {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
      {"NVIDIA H200", "H200-SXM-141GB"},
      {"NVIDIA B200", "B200"},
      {"NVIDIA GB200", "GB200"},
      {"NVIDIA A100-PG509-200", "A100-SXM4-40GB"},  // The HTA traces' 40 GB boards.
      {"nvidia h100 80gb hbm3", "H100-SXM5-80GB"},
      {"h100-sxm5-80gb", "H100-SXM5-80GB"},
  };
  for (const auto& [device, name] : cases) {
    const GpuSpec* gpu = specs.FindGpu(device);
    ASSERT_NE(gpu, nullptr) << device;
    EXPECT_EQ(gpu->name, name) << device;
  }
  EXPECT_EQ(specs.FindGpu("NVIDIA GeForce RTX 4090"), nullptr);
}

TEST(HardwareSpecsTest, NetworksByNameOrNumbers) {
  const SpecTable& specs = SpecTable::Builtin();
  for (const char* name : {"ib100", "ib200", "ib400", "roce400", "ib800", "roce800"}) {
    const NetworkSpec* network = specs.FindNetwork(name);
    ASSERT_NE(network, nullptr) << name;
    EXPECT_GT(network->latency_ns, 0) << name;
  }
  EXPECT_DOUBLE_EQ(specs.FindNetwork("ib400")->bytes_per_s, 50e9);  // 400 Gb/s = 50 GB/s.
  auto numbers = specs.ResolveNetwork("200Gbps,2.5us");
  ASSERT_TRUE(numbers.ok()) << numbers.status().message();
  EXPECT_DOUBLE_EQ(numbers->bytes_per_s, 25e9);
  EXPECT_EQ(numbers->latency_ns, 2500);
  EXPECT_TRUE(specs.ResolveNetwork("IB400").ok());
  for (const char* bad : {"ib300", "400,3", "400Gbps", "0Gbps,3us", "400Gbps,-1us", ""}) {
    auto r = specs.ResolveNetwork(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("known: ib100"), std::string::npos) << bad;
  }
}

TEST(HardwareSpecsTest, UserFileAddsAndReplacesEntriesByName) {
  SpecTable specs = SpecTable::Builtin();
  const size_t before = specs.gpus().size();
  TempDir dir;
  WriteFileBytes(dir.File("mine.txt"),
                 "# my cluster\n"
                 "gpu H100-SXM5-80GB   # a power-capped one\n"
                 "  device NVIDIA H100 80GB HBM3\n"
                 "  sms 132\n"
                 "  tflops bf16 800\n"
                 "  hbm_gb_per_s 3000\n"
                 "gpu MI300X\n"
                 "  device AMD Instinct MI300X\n"
                 "  sms 304\n"
                 "  tflops bf16 1307.4\n"
                 "  hbm_gb_per_s 5300\n"
                 "  l2_mib unknown\n"
                 "network slingshot\n"
                 "  gbit_per_s 200\n"
                 "  latency_us 2\n");
  ASSERT_TRUE(specs.AddFile(dir.File("mine.txt")).ok());
  EXPECT_EQ(specs.gpus().size(), before + 1);
  const GpuSpec* h100 = specs.FindGpu("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->PeakFlops(DType::kBf16), 800e12);  // Replaced as a whole:
  EXPECT_EQ(h100->PeakFlops(DType::kFp8), 0);               // no fp8 in the user's entry.
  EXPECT_EQ(h100->where, dir.File("mine.txt") + ":2");
  ASSERT_NE(specs.FindGpu("AMD Instinct MI300X"), nullptr);
  ASSERT_NE(specs.FindNetwork("slingshot"), nullptr);
  EXPECT_NE(specs.FindNetwork("ib400"), nullptr);  // The others stay.
}

struct Bad {
  const char* name;
  const char* text;
  const char* error;  // The whole message after "bad.txt:".
};

class MalformedSpecsTest : public ::testing::TestWithParam<Bad> {};

TEST_P(MalformedSpecsTest, IsOneErrorNamingFileAndLineAndAddsNothing) {
  SpecTable specs = SpecTable::Builtin();
  const size_t gpus = specs.gpus().size();
  const Status status = specs.Add(GetParam().text, "bad.txt");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), std::string("bad.txt:") + GetParam().error);
  EXPECT_EQ(specs.gpus().size(), gpus);
  EXPECT_EQ(specs.FindGpu("X1"), nullptr);
}

const char kGood[] = "gpu X1\n  sms 10\n  tflops bf16 100\n  hbm_gb_per_s 1000\n";

INSTANTIATE_TEST_SUITE_P(
    EveryKindOfMistake, MalformedSpecsTest,
    ::testing::Values(
        Bad{"FieldOutsideEntry", "sms 10\n",
            "1: 'sms' outside an entry (start one with gpu NAME or network NAME)"},
        Bad{"EntryWithoutName", "gpu\n", "1: gpu needs one NAME without spaces or commas"},
        Bad{"NameWithSpaces", "gpu two words\n", "1: gpu needs one NAME without spaces or commas"},
        Bad{"NotANumber", "gpu X1\n  sms ten\n",
            "2: sms: 'ten' is not a number > 0 (or 'unknown')"},
        Bad{"NotWhole", "gpu X1\n  sms 10.5\n", "2: sms: '10.5' is not a whole number"},
        Bad{"FieldTwice", "gpu X1\n  sms 10\n  sms 12\n", "3: sms given twice"},
        Bad{"NoValue", "gpu X1\n  sms\n", "2: sms: no value"},
        Bad{"NegativePeak", "gpu X1\n  tflops bf16 -1\n",
            "2: tflops: '-1' is not a number > 0 (or 'unknown')"},
        Bad{"UnknownDtype", "gpu X1\n  tflops int4 10\n",
            "2: tflops: unknown dtype 'int4' (fp32, tf32, bf16, fp16, fp8)"},
        Bad{"PeakWithoutNumber", "gpu X1\n  tflops bf16\n", "2: tflops needs DTYPE and a number"},
        Bad{"Infinite", "gpu X1\n  hbm_gb_per_s inf\n",
            "2: hbm_gb_per_s: 'inf' is not a number > 0 (or 'unknown')"},
        Bad{"UnknownGpuField", "gpu X1\n  colour green\n",
            "2: unknown gpu field 'colour' (device, sms, boost_clock_mhz, tflops, hbm_gb_per_s, "
            "hbm_gb, l2_mib, nvlink_gb_per_s, nvlink_domain_gpus, compute_capability, nvls, "
            "host_gb_per_s)"},
        Bad{"ComputeCapabilityNotMajorMinor", "gpu X1\n  compute_capability 90\n",
            "2: compute_capability: '90' is not MAJOR.MINOR (such as 9.0)"},
        Bad{"ComputeCapabilityTwoMinorDigits", "gpu X1\n  compute_capability 9.10\n",
            "2: compute_capability: '9.10' is not MAJOR.MINOR (such as 9.0)"},
        Bad{"NvlsNotYesOrNo", "gpu X1\n  nvls maybe\n", "2: nvls: 'maybe' is not yes or no"},
        Bad{"NvlsTwice", "gpu X1\n  nvls yes\n  nvls no\n", "3: nvls given twice"},
        Bad{"HostLinkNotPositive", "gpu X1\n  host_gb_per_s 0\n",
            "2: host_gb_per_s: '0' is not a number > 0 (or 'unknown')"},
        Bad{"NoSms", "\n\ngpu X1\n  tflops bf16 100\n  hbm_gb_per_s 1000\n", "3: gpu X1: no sms"},
        Bad{"NoPeak", "gpu X1\n  sms 10\n  hbm_gb_per_s 1000\ngpu X2\n",
            "1: gpu X1: no tflops line"},
        Bad{"NoBandwidth", "gpu X1\n  sms 10\n  tflops bf16 100\n", "1: gpu X1: no hbm_gb_per_s"},
        Bad{"NameTwice", "gpu X1\n  sms 10\n  tflops bf16 100\n  hbm_gb_per_s 1000\ngpu x1\n",
            "5: 'x1' defined twice"},
        Bad{"NetworkNoRate", "network n1\n  latency_us 3\n", "1: network n1: no gbit_per_s"},
        Bad{"NetworkNoLatency", "network n1\n  gbit_per_s 100\n", "1: network n1: no latency_us"},
        Bad{"UnknownLatency", "network n1\n  gbit_per_s 100\n  latency_us unknown\n",
            "3: latency_us cannot be unknown"},
        Bad{"UnknownNetworkField", "network n1\n  speed 100\n",
            "2: unknown network field 'speed' (gbit_per_s, latency_us, about)"},
        // A good entry before the bad line is not kept either.
        Bad{"GoodEntryBeforeBadLine",
            "gpu X1\n  sms 10\n  tflops bf16 100\n  hbm_gb_per_s 1000\nnetwork n\n  x 1\n",
            "6: unknown network field 'x' (gbit_per_s, latency_us, about)"}),
    [](const ::testing::TestParamInfo<Bad>& info) { return std::string(info.param.name); });

TEST(HardwareSpecsTest, AGoodFileParsesAndCrLfAndCommentsAreFine) {
  SpecTable specs;
  ASSERT_TRUE(specs.Add(std::string(kGood) + "\r\n# end\r\n", "good.txt").ok());
  ASSERT_NE(specs.FindGpu("X1"), nullptr);
  EXPECT_EQ(specs.FindGpu("X1")->sms, 10);
}

TEST(HardwareSpecsTest, MissingOrUnreadableFileIsOneError) {
  SpecTable specs;
  TempDir dir;
  const Status missing = specs.AddFile(dir.File("none.txt"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message().rfind(dir.File("none.txt") + ": cannot open: ", 0), 0u)
      << missing.message();
  const Status directory = specs.AddFile(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.message().find(dir.path()), std::string::npos);
}

}  // namespace
}  // namespace lumos::modeler::models
