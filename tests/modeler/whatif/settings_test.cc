// The settings of `lumos-model estimate`: --base / --set lists, --sweep products, and the
// consistency of a complete setup, on the built-in specs (and a user's specs file).
#include "modeler/whatif/settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "modeler/models/hardware/hardware_specs.h"

namespace lumos::modeler::whatif {
namespace {

using ::testing::HasSubstr;

const models::SpecTable& Specs() { return models::SpecTable::Builtin(); }

std::string SetError(const std::string& text, SettingScope scope = SettingScope::kSet) {
  StatusOr<SettingList> list = ParseSettings(text, scope, Specs());
  EXPECT_FALSE(list.ok()) << text << " parsed";
  if (list.ok()) return "";
  EXPECT_EQ(list.status().message().find('\n'), std::string::npos) << "one line";
  return list.status().message();
}

TEST(SettingsTest, EveryKeyHasANameThatReadsBackAndTheSetupKeysComeFirst) {
  ASSERT_EQ(SettingKeys().size(), static_cast<size_t>(kSettingKeyCount));
  const std::vector<std::string> setup = {
      "layers", "hidden", "ffn", "heads", "seq", "mbs", "micro_batches",
      "vocab",  "world",  "dp",  "tp",    "pp",  "cp",  "ep"};
  std::set<std::string> names;
  for (size_t i = 0; i < SettingKeys().size(); ++i) {
    const SettingKey key = SettingKeys()[i];
    EXPECT_EQ(static_cast<size_t>(key), i);
    const std::string name = SettingKeyName(key);
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(SettingKeyFromName(name), key);
    EXPECT_EQ(IsSetupKey(key), i < setup.size()) << name;
    if (i < setup.size()) {
      EXPECT_EQ(name, setup[i]);
    }
  }
  EXPECT_FALSE(SettingKeyFromName("Layers").has_value());
  EXPECT_EQ(
      SettingKeyNames(SettingScope::kBase),
      "layers, hidden, ffn, heads, seq, mbs, micro_batches, vocab, world, dp, tp, pp, cp, ep");
  EXPECT_THAT(SettingKeyNames(SettingScope::kSet),
              HasSubstr("ep, gpu, net, net_gbps, net_us, zero, recompute, sequence_parallel"));
}

TEST(SettingsTest, ParsesEveryKindOfValueInTheOrderGiven) {
  StatusOr<SettingList> list = ParseSettings(
      " layers=80, hidden = 8192 ,gpu=NVIDIA H100 80GB HBM3,net=ib800,net_gbps=200.5,net_us=0,"
      "zero=3,recompute=selective,sequence_parallel=1,dp=2147483647",
      SettingScope::kSet, Specs());
  ASSERT_TRUE(list.ok()) << list.status().message();
  ASSERT_EQ(list->size(), 10u);
  EXPECT_EQ((*list)[0].key, SettingKey::kLayers);
  EXPECT_EQ((*list)[0].integer, 80);
  EXPECT_EQ((*list)[1].key, SettingKey::kHidden);
  EXPECT_EQ((*list)[1].integer, 8192);
  EXPECT_EQ((*list)[1].text, "8192");
  // A CUDA device name is the spec's entry.
  EXPECT_EQ((*list)[2].key, SettingKey::kGpu);
  EXPECT_EQ((*list)[2].name, "H100-SXM5-80GB");
  EXPECT_EQ((*list)[2].text, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*list)[3].name, "ib800");
  EXPECT_DOUBLE_EQ((*list)[4].number, 200.5);
  EXPECT_DOUBLE_EQ((*list)[5].number, 0);
  EXPECT_EQ((*list)[6].integer, 3);
  EXPECT_EQ((*list)[7].recompute(), Recompute::kSelective);
  EXPECT_EQ((*list)[8].integer, 1);
  EXPECT_EQ((*list)[9].integer, kMaxWholeNumber);
  // Read back as written.
  EXPECT_EQ(FormatSettings(*list),
            "layers=80,hidden=8192,gpu=NVIDIA H100 80GB HBM3,net=ib800,net_gbps=200.5,net_us=0,"
            "zero=3,recompute=selective,sequence_parallel=1,dp=2147483647");
  StatusOr<SettingList> again = ParseSettings(FormatSettings(*list), SettingScope::kSet, Specs());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *list);
}

TEST(SettingsTest, ANetworkGivenAsNumbersKeepsItsComma) {
  StatusOr<SettingList> list =
      ParseSettings("net=400Gbps,3us,gpu=B200", SettingScope::kSet, Specs());
  ASSERT_TRUE(list.ok()) << list.status().message();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].text, "400Gbps,3us");
  EXPECT_EQ((*list)[0].name, "400Gbps,3us");
  EXPECT_EQ((*list)[1].name, "B200");
  // Only after net: elsewhere "3us" is an item without '='.
  EXPECT_THAT(SetError("net_gbps=400,3us"), HasSubstr("'3us': expected KEY=VALUE"));
}

TEST(SettingsTest, RecomputeModes) {
  for (const auto& [text, mode] : {std::pair{"none", Recompute::kNone},
                                   {"selective", Recompute::kSelective},
                                   {"full", Recompute::kFull}}) {
    StatusOr<SettingList> list =
        ParseSettings(std::string("recompute=") + text, SettingScope::kSet, Specs());
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(list->front().recompute(), mode);
    EXPECT_STREQ(RecomputeName(mode), text);
  }
  EXPECT_EQ(SetError("recompute=partial"),
            "--set recompute=partial: unknown mode (expected none, selective, full)");
}

TEST(SettingsTest, UnknownKeyListsTheValidOnes) {
  EXPECT_EQ(SetError("layers=4,hiden=4096"), "--set hiden=4096: unknown key 'hiden' (valid: " +
                                                 SettingKeyNames(SettingScope::kSet) + ")");
  EXPECT_THAT(SetError("=4"), HasSubstr("unknown key ''"));
}

TEST(SettingsTest, BaseTakesOnlyTheSetupKeys) {
  StatusOr<SettingList> list = ParseSettings(
      "layers=40,hidden=4096,heads=32,seq=2048,mbs=4,dp=8,tp=2,pp=1,cp=1,ep=1,"
      "ffn=16384,vocab=50257,world=16,micro_batches=8",
      SettingScope::kBase, Specs());
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->size(), 14u);
  for (const char* key : {"gpu=H100-SXM5-80GB", "net=ib400", "zero=1", "recompute=full"}) {
    const std::string error = SetError(key, SettingScope::kBase);
    EXPECT_THAT(error, HasSubstr(std::string("--base ") + key));
    EXPECT_THAT(error, HasSubstr("give it with --set"));
    EXPECT_THAT(error, HasSubstr("(--base takes: " + SettingKeyNames(SettingScope::kBase)));
  }
}

TEST(SettingsTest, NumbersThatAreNotWholeOrOutOfRangeAreOneErrorNamingKeyAndValue) {
  EXPECT_EQ(SetError("layers=abc"),
            "--set layers=abc: not a number (expected a whole number from 1 to 2147483647)");
  EXPECT_EQ(SetError("layers=2.5"),
            "--set layers=2.5: not a whole number (expected a whole number from 1 to 2147483647)");
  EXPECT_EQ(SetError("layers=1e3"),
            "--set layers=1e3: not a whole number (expected a whole number from 1 to 2147483647)");
  EXPECT_EQ(SetError("layers=0"),
            "--set layers=0: out of range (expected a whole number from 1 to 2147483647)");
  EXPECT_EQ(SetError("dp=-8"),
            "--set dp=-8: out of range (expected a whole number from 1 to 2147483647)");
  EXPECT_EQ(SetError("dp=+8"),
            "--set dp=+8: not a number (expected a whole number from 1 to 2147483647)");
  EXPECT_EQ(SetError("tp=2147483648"),
            "--set tp=2147483648: out of range (expected a whole number from 1 to 2147483647)");
  EXPECT_EQ(SetError("tp=99999999999999999999999"),
            "--set tp=99999999999999999999999: out of range (expected a whole number from 1 to "
            "2147483647)");
  EXPECT_EQ(SetError("seq="),
            "--set seq=: no value (expected a whole number from 1 to 2147483647)");
  EXPECT_EQ(SetError("zero=4"), "--set zero=4: out of range (expected a whole number from 0 to 3)");
  EXPECT_EQ(SetError("sequence_parallel=yes"),
            "--set sequence_parallel=yes: not a number (expected a whole number from 0 to 1)");
  EXPECT_EQ(SetError("net_gbps=0"), "--set net_gbps=0: out of range (expected > 0 Gbit/s)");
  EXPECT_EQ(SetError("net_gbps=fast"), "--set net_gbps=fast: not a number (expected > 0 Gbit/s)");
  EXPECT_EQ(SetError("net_gbps=inf"), "--set net_gbps=inf: not a number (expected > 0 Gbit/s)");
  EXPECT_EQ(SetError("net_us=-1"), "--set net_us=-1: out of range (expected >= 0 µs)");
  EXPECT_EQ(SetError("host=0"), "--set host=0: out of range (expected > 0 x the measured time)");
  EXPECT_EQ(SetError("host=fast"),
            "--set host=fast: not a number (expected > 0 x the measured time)");
  EXPECT_NE(SetError("host=0.5", SettingScope::kBase).find("give it with --set"), std::string::npos)
      << SetError("host=0.5", SettingScope::kBase);
}

TEST(SettingsTest, AHostFactorIsANumber) {
  StatusOr<SettingList> list = ParseSettings("host=0.75", SettingScope::kSet, Specs());
  ASSERT_TRUE(list.ok()) << list.status().message();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].key, SettingKey::kHost);
  EXPECT_DOUBLE_EQ((*list)[0].number, 0.75);
  EXPECT_EQ(FormatSettings(*list), "host=0.75");
}

TEST(SettingsTest, DuplicateEmptyAndMalformedItems) {
  EXPECT_EQ(SetError("layers=4,hidden=8,layers=5"),
            "--set layers=5: 'layers' given twice (first layers=4)");
  EXPECT_EQ(SetError("layers=4,,hidden=8"),
            "--set 'layers=4,,hidden=8': empty item (between 'layers=4' and 'hidden=8')");
  EXPECT_EQ(SetError("layers=4,"), "--set 'layers=4,': empty item (after 'layers=4')");
  EXPECT_EQ(SetError(",layers=4"), "--set ',layers=4': empty item (before 'layers=4')");
  EXPECT_EQ(SetError("layers"), "--set 'layers': expected KEY=VALUE");
  EXPECT_THAT(SetError(""), HasSubstr("--set: no settings (expected KEY=VALUE,...; keys: layers"));
  EXPECT_THAT(SetError("  ", SettingScope::kBase), HasSubstr("--base: no settings"));
}

TEST(SettingsTest, GpuOrNetworkUnknownToTheSpecs) {
  const std::string gpu = SetError("gpu=H300");
  EXPECT_THAT(gpu, HasSubstr("--set gpu=H300: gpu 'H300' is not in the specs (known: "));
  EXPECT_THAT(gpu, HasSubstr("H100-SXM5-80GB"));
  const std::string net = SetError("net=ib1600");
  EXPECT_THAT(net, HasSubstr("--set net=ib1600: unknown network 'ib1600' (known: "));
  EXPECT_THAT(net, HasSubstr("ib400"));
}

TEST(SettingsTest, AUserSpecsFileAddsGpusItKnows) {
  models::SpecTable specs = models::SpecTable::Builtin();
  EXPECT_FALSE(ParseSettings("gpu=X1", SettingScope::kSet, specs).ok());
  ASSERT_TRUE(specs
                  .Add("gpu X1\n  device Lumos X1 Accelerator\n  sms 100\n  tflops bf16 500\n"
                       "  hbm_gb_per_s 2000\n  hbm_gb 96\n",
                       "x1.txt")
                  .ok());
  StatusOr<SettingList> list = ParseSettings("gpu=Lumos X1 Accelerator", SettingScope::kSet, specs);
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->front().name, "X1");
}

TEST(SettingsTest, MergeReplacesByKeyAndKeepsTheBaseOrder) {
  StatusOr<SettingList> base =
      ParseSettings("layers=40,hidden=4096,dp=8", SettingScope::kBase, Specs());
  StatusOr<SettingList> set =
      ParseSettings("dp=16,gpu=H200-SXM-141GB,layers=80", SettingScope::kSet, Specs());
  ASSERT_TRUE(base.ok() && set.ok());
  const SettingList merged = MergeSettings(*base, *set);
  EXPECT_EQ(FormatSettings(merged), "layers=80,hidden=4096,dp=16,gpu=H200-SXM-141GB");
  ASSERT_NE(FindSetting(merged, SettingKey::kDp), nullptr);
  EXPECT_EQ(FindSetting(merged, SettingKey::kDp)->integer, 16);
  EXPECT_EQ(FindSetting(merged, SettingKey::kTp), nullptr);
}

TEST(SettingsTest, SweepIsTheCartesianProductFirstDimensionSlowest) {
  StatusOr<std::vector<SettingList>> sweep =
      ParseSweep("layers=40,80;dp=8,16,32; gpu=H100-SXM5-80GB", Specs());
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  std::vector<std::string> lines;
  for (const SettingList& combination : *sweep) lines.push_back(FormatSettings(combination));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "layers=40,dp=8,gpu=H100-SXM5-80GB",
                       "layers=40,dp=16,gpu=H100-SXM5-80GB",
                       "layers=40,dp=32,gpu=H100-SXM5-80GB",
                       "layers=80,dp=8,gpu=H100-SXM5-80GB",
                       "layers=80,dp=16,gpu=H100-SXM5-80GB",
                       "layers=80,dp=32,gpu=H100-SXM5-80GB",
                   }));
  EXPECT_EQ((*sweep)[4][1].integer, 16);
}

TEST(SettingsTest, SweepOfNetworksKeepsNumbersWhole) {
  StatusOr<std::vector<SettingList>> sweep =
      ParseSweep("net=ib400,400Gbps,3us,ib800;recompute=none,full", Specs());
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->size(), 6u);
  EXPECT_EQ((*sweep)[2][0].name, "400Gbps,3us");
  EXPECT_EQ((*sweep)[3][1].recompute(), Recompute::kFull);
  EXPECT_EQ((*sweep)[5][0].name, "ib800");
}

TEST(SettingsTest, SweepErrorsNameTheDimensionAndValue) {
  auto error = [](const std::string& text) {
    StatusOr<std::vector<SettingList>> sweep = ParseSweep(text, Specs());
    EXPECT_FALSE(sweep.ok()) << text;
    return sweep.ok() ? std::string() : sweep.status().message();
  };
  EXPECT_EQ(error("layers=40,abc"),
            "--sweep layers=abc: not a number (expected a whole number from 1 to 2147483647)");
  EXPECT_EQ(error("layers=40,,80"), "--sweep layers=40,,80: empty value (between '40' and '80')");
  EXPECT_EQ(error("layers=40;;dp=2"),
            "--sweep 'layers=40;;dp=2': empty dimension (between 'layers=40' and 'dp=2')");
  EXPECT_EQ(error("layers=40;layers=80"), "--sweep layers=80: 'layers' is swept twice");
  EXPECT_EQ(error("layers=40,40"), "--sweep layers=40,40: value '40' given twice (first '40')");
  EXPECT_EQ(error("gpu=H100-SXM5-80GB,NVIDIA H100 80GB HBM3"),
            "--sweep gpu=H100-SXM5-80GB,NVIDIA H100 80GB HBM3: value 'NVIDIA H100 80GB HBM3' "
            "given twice (first 'H100-SXM5-80GB')");
  EXPECT_EQ(error("layers"), "--sweep 'layers': expected KEY=V1,V2,...");
  EXPECT_THAT(error("colour=red"), HasSubstr("--sweep colour=red: unknown key 'colour'"));
  EXPECT_THAT(error("gpu=H300"), HasSubstr("--sweep gpu=H300: gpu 'H300' is not in the specs"));
  EXPECT_THAT(error(""), HasSubstr("--sweep: no settings"));
}

TEST(SettingsTest, SweepRefusesMoreThanTheCapOfCombinations) {
  // 10 values in each of 5 dimensions: 100000, the cap; a sixth with 2 is beyond it.
  std::string ten = "1,2,3,4,5,6,7,8,9,10";
  const std::string at_cap =
      "layers=" + ten + ";hidden=" + ten + ";ffn=" + ten + ";heads=" + ten + ";seq=" + ten;
  StatusOr<std::vector<SettingList>> sweep = ParseSweep(at_cap, Specs());
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  EXPECT_EQ(sweep->size(), kMaxSweepCombinations);
  EXPECT_EQ(FormatSettings(sweep->back()), "layers=10,hidden=10,ffn=10,heads=10,seq=10");
  StatusOr<std::vector<SettingList>> beyond = ParseSweep(at_cap + ";mbs=1,2", Specs());
  ASSERT_FALSE(beyond.ok());
  EXPECT_THAT(beyond.status().message(), HasSubstr("more than 100000 combinations"));
}

// Megatron-LM's GPT-3 175B on 1024 A100s (Narayanan et al. 2021, Table 1: t=8, p=16, d=8).
SetupValues Gpt3() {
  SetupValues setup;
  setup.layers = 96;
  setup.hidden = 12288;
  setup.ffn = 49152;  // 4h.
  setup.heads = 96;
  setup.seq = 2048;
  setup.mbs = 1;
  setup.micro_batches = 192;
  setup.vocab = 51200;
  setup.world = 1024;
  setup.dp = 8;
  setup.tp = 8;
  setup.pp = 16;
  return setup;
}

TEST(SettingsTest, ConsistentSetupsPass) {
  EXPECT_TRUE(CheckSetup(Gpt3()).ok()) << CheckSetup(Gpt3()).message();
  SetupValues with_cp = Gpt3();
  with_cp.world = 2048;
  with_cp.cp = 2;
  with_cp.ep = 16;
  with_cp.sequence_parallel = true;
  EXPECT_TRUE(CheckSetup(with_cp).ok()) << CheckSetup(with_cp).message();
}

TEST(SettingsTest, SettingsApplyToASetupAndItsCheckCatchesWhatTheyBreak) {
  // dp 8 -> 16 without changing world breaks world = dp*tp*pp*cp; with world 2048 it holds.
  StatusOr<SettingList> set =
      ParseSettings("dp=16,sequence_parallel=1,gpu=H100-SXM5-80GB", SettingScope::kSet, Specs());
  ASSERT_TRUE(set.ok());
  SetupValues setup = WithSettings(Gpt3(), *set);
  EXPECT_EQ(setup.dp, 16);
  EXPECT_TRUE(setup.sequence_parallel);
  EXPECT_EQ(setup.layers, 96);
  EXPECT_EQ(CheckSetup(setup).message(), "world=1024 is not dp*tp*pp*cp = 16*8*16*1 = 2048");
  set = ParseSettings("dp=16,world=2048", SettingScope::kSet, Specs());
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(CheckSetup(WithSettings(Gpt3(), *set)).ok());
}

TEST(SettingsTest, InconsistentSetupsNameTheValues) {
  auto error = [](auto change) {
    SetupValues setup = Gpt3();
    change(&setup);
    const Status status = CheckSetup(setup);
    EXPECT_FALSE(status.ok());
    return status.message();
  };
  EXPECT_EQ(error([](SetupValues* s) { s->vocab = 0; }), "vocab=0: must be a whole number > 0");
  EXPECT_EQ(error([](SetupValues* s) { s->dp = 3; }), "dp=3 does not divide world=1024");
  EXPECT_EQ(error([](SetupValues* s) { s->world = 512; }),
            "world=512 is not dp*tp*pp*cp = 8*8*16*1 = 1024");
  EXPECT_EQ(error([](SetupValues* s) {
              s->world = 2147483648;  // 2^31 = dp*tp*pp*cp' where each divides it, product > 2^63
              s->dp = s->tp = s->pp = s->cp = 2147483648;
            }),
            "world=2147483648 is not dp*tp*pp*cp = 2147483648*2147483648*2147483648*2147483648 "
            "= more than 2^63");
  EXPECT_EQ(error([](SetupValues* s) { s->heads = 100; }),
            "heads=100 is not divisible by tp=8 (each tensor-parallel rank holds whole heads)");
  EXPECT_EQ(error([](SetupValues* s) { s->hidden = 12289; }),
            "hidden=12289 is not divisible by heads=96 (the head size is hidden/heads)");
  EXPECT_EQ(error([](SetupValues* s) { s->ffn = 49156; }),
            "ffn=49156 is not divisible by tp=8 (the MLP is split by columns over tp)");
  EXPECT_EQ(error([](SetupValues* s) { s->layers = 90; }),
            "layers=90 is not divisible by pp=16 (pipeline stages of equal depth)");
  EXPECT_EQ(error([](SetupValues* s) { s->ep = 3; }),
            "ep=3 does not divide dp*cp = 8*1 (experts are sharded within the data- and "
            "context-parallel ranks)");
  EXPECT_EQ(error([](SetupValues* s) {
              s->world = 4096;
              s->cp = 4;
              s->seq = 2044;
            }),
            "seq=2044 is not divisible by 2*cp = 8 (context parallelism splits each sequence "
            "into 2*cp chunks)");
  EXPECT_EQ(error([](SetupValues* s) {
              s->seq = 2044;
              s->sequence_parallel = true;
            }),
            "seq/cp = 2044/1 is not divisible by tp=8 (sequence parallelism splits the sequence "
            "over tp)");
}

}  // namespace
}  // namespace lumos::modeler::whatif
