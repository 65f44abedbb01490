// SPDX-License-Identifier: Apache-2.0
// mineru-cpp tokenize end to end on the fixture tokenizer: JSON Lines in and out, both
// directions, exit codes (0 success, 1 failed work with a message naming the file or line, 2 bad
// command line) and every limit flag at its boundary.
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
using apps::testing::Describe;
using apps::testing::FailedWith;
using apps::testing::ReadFile;
using apps::testing::RunCli;
using apps::testing::Succeeded;
using apps::testing::TestDir;
using apps::testing::UsageError;
using apps::testing::WriteFile;
using testing::kFixturePath;

// Runs tokenize on `lines` (written to a file, one per line) with the fixture tokenizer.
CliResult Tokenize(const std::string& dir, const std::string& lines,
                   std::vector<std::string> extra = {}) {
  WriteFile(dir + "/in.jsonl", lines);
  std::vector<std::string> args{"tokenize", "--tokenizer", kFixturePath, "--input",
                                dir + "/in.jsonl"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunCli(args);
}

TEST(TokenizeCliTest, EncodeAndDecode) {
  const std::string dir = TestDir();
  CliResult r = Tokenize(dir, "\"abc\"\n\"<|im_start|>hi\"\n\"e\\u0301\"\n\"\"\n");
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(r.out, "[267]\n[273,104,105]\n[269]\n[]\n");
  r = Tokenize(dir, "\"<|im_start|>\"", {"--split-special"});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(r.out.find("273"), std::string::npos) << r.out;
  r = Tokenize(dir, "[267, 32]\n[273,104,105,274]\n[195]\n[]\n", {"--decode"});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(r.out, "\"abc \"\n\"<|im_start|>hi<|im_end|>\"\n\"\xEF\xBF\xBD\"\n\"\"\n");
  r = Tokenize(dir, "[273,104,105,274]\n", {"--decode", "--skip-special"});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(r.out, "\"hi\"\n");
  // No input, no output.
  r = Tokenize(dir, "");
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(r.out, "");
}

TEST(TokenizeCliTest, ModelDirectoryAndOutputFile) {
  const std::string dir = TestDir();
  fs::create_directories(dir + "/model");
  fs::copy_file(kFixturePath, dir + "/model/tokenizer.json");
  WriteFile(dir + "/in.jsonl", "\" the thing\"\r\n");
  const CliResult r = RunCli({"tokenize", "--model", dir + "/model", "--input", dir + "/in.jsonl",
                              "--output", dir + "/out.jsonl"});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(ReadFile(dir + "/out.jsonl"), "[258,256,104,260]\n");
}

TEST(TokenizeCliTest, UsageErrors) {
  EXPECT_TRUE(UsageError(RunCli({"tokenize"}), {"--tokenizer", "--model"}));
  EXPECT_TRUE(UsageError(RunCli({"tokenize", "--tokenizer", kFixturePath, "--model", "x"})));
  EXPECT_TRUE(UsageError(RunCli({"tokenize", "--tokenizer", kFixturePath, "--frobnicate"})));
  EXPECT_TRUE(
      UsageError(RunCli({"tokenize", "--tokenizer", kFixturePath, "--max-encode-bytes", "-1"})));
  EXPECT_TRUE(
      UsageError(RunCli({"tokenize", "--tokenizer", kFixturePath, "--max-json-depth", "0"})));
}

TEST(TokenizeCliTest, FailuresNameTheFileOrLine) {
  const std::string dir = TestDir();
  const std::string missing = dir + "/missing.json";
  EXPECT_TRUE(FailedWith(RunCli({"tokenize", "--tokenizer", missing}), {missing}));
  EXPECT_TRUE(FailedWith(RunCli({"tokenize", "--model", dir}), {dir + "/tokenizer.json"}));
  WriteFile(dir + "/bad.json", "{\"model\": {\"type\": \"Unigram\"}}");
  EXPECT_TRUE(
      FailedWith(RunCli({"tokenize", "--tokenizer", dir + "/bad.json"}), {"bad.json", "Unigram"}));
  EXPECT_TRUE(FailedWith(Tokenize(dir, "\"ok\"\n42\n"), {"line 2", "JSON string"}));
  EXPECT_TRUE(FailedWith(Tokenize(dir, "\"ok\"\n\"unterminated\n"), {"line 2", "JSON"}));
  EXPECT_TRUE(FailedWith(Tokenize(dir, "\"\\ud800\"\n"), {"line 1"}));  // a lone surrogate
  EXPECT_TRUE(FailedWith(Tokenize(dir, "[1, 99999]\n", {"--decode"}), {"line 1", "99999"}));
  EXPECT_TRUE(FailedWith(Tokenize(dir, "[1, -2]\n", {"--decode"}), {"line 1", "-2"}));
  EXPECT_TRUE(FailedWith(Tokenize(dir, "\"text\"\n", {"--decode"}), {"line 1", "array"}));
  EXPECT_TRUE(
      FailedWith(RunCli({"tokenize", "--tokenizer", kFixturePath, "--input", missing}), {missing}));
  // Output already written stays written: the first line succeeded.
  const CliResult r = Tokenize(dir, "\"abc\"\n7\n");
  EXPECT_EQ(r.out, "[267]\n") << Describe(r);
}

TEST(TokenizeCliTest, EncodeLimit) {
  const std::string dir = TestDir();
  EXPECT_TRUE(Succeeded(Tokenize(dir, "\"abcde\"\n", {"--max-encode-bytes", "5"})));
  EXPECT_TRUE(FailedWith(Tokenize(dir, "\"abcdef\"\n", {"--max-encode-bytes", "5"}),
                         {"line 1", "encode limit of 5 bytes"}));
  // A line longer than any spelling of a text within the limit is refused while reading.
  EXPECT_TRUE(FailedWith(Tokenize(dir, std::string(200, 'x') + "\n", {"--max-encode-bytes", "1"}),
                         {"line 1", "longer than 70 bytes"}));
}

TEST(TokenizeCliTest, DecodeLimit) {
  const std::string dir = TestDir();
  EXPECT_TRUE(Succeeded(Tokenize(dir, "[97, 98]\n", {"--decode", "--max-decode-ids", "2"})));
  EXPECT_TRUE(FailedWith(Tokenize(dir, "[97, 98, 99]\n", {"--decode", "--max-decode-ids", "2"}),
                         {"line 1", "decode limit of 2"}));
}

TEST(TokenizeCliTest, DefaultDecodeLimitIsNotCutByTheJsonLimits) {
  // A --decode line of --max-decode-ids ids (1,048,576 by default) and its array is one value
  // more than the JSON value limit of a request body (JsonLimits::max_values): tokenize parses
  // its lines under the file preset, raised to the decode limit, so the decode limit alone
  // decides: exactly the default accepted, one more id refused naming it.
  const std::string dir = TestDir();
  const auto ids = [](size_t n) {
    std::string line = "[";
    for (size_t i = 0; i < n; ++i) line += i == 0 ? "97" : ",97";
    return line + "]\n";
  };
  CliResult r = Tokenize(dir, ids(size_t{1} << 20), {"--decode"});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(r.out, '"' + std::string(size_t{1} << 20, 'a') + "\"\n");
  EXPECT_TRUE(FailedWith(Tokenize(dir, ids((size_t{1} << 20) + 1), {"--decode"}),
                         {"line 1", "decode limit of 1048576"}));
}

TEST(TokenizeCliTest, TokenizerFileLimits) {
  const std::string dir = TestDir();
  const std::string size = std::to_string(fs::file_size(kFixturePath));
  const std::string less = std::to_string(fs::file_size(kFixturePath) - 1);
  EXPECT_TRUE(Succeeded(Tokenize(dir, "\"a\"\n", {"--max-tokenizer-bytes", size})));
  EXPECT_TRUE(FailedWith(Tokenize(dir, "\"a\"\n", {"--max-tokenizer-bytes", less}),
                         {kFixturePath, "limit"}));
  int smallest = 0;
  for (int depth = 1; depth <= 16 && smallest == 0; ++depth) {
    if (Tokenize(dir, "\"a\"\n", {"--max-json-depth", std::to_string(depth)}).exit_code == 0) {
      smallest = depth;
    }
  }
  ASSERT_GT(smallest, 1);
  EXPECT_TRUE(FailedWith(
      Tokenize(dir, "\"a\"\n", {"--max-json-depth", std::to_string(smallest - 1)}), {"nested"}));
}

}  // namespace
}  // namespace mineru::text
