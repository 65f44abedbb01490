// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp bench` end to end on the golden tiny checkpoint: the engine figures and the engine
// flags (range errors are usage errors, exit 2; values the engine refuses exit 1 with the
// option named).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/json.h"
#include "cli_test_util.h"

namespace mineru::apps {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::FailedWith;
using testing::kModel;
using testing::RunCli;
using testing::Succeeded;
using testing::UsageError;

std::vector<std::string> SmallBench(std::vector<std::string> extra) {
  std::vector<std::string> args = {"bench",
                                   "--model",
                                   kModel,
                                   "--skip-vision",
                                   "--prefill",
                                   "8",
                                   "--decode-tokens",
                                   "2",
                                   "--concurrency",
                                   "1,3",
                                   "--engine-prompt",
                                   "5",
                                   "--engine-tokens",
                                   "3",
                                   "--page-crops",
                                   "2",
                                   "--page-layout-tokens",
                                   "3",
                                   "--page-crop-tokens",
                                   "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(BenchCliTest, EngineFiguresOnTheGoldenModel) {
  const CliResult r = RunCli(SmallBench({"--json"}));
  ASSERT_TRUE(Succeeded(r));
  EXPECT_NE(r.out.find("engine decode,   1 concurrent"), std::string::npos) << Describe(r);
  EXPECT_NE(r.out.find("engine decode,   3 concurrent"), std::string::npos) << Describe(r);
  EXPECT_NE(r.out.find("engine page"), std::string::npos) << Describe(r);
  const size_t json_start = r.out.find("\n{");
  ASSERT_NE(json_start, std::string::npos) << Describe(r);
  Json report = Json::parse(r.out.substr(json_start), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(report.is_object()) << Describe(r);
  ASSERT_EQ(report["engine_decode"].size(), 2u);
  EXPECT_EQ(report["engine_decode"][1]["concurrent"], 3);
  EXPECT_GT(report["engine_page"]["seconds"].get<double>(), 0);
  // The three compute ceilings (0 where the CPU lacks the instruction), and the prefill figure
  // names the one it is a fraction of.
  EXPECT_GT(report["fma_peak_gflops"].get<double>(), 0);
  EXPECT_GE(report["bf16_dot_peak_gflops"].get<double>(), 0);
  EXPECT_GE(report["int8_dot_peak_gops"].get<double>(), 0);
  // auto precision: bf16 products (against the bf16-dot peak) where the CPU has AVX-512 BF16.
  EXPECT_EQ(report["weights"], "bf16");
  EXPECT_EQ(report["prefill"]["peak"],
            report["precision"] == "bf16" ? "bf16_dot_peak_gflops" : "fma_peak_gflops");
  EXPECT_GT(report["prefill"]["fraction_of_peak"].get<double>(), 0);
  EXPECT_GT(report["engine_page"]["peak_rss_bytes"].get<double>(), 0);
  EXPECT_GT(report["engine_page"]["weights_bytes"].get<double>(), 0);
}

// Each precision and weight format runs, and names its own peak; decode counts the KV cache's
// bytes as its precision stores them (bf16 pairs take half the float32 cache's bytes, less for
// the padding of the tiny model's head width).
TEST(BenchCliTest, EveryModeNamesItsPeak) {
  std::map<std::string, double> kv_bytes;
  for (const auto& [precision, weights, peak] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"fp32", "bf16", "fma_peak_gflops"},
           {"bf16", "bf16", "bf16_dot_peak_gflops"},
           {"fp32", "int8", "int8_dot_peak_gops"}}) {
    const CliResult r =
        RunCli({"bench", "--model", kModel, "--skip-vision", "--skip-engine", "--prefill", "8",
                "--decode-tokens", "2", "--json", "--precision", precision, "--weights", weights});
    ASSERT_TRUE(Succeeded(r)) << Describe(r);
    const size_t json_start = r.out.find("\n{");
    ASSERT_NE(json_start, std::string::npos) << Describe(r);
    const Json report = Json::parse(r.out.substr(json_start), nullptr, false);
    EXPECT_EQ(report["precision"], precision);
    EXPECT_EQ(report["weights"], weights);
    EXPECT_EQ(report["prefill"]["peak"], peak) << Describe(r);
    kv_bytes[precision] = report["decode"]["kv_bytes_per_token"].get<double>();
  }
  EXPECT_GT(kv_bytes["bf16"], 0);
  EXPECT_LT(kv_bytes["bf16"], kv_bytes["fp32"]);
}

TEST(BenchCliTest, EngineFlagsAreChecked) {
  EXPECT_TRUE(UsageError(RunCli(SmallBench({"--kv-block-tokens", "8"}))));
  EXPECT_TRUE(UsageError(RunCli(SmallBench({"--max-running", "0"}))));
  EXPECT_TRUE(UsageError(RunCli(SmallBench({"--concurrency", "0"}))));
  EXPECT_TRUE(FailedWith(RunCli(SmallBench({"--kv-block-tokens", "24"})), {"kv_block_tokens"}));
  EXPECT_TRUE(FailedWith(RunCli(SmallBench({"--kv-cache-bytes", "100"})), {"holds no block"}));
  // A 16-block cache still serves the three requests: they wait for blocks when needed.
  EXPECT_TRUE(Succeeded(
      RunCli(SmallBench({"--no-page", "--kv-cache-bytes", "131072", "--kv-block-tokens", "16"}))));
}

}  // namespace
}  // namespace mineru::apps
