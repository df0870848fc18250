// modeler/plan: a model from its sizes, its layouts, the search and the commands (the fast
// path's step: step_model_test.cc; the slow path's: pipeline_graph_test.cc). The cost model is
// fitted from ../shared/data/costs (NVIDIA's measured GEMM and NCCL tables); the MLPerf step times
// (../shared/docs/estimation-anchors.md) are only scored.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "modeler/models/costs/cost_inputs.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/plan/layout.h"
#include "modeler/plan/model_spec.h"
#include "modeler/plan/pass_work.h"
#include "modeler/plan/search.h"
#include "modeler/plan/step_model.h"
#include "tests/modeler/plan/plan_support.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::plan {
namespace {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;
using plan_testing::Gpt3;
using plan_testing::H100Fp8;
using plan_testing::kGpt3;
using plan_testing::LayoutOf;
using plan_testing::SharedCosts;

TEST(ModelSpecTest, SizesAndTheirRules) {
  const ModelSpec gpt3 = Gpt3();
  EXPECT_EQ(gpt3.layers, 96);
  EXPECT_EQ(gpt3.ffn_size(), 4 * 12288);
  EXPECT_EQ(gpt3.head_dim(), 128);
  StatusOr<ModelSpec> llama = ParseModelSpec(
      "llama:layers=32,hidden=4096,heads=32,kv_heads=8,seq=8192,vocab=128256,"
      "ffn=14336");
  ASSERT_TRUE(llama.ok()) << llama.status().message();
  EXPECT_TRUE(llama->gated());
  EXPECT_EQ(llama->kv_heads_count(), 8);
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"gpt:layers=2,hidden=100,heads=3,seq=8,vocab=8", "heads (3) must divide hidden"},
           {"gpt:layers=2,hidden=96,heads=3,seq=8", "vocab= is required"},
           {"bert:layers=2", "unknown family"},
           {"gpt:layers=0,hidden=96,heads=3,seq=8,vocab=8", "layers=0"},
           {"gpt:layers=2,width=96", "unknown key 'width'"},
           {"gpt:layers=2,hidden=96,heads=3,seq=8,vocab=8,dropout=0.1", "dropout=0.1: 0 (none)"},
           {"layers=2", "FAMILY:K=V"}}) {
    StatusOr<ModelSpec> bad = ParseModelSpec(text);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.status().message().find(says), std::string::npos) << bad.status().message();
  }
}

TEST(LayoutTest, EveryRuleIsNamed) {
  const ModelSpec gpt3 = Gpt3();
  auto check = [&](const std::string& set) {
    Layout l;
    Status s = ApplyLayoutSettings(set, &l);
    if (!s.ok()) return s;
    return CheckLayout(gpt3, l, 8);
  };
  EXPECT_TRUE(check("tp=4,pp=8,dp=16,mbs=1,gbs=2048,sequence_parallel=1,zero=1").ok());
  for (const auto& [set, says] : std::vector<std::pair<std::string, std::string>>{
           {"tp=5", "tp (5) must divide heads (96)"},
           {"tp=16", "tp (16) must fit in one node (8 GPUs)"},
           {"pp=97", "pp (97) larger than layers (96)"},
           {"pp=5", "pp (5) must divide layers (96)"},
           {"vp=2", "vp (2) needs pp > 1"},
           {"pp=8,vp=5", "vp (5) must divide the layers per stage (12)"},
           {"dp=3,mbs=1,gbs=1000", "dp x mbs (3 x 1) must divide gbs (1000)"},
           {"pp=8,vp=2,dp=1,gbs=12", "micro-batches (12) a multiple of pp (8)"},
           {"sequence_parallel=1", "sequence_parallel needs tp > 1"},
           {"tp=2,tp_overlap=1", "tp_overlap needs sequence_parallel"},
           {"zero=4", "zero must be 0..3"},
           {"grad_sync_bytes=3", "grad_sync_bytes is 2 (bf16) or 4 (fp32)"},
           {"recompute=some", "none, selective or full"},
           {"cp=3", "cp (3) needs seq (2048) a multiple of 2 x cp"},
           {"cp=2,flash_attention=0", "cp needs flash_attention"},
           {"pp=8,ends_in_split=1", "pp (8) must divide layers + 2 (98: ends_in_split)"},
           {"pp=2,vp=5,ends_in_split=1", "vp (5) must divide the layers + 2 per stage (49)"},
           {"pp=2,vp=49,ends_in_split=1", "ends_in_split needs 2 or more layers a virtual stage"},
           {"ends_in_split=2", "ends_in_split is 0 or 1"},
           {"dq=2", "unknown layout key 'dq'"}}) {
    Status s = check(set);
    ASSERT_FALSE(s.ok()) << set;
    EXPECT_NE(s.message().find(says), std::string::npos) << set << ": " << s.message();
  }
}

TEST(LayoutTest, EnumerationKeepsOnlyLayoutsThatCanExist) {
  SearchSpace space;
  space.gpus = 512;
  space.gbs = 2048;
  const std::vector<Layout> layouts = EnumerateLayouts(Gpt3(), space);
  EXPECT_GT(layouts.size(), 100u);
  std::set<int64_t> vps_at_pp8;
  for (const Layout& l : layouts) {
    EXPECT_EQ(l.gpus(), 512) << LayoutText(l);
    EXPECT_TRUE(CheckLayout(Gpt3(), l, 8).ok()) << LayoutText(l);
    if (l.pp == 8) vps_at_pp8.insert(l.vp);
  }
  // Every virtual-stage count that divides the 12 layers of a stage (MLPerf v3.1 ran vp 12).
  EXPECT_EQ(vps_at_pp8, (std::set<int64_t>{1, 2, 3, 4, 6, 12}));
}

// Megatron's account_for_embedding/loss_in_pipeline_split, as its Llama 3.1 405B recipes set:
// 126 layers and the two ends over 8 x 8 virtual stages, 2 each, the first and the last giving
// one to the embedding and the loss; every layer placed once.
TEST(LayoutTest, TheEndsCountAsLayersInTheSplit) {
  StatusOr<ModelSpec> spec = ParseModelSpec(
      "llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,seq=8192,vocab=128256");
  ASSERT_TRUE(spec.ok());
  Layout l;
  ASSERT_TRUE(ApplyLayoutSettings("tp=8,pp=8,vp=8,cp=2,dp=8,gbs=512,ends_in_split=1", &l).ok());
  ASSERT_TRUE(CheckLayout(*spec, l, 8).ok()) << CheckLayout(*spec, l, 8).message();
  EXPECT_EQ(l.gpus(), 1024);
  EXPECT_EQ(l.gradient_ranks(), 16);
  int64_t placed = 0;
  for (int64_t v = 0; v < 64; ++v) {
    EXPECT_EQ(VirtualStageLayers(*spec, l, v), v == 0 || v == 63 ? 1 : 2) << v;
    placed += VirtualStageLayers(*spec, l, v);
  }
  EXPECT_EQ(placed, 126);
  EXPECT_EQ(StageLayers(*spec, l, 0), 15);
  EXPECT_EQ(StageLayers(*spec, l, 3), 16);
  EXPECT_EQ(StageLayers(*spec, l, 7), 15);
  l.ends_in_split = false;  // 126 layers do not split over 8 stages on their own.
  EXPECT_NE(CheckLayout(*spec, l, 8).message().find("pp (8) must divide layers (126)"),
            std::string::npos);
  // One stage: every layer, the ends beside them.
  Layout one;
  ASSERT_TRUE(ApplyLayoutSettings("ends_in_split=1", &one).ok());
  EXPECT_EQ(VirtualStageLayers(*spec, one, 0), 126);
  // A search with cp and the split fixed lays out N GPUs as tp x cp x pp x dp.
  SearchSpace space;
  space.gpus = 1024;
  space.gbs = 512;
  ASSERT_TRUE(ApplyFixedSettings("cp=2,ends_in_split=1", &space.fixed).ok());
  const std::vector<Layout> layouts = EnumerateLayouts(*spec, space);
  ASSERT_FALSE(layouts.empty());
  bool found = false;
  for (const Layout& e : layouts) {
    EXPECT_EQ(e.gpus(), 1024) << LayoutText(e);
    EXPECT_EQ(e.cp, 2);
    EXPECT_TRUE(e.ends_in_split);
    found = found || (e.tp == 8 && e.pp == 8 && e.vp == 8);
  }
  EXPECT_TRUE(found);
  // Several degrees tried (search --cp 1,2,4): each lays out the same GPUs.
  space.cp = {1, 2, 4};
  std::set<int64_t> tried;
  for (const Layout& e : EnumerateLayouts(*spec, space)) {
    EXPECT_EQ(e.gpus(), 1024) << LayoutText(e);
    tried.insert(e.cp);
  }
  EXPECT_EQ(tried, (std::set<int64_t>{1, 2, 4}));
}

TEST(LayoutTest, TpOverlapIsTriedWhereATensorGroupSplitsTheLayer) {
  SearchSpace space;
  space.gpus = 512;
  space.gbs = 2048;
  const std::vector<Layout> both = EnumerateLayouts(Gpt3(), space);
  space.tp_overlap = false;
  const std::vector<Layout> without = EnumerateLayouts(Gpt3(), space);
  size_t split = 0, overlapped = 0;
  for (const Layout& l : both) {
    split += l.tp > 1 ? 1 : 0;
    overlapped += l.tp_overlap ? 1 : 0;
    if (l.tp_overlap) {
      EXPECT_TRUE(l.tp > 1 && l.sequence_parallel) << LayoutText(l);
    }
  }
  EXPECT_GT(overlapped, 0u);
  EXPECT_EQ(2 * overlapped, split);  // Each layout with tp > 1, once with and once without.
  EXPECT_EQ(without.size(), both.size() - overlapped);
  for (const Layout& l : without) {
    EXPECT_FALSE(l.tp_overlap) << LayoutText(l);
  }
}

TEST(SearchTest, RanksTheFittingAndListsTheRestWithTheirShortfall) {
  SearchSpace space;
  space.gpus = 64;
  space.gbs = 512;
  const PlanSetup setup = H100Fp8();
  const SearchResult r = Search(Gpt3(), space, SharedCosts(setup), setup);
  ASSERT_GT(r.ranked.size(), 0u);
  EXPECT_EQ(r.failed, 0u) << r.first_failure.message();
  ASSERT_GT(r.fitting, 0u);
  ASSERT_LT(r.fitting, r.ranked.size());  // 175B on 64 GPUs: many layouts do not fit.
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    EXPECT_EQ(r.ranked[i].memory.fits, i < r.fitting);
    if (i > 0 && i < r.fitting) {
      EXPECT_LE(r.ranked[i - 1].step_ns, r.ranked[i].step_ns);
    }
    if (i >= r.fitting) {
      EXPECT_GT(r.ranked[i].memory.shortfall_bytes, 0);
    }
  }
}

TEST(SearchCommandTest, AnswersAndRefusesAsTheContractSays) {
  const std::string lm = LumosModelBinary();
  const auto ok = RunCommand(lm + " search --model " + kGpt3 +
                             " --gpus 512,1024 --gpu H100-SXM5-80GB --gbs 2048 --top 3 --json "
                             "--check 0");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(ok.out).get(doc), simdjson::SUCCESS) << ok.out;
  EXPECT_EQ(simdjson::dom::array(doc["searches"]).size(), 2u);
  for (simdjson::dom::element search : simdjson::dom::array(doc["searches"])) {
    for (simdjson::dom::element e : simdjson::dom::array(search["ranked"])) {
      EXPECT_TRUE(e["tp_overlap"].is_bool());
    }
  }
  // --no-tp-overlap: the tp_overlap column is 0 in every row.
  const auto plain = RunCommand(lm + " search --model " + kGpt3 +
                                " --gpus 512 --gpu H100-SXM5-80GB --gbs 2048 --top 1000 --csv "
                                "--simulate 0 --no-tp-overlap");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(plain.out.find("gpus,rank,tp,pp,vp,dp,mbs,gbs,sequence_parallel,recompute,zero,"
                           "tp_overlap,"),
            0u)
      << plain.out;
  size_t plain_rows = 0;
  std::istringstream lines(plain.out);
  std::string row;
  std::getline(lines, row);  // The header.
  while (std::getline(lines, row)) {
    std::vector<std::string> cells;
    std::istringstream fields(row);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    ASSERT_GT(cells.size(), 11u) << row;
    EXPECT_EQ(cells[11], "0") << row;
    ++plain_rows;
  }
  EXPECT_GT(plain_rows, 10u);
  const auto text =
      RunCommand(lm + " search --model " + kGpt3 +
                 " --gpus 512,1024 --gpu H100-SXM5-80GB --gbs 2048 --top 2 --check 0");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("fastest layout per GPU count"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("no cost model: rooflines"), std::string::npos);
  // The rest checked against the fastest simulated step (the default): settled, or said not to be.
  const auto checked = RunCommand(lm + " search --model " + kGpt3 +
                                  " --gpus 64 --gpu H100-SXM5-80GB --gbs 16 --top 1");
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_NE(checked.out.find("the first is the slow path's fastest of all"), std::string::npos)
      << checked.out;
  // Context parallelism tried where asked: its degrees in the JSON, each layout on the same GPUs.
  const auto cps = RunCommand(lm + " search --model " + kGpt3 +
                              " --gpus 64 --gpu H100-SXM5-80GB --gbs 16 --top 100000 --json "
                              "--simulate 0 --cp 1,2");
  ASSERT_EQ(cps.exit_code, 0) << cps.err;
  EXPECT_NE(cps.out.find("\"cp\": 2,"), std::string::npos);
  EXPECT_NE(cps.out.find("\"cp\": 1,"), std::string::npos);
  const auto unsettled = RunCommand(lm + " search --model " + kGpt3 +
                                    " --gpus 64 --gpu H100-SXM5-80GB --gbs 16 --top 1 --check 1");
  ASSERT_EQ(unsettled.exit_code, 0) << unsettled.err;
  EXPECT_NE(unsettled.out.find("might still beat the first"), std::string::npos) << unsettled.out;
  // Nothing fits: every layout listed with its shortfall, none dropped.
  const auto none = RunCommand(lm + " search --model " + kGpt3 +
                               " --gpus 8 --gpu H100-SXM5-80GB --gbs 8 --csv --top 1000");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  size_t rows = 0, fitting = 0;
  std::istringstream csv(none.out);
  std::vector<std::string> header;
  std::string line;
  std::getline(csv, line);
  std::istringstream names(line);
  for (std::string name; std::getline(names, name, ',');) header.push_back(name);
  const auto fits_column =
      static_cast<size_t>(std::find(header.begin(), header.end(), "fits") - header.begin());
  ASSERT_LT(fits_column, header.size()) << line;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    ASSERT_GT(cells.size(), fits_column) << line;
    ++rows;
    fitting += cells[fits_column] == "1" ? 1 : 0;
  }
  EXPECT_GT(rows, 0u);
  EXPECT_EQ(fitting, 0u);
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {" search --model gpt:layers=2 --gpus 8 --gpu H100-SXM5-80GB", "hidden= is required"},
           {" search --model " + std::string(kGpt3) + " --gpus 0 --gpu H100-SXM5-80GB",
            "--gpus: '0'"},
           {" search --model " + std::string(kGpt3) + " --gpus 8 --gpu Z80", "'Z80': not in"},
           {" search --model " + std::string(kGpt3) +
                " --gpus 16 --gpu H100-SXM5-80GB --gpus-per-node 16",
            "more than H100-SXM5-80GB's NVLink domain holds (8)"},
           {" estimate --model " + std::string(kGpt3) + " --set tp=5 --gpu H100-SXM5-80GB",
            "tp (5) must divide heads (96)"},
           {" estimate --model " + std::string(kGpt3) + " --set pp=200 --gpu H100-SXM5-80GB",
            "pp (200) larger than layers (96)"},
           {" search --model " + std::string(kGpt3) + " --gpus 64 --gpu H100-SXM5-80GB --set tp=2",
            "--set: tp is not fixed in a search"},
           {" search --model " + std::string(kGpt3) +
                " --gpus 64 --gpu H100-SXM5-80GB --cp 2 --set cp=2",
            "cp in --cp or in --set, not both"},
           {" search --model " + std::string(kGpt3) + " --gpus 64 --gpu H100-SXM5-80GB --cp 0",
            "--cp: '0' must be a whole number"},
           {" search --model " + std::string(kGpt3) +
                " --gpus 64 --gpu H100-SXM5-80GB --set grad_sync_bytes=3",
            "grad_sync_bytes is 2 (bf16) or 4 (fp32)"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8 --gpu H100-SXM5-80GB --overlap-slowdown -1",
            "--overlap-slowdown"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8 --gpu H100-SXM5-80GB --host-step-ms -5",
            "--host-step-ms"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8,fp8_current_scaling=1 --gpu H100-SXM5-80GB",
            "fp8_param_gather=1 and tp_only_amax_red=1 need --dtype fp8"},
           {" search --model " + std::string(kGpt3) +
                " --gpus 64 --gpu H100-SXM5-80GB --set fp8_current_scaling=1",
            "tp_only_amax_red=1 need --dtype fp8"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8,tp_only_amax_red=1 --gpu H100-SXM5-80GB",
            "tp_only_amax_red=1 need --dtype fp8"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8,tp_only_amax_red=1,fp8_current_scaling=1 --gpu H100-SXM5-80GB"
                " --dtype fp8",
            "tp_only_amax_red=1 is for delayed scaling"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8,fp8_current_scaling=2 --gpu H100-SXM5-80GB --dtype fp8",
            "fp8_current_scaling is 0 or 1"},
           // No layout of the GPUs asked for can exist: the rule the plainest one breaks.
           {" search --model " + std::string(kGpt3) +
                " --gpus 1024 --gpu H100-SXM5-80GB --gbs 1537",
            "no layout of 1024 GPUs can exist: dp x mbs (1024 x 1) must divide gbs (1537)"},
           {" search --model " + std::string(kGpt3) + " --gpus 6 --gpu H100-SXM5-80GB --set cp=4",
            "no layout of 6 GPUs can exist: no cp asked for (4) divides them"},
           {" search --model " + std::string(kGpt3) +
                " --gpus 6,10 --gpu H100-SXM5-80GB --set cp=4",
            "no layout of 6 GPUs can exist: no cp asked for (4) divides them; no layout of 10 "
            "GPUs"}}) {
    const auto r = RunCommand(lm + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // Of several GPU counts, one with no layout says why in its place; the others answer.
  const auto mixed = RunCommand(lm + " search --model " + kGpt3 +
                                " --gpus 1024,1537 --gpu H100-SXM5-80GB --gbs 1537 --top 1 --json "
                                "--simulate 0");
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  ASSERT_EQ(parser.parse(mixed.out).get(doc), simdjson::SUCCESS) << mixed.out;
  simdjson::dom::array searches = doc["searches"];
  ASSERT_EQ(searches.size(), 2u);
  EXPECT_NE(std::string(std::string_view(searches.at(0)["no_layout"])).find("must divide gbs"),
            std::string::npos);
  EXPECT_TRUE(searches.at(1)["no_layout"].is_null());
  EXPECT_GT(int64_t(searches.at(1)["layouts"]), 0);
  // A fixed setting reaches every layout: bf16 gradients, a cheaper reduction.
  auto first_step = [&](const std::string& extra) {
    const auto r = RunCommand(lm + " search --model " + kGpt3 +
                              " --gpus 1024 --gpu H100-SXM5-80GB --gbs 1024 --simulate 0 --top 1 "
                              "--json" +
                              extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const size_t at = r.out.find("\"step_s\": ");
    return at == std::string::npos ? 0.0 : std::stod(r.out.substr(at + 10));
  };
  const double fp32 = first_step(""), bf16 = first_step(" --set grad_sync_bytes=2");
  EXPECT_GT(bf16, 0);
  EXPECT_LT(bf16, fp32);
  const auto one =
      RunCommand(lm + " estimate --model " + kGpt3 +
                 " --set tp=8,pp=8,dp=8,mbs=1,gbs=512,sequence_parallel=1 --gpu H100-SXM5-80GB");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("memory per GPU"), std::string::npos) << one.out;
  // 96 layers on 8 stages, 64 micro-batches: 1F1B's stage 0 holds 8, the last stage 1.
  EXPECT_NE(one.out.find("by stage: stage 0 "), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("(12 layers, activations of 8 micro-batches), stage 7 "),
            std::string::npos)
      << one.out;
  EXPECT_NE(one.out.find("assumptions:"), std::string::npos);
  // Interleaved: stage 0 holds pp·vp + pp - 1 = 23 chunks, in the JSON beside its bytes.
  const auto interleaved = RunCommand(
      lm + " estimate --model " + kGpt3 +
      " --set tp=8,pp=8,vp=2,dp=8,mbs=1,gbs=512,sequence_parallel=1 --gpu H100-SXM5-80GB --fast "
      "--json");
  ASSERT_EQ(interleaved.exit_code, 0) << interleaved.err;
  EXPECT_TRUE(std::regex_search(
      interleaved.out,
      std::regex(R"("memory_stages": \[\{"stage": 0, "gb": [0-9.]+, "layers": 12, )"
                 R"("chunks_in_flight": 23, "activation_gb": [0-9.]+\}, \{"stage": 7)")))
      << interleaved.out;
  // What the simulation overlapped, said beside the step it gave.
  EXPECT_NE(one.out.find("of them beside compute; sends"), std::string::npos) << one.out;
  // The host time a step: the calibrated default, said; --host-step-ms moves both paths by it.
  char host_said[48];
  std::snprintf(host_said, sizeof(host_said), "host %.3f s (--host-step-ms)", kHostStepNs / 1e9);
  EXPECT_NE(one.out.find(host_said), std::string::npos) << one.out;
  auto steps = [&](const std::string& extra) {
    const auto r = RunCommand(lm + " estimate --model " + kGpt3 +
                              " --set tp=8,pp=8,dp=8,mbs=1,gbs=64,sequence_parallel=1 --gpu "
                              "H100-SXM5-80GB --json" +
                              extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.out, m,
                                  std::regex(R"("step_s": ([0-9.]+).*"host_step_s": ([0-9.]+).*)"
                                             R"("simulated_step_s": ([0-9.]+))")))
        << r.out;
    return m.size() == 4 ? std::array<double, 3>{std::stod(m[1]), std::stod(m[2]), std::stod(m[3])}
                         : std::array<double, 3>{};
  };
  const std::array<double, 3> calibrated = steps(""), no_host = steps(" --host-step-ms 0");
  EXPECT_NEAR(calibrated[1], kHostStepNs / 1e9, 1e-6);
  EXPECT_EQ(no_host[1], 0);
  EXPECT_NEAR(calibrated[0] - no_host[0], kHostStepNs / 1e9, 2e-6);
  EXPECT_NEAR(calibrated[2] - no_host[2], kHostStepNs / 1e9, 2e-6);
  const auto too_big = RunCommand(lm + " estimate --model " + kGpt3 +
                                  " --set tp=1,pp=1,dp=8,mbs=1,gbs=8 --gpu H100-SXM5-80GB --fast");
  ASSERT_EQ(too_big.exit_code, 0) << too_big.err;
  EXPECT_TRUE(
      std::regex_search(too_big.out, std::regex(R"(: does not fit, short [0-9]+\.[0-9] GB\n)")))
      << too_big.out;
}

}  // namespace
}  // namespace lumos::modeler::plan
