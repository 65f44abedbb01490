// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp quantize` end to end: it writes <model>/mineru-q8.bin, which `--weights int8`
// then finds and maps; a damaged file stops the load with exit 1 naming it.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/json.h"
#include "cli_test_util.h"

namespace mineru::apps {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::FailedWith;
using testing::kModel;
using testing::ReadFile;
using testing::RunCli;
using testing::Succeeded;
using testing::TestDir;
using testing::UsageError;
using testing::WriteFile;

std::vector<std::string> TinyBench(const std::string& model, std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "bench", "--model",         model, "--skip-vision", "--skip-engine", "--prefill",
      "8",     "--decode-tokens", "2",   "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(QuantizeCliTest, WritesTheFileThatInt8LoadsMap) {
  const std::string dir = TestDir() + "/model";
  std::filesystem::copy(kModel, dir);
  const CliResult q = RunCli({"--threads", "2", "quantize", "--model", dir});
  ASSERT_TRUE(Succeeded(q)) << Describe(q);
  EXPECT_NE(q.out.find("int8 matrices"), std::string::npos) << Describe(q);
  const std::string file = dir + "/mineru-q8.bin";
  ASSERT_TRUE(std::filesystem::exists(file));

  const CliResult r = RunCli(TinyBench(dir, {"--weights", "int8", "--precision", "fp32"}));
  ASSERT_TRUE(Succeeded(r)) << Describe(r);
  const size_t json_start = r.out.find("\n{");
  ASSERT_NE(json_start, std::string::npos) << Describe(r);
  const Json report = Json::parse(r.out.substr(json_start), nullptr, false);
  ASSERT_TRUE(report.is_object()) << Describe(r);
  EXPECT_EQ(report["weights"], "int8");
  EXPECT_EQ(report["precision"], "fp32");
  EXPECT_EQ(report["quantized_file"], file);

  // A damaged file is refused, not silently replaced.
  std::string bytes = ReadFile(file);
  bytes[0] = 'x';
  WriteFile(file, bytes);
  const CliResult bad = RunCli(TinyBench(dir, {"--weights", "int8"}));
  EXPECT_TRUE(FailedWith(bad, {"mineru-q8.bin", "MINERUQ8"})) << Describe(bad);
  // An explicit file that does not exist is an error too.
  const CliResult missing =
      RunCli(TinyBench(dir, {"--weights", "int8", "--quantized", dir + "/none.bin"}));
  EXPECT_TRUE(FailedWith(missing, {"none.bin"})) << Describe(missing);
  // A bad format or precision name is a usage error.
  EXPECT_TRUE(UsageError(RunCli(TinyBench(dir, {"--weights", "int4"})), {"--weights"}));
  EXPECT_TRUE(UsageError(RunCli(TinyBench(dir, {"--precision", "fp16"})), {"--precision"}));
}

}  // namespace
}  // namespace mineru::apps
