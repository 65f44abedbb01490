// SPDX-License-Identifier: Apache-2.0
// `inspect`'s profile, stop-id, template and tokenizer lines on checkpoints without tokenizer
// files: the golden 2509-layout model, the same files under a MinerU2.5-Pro name, and
// `make-model --config pro-tiny --no-tokenizer`.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/json.h"
#include "cli_test_util.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::Describe;
using testing::kModel;
using testing::RunCli;
using testing::Succeeded;
using testing::TestDir;
using testing::UsageError;

bool Has(const CliResult& r, const std::string& line) {
  return r.out.find(line) != std::string::npos;
}

TEST(InspectProfileLinesTest, GoldenModelIs2509) {
  const CliResult r = RunCli({"inspect", kModel});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_TRUE(Has(r,
                  "profile:      2509: no Pro evidence in the checkpoint (text_config absent, "
                  "min_pixels 3136)\n"))
      << Describe(r);
  EXPECT_TRUE(Has(r, "stop ids:     151645, 151643\n")) << Describe(r);
  EXPECT_TRUE(Has(r, "template:     none in the checkpoint (the built-in Qwen2-VL template)\n"))
      << Describe(r);
  EXPECT_TRUE(Has(r, "tokenizer:    no tokenizer.json\n")) << Describe(r);
  const CliResult json = RunCli({"inspect", "--json", kModel});
  ASSERT_TRUE(Succeeded(json));
  const Json parsed = Json::parse(json.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(parsed.is_object()) << Describe(json);
  EXPECT_EQ(parsed["profile"]["name"], "2509");
  EXPECT_EQ(parsed["profile"]["min_pixels"], 3136);
  EXPECT_EQ(parsed["profile"]["nested_text_config"], false);
  EXPECT_TRUE(parsed["tokenizer"].is_null());
  EXPECT_TRUE(parsed["chat_template"]["source"].is_null());
  EXPECT_EQ(parsed["dtype"], "bfloat16");
}

TEST(InspectProfileLinesTest, ProNameWins) {
  const std::string link = TestDir() + "/MinerU2.5-Pro-2605-1.2B";
  fs::create_directory_symlink(kModel, link);
  const CliResult r = RunCli({"inspect", link});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_TRUE(Has(r,
                  "profile:      pro: the model name says MinerU2.5-Pro (text_config absent, "
                  "min_pixels 3136)\n"))
      << Describe(r);
  const CliResult forced = RunCli({"inspect", link, "--profile", "2509"});
  ASSERT_TRUE(Succeeded(forced));
  EXPECT_TRUE(Has(forced, "profile:      2509: forced (")) << Describe(forced);
  EXPECT_TRUE(UsageError(RunCli({"inspect", link, "--profile", "Pro"}), {"--profile"}));
}

TEST(InspectProfileLinesTest, ProTinyWithoutTokenizer) {
  const std::string dir = TestDir() + "/m";
  ASSERT_TRUE(Succeeded(
      RunCli({"make-model", "--config", "pro-tiny", "--seed", "3", "-o", dir, "--no-tokenizer"})));
  EXPECT_FALSE(fs::exists(dir + "/tokenizer.json"));
  EXPECT_FALSE(fs::exists(dir + "/chat_template.jinja"));
  const CliResult r = RunCli({"inspect", dir});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_TRUE(Has(r,
                  "profile:      pro: config.json nests text_config (text_config nested, "
                  "min_pixels 50176)\n"))
      << Describe(r);
  EXPECT_TRUE(Has(r, "parameters:   10,055,808 ")) << Describe(r);  // the tiny golden shape
  EXPECT_TRUE(Has(r, "tied (no lm_head.weight)")) << Describe(r);
}

}  // namespace
}  // namespace mineru::apps
