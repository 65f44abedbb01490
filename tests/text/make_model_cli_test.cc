// SPDX-License-Identifier: Apache-2.0
// mineru-cpp make-model writes a complete model directory: its tokenizer files, built from the
// Qwen2 vocabulary, load in tokenize and agree with the config; and the tokenizer choice is
// explicit (--tokenizer-source FILE or --no-tokenizer).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../apps/cli_test_util.h"
#include "text_test_util.h"

namespace mineru::text {
namespace {

namespace fs = std::filesystem;
using apps::testing::CliResult;
using apps::testing::FailedWith;
using apps::testing::ReadFile;
using apps::testing::RunCli;
using apps::testing::Succeeded;
using apps::testing::TestDir;
using apps::testing::UsageError;
using apps::testing::WriteFile;
using testing::kQwenTokenizerPath;

TEST(MakeModelCliTest, WritesTokenizerFilesThatTokenizeUses) {
  ASSERT_NE(testing::Qwen(), nullptr);
  const std::string dir = TestDir();
  const std::string model = dir + "/model";
  ASSERT_TRUE(Succeeded(RunCli({"make-model", "--config", "tiny", "--seed", "1", "-o", model,
                                "--tokenizer-source", kQwenTokenizerPath})));
  EXPECT_TRUE(fs::exists(model + "/tokenizer.json"));
  EXPECT_TRUE(fs::exists(model + "/tokenizer_config.json"));
  EXPECT_TRUE(Succeeded(RunCli({"inspect", model})));
  WriteFile(dir + "/in.jsonl", "\"\\nText Recognition:\"\n\"<|box_start|>1<|box_end|><nl>\"\n");
  CliResult r = RunCli({"tokenize", "--model", model, "--input", dir + "/in.jsonl"});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(r.out, "[198,1178,47598,25]\n[151648,16,151649,151671]\n");
  WriteFile(dir + "/ids.jsonl", "[151657,1318,151658,151659]\n");
  r = RunCli({"tokenize", "--model", model, "--decode", "--input", dir + "/ids.jsonl"});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(r.out, "\"<|ref_start|>text<|ref_end|><|rotate_up|>\"\n");
}

TEST(MakeModelCliTest, TokenizerChoiceIsExplicit) {
  const std::string dir = TestDir();
  EXPECT_TRUE(UsageError(RunCli({"make-model", "--config", "tiny", "-o", dir + "/a"}),
                         {"--tokenizer-source", "--no-tokenizer", "fetch.sh"}));
  EXPECT_FALSE(fs::exists(dir + "/a"));
  EXPECT_TRUE(UsageError(RunCli({"make-model", "--config", "tiny", "-o", dir + "/b",
                                 "--no-tokenizer", "--tokenizer-source", kQwenTokenizerPath})));
  ASSERT_TRUE(
      Succeeded(RunCli({"make-model", "--config", "tiny", "-o", dir + "/c", "--no-tokenizer"})));
  EXPECT_TRUE(fs::exists(dir + "/c/model.safetensors"));
  EXPECT_FALSE(fs::exists(dir + "/c/tokenizer.json"));
}

TEST(MakeModelCliTest, BadTokenizerSources) {
  ASSERT_NE(testing::Qwen(), nullptr);
  const std::string dir = TestDir();
  const std::string missing = dir + "/missing.json";
  EXPECT_TRUE(FailedWith(
      RunCli({"make-model", "--config", "tiny", "-o", dir + "/a", "--tokenizer-source", missing}),
      {missing}));
  // The size limit on the source, at its boundary.
  const std::string size = std::to_string(fs::file_size(kQwenTokenizerPath));
  const std::string less = std::to_string(fs::file_size(kQwenTokenizerPath) - 1);
  EXPECT_TRUE(
      FailedWith(RunCli({"make-model", "--config", "tiny", "-o", dir + "/limit",
                         "--tokenizer-source", kQwenTokenizerPath, "--max-tokenizer-bytes", less}),
                 {kQwenTokenizerPath, "limit of " + less}));
  EXPECT_TRUE(
      Succeeded(RunCli({"make-model", "--config", "tiny", "-o", dir + "/limit",
                        "--tokenizer-source", kQwenTokenizerPath, "--max-tokenizer-bytes", size})));
  // Not the Qwen2 vocabulary: its special tokens would not get the config's ids.
  EXPECT_TRUE(FailedWith(RunCli({"make-model", "--config", "tiny", "-o", dir + "/b",
                                 "--tokenizer-source", testing::kFixturePath}),
                         {testing::kFixturePath, "image_token_id"}));
  EXPECT_FALSE(fs::exists(dir + "/b/model.safetensors"));
  // A config whose embedding has no row for MinerU's last token.
  Json config =
      *ReadJsonFile(std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny/model/config.json", 1 << 20);
  config["vocab_size"] = 151660;
  WriteFile(dir + "/small_vocab.json", config.dump());
  EXPECT_TRUE(FailedWith(RunCli({"make-model", "--config", dir + "/small_vocab.json", "-o",
                                 dir + "/c", "--tokenizer-source", kQwenTokenizerPath}),
                         {"vocab_size", "151660"}));
}

}  // namespace
}  // namespace mineru::text
