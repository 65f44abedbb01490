// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp quantize` and `mineru-cpp pack` end to end: they write <model>/mineru-q8.bin and
// <model>/mineru-packed.bin, which `--weights int8` and `--precision fp32` then find and map; a
// damaged file, or one of the other kind, stops the load with exit 1 naming it.
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

// debug-forward on the golden single_doc inputs, dumping every prompt logit and every traced
// vision block and decoder layer.
std::vector<std::string> DebugForward(const std::string& model, const std::string& dump,
                                      std::vector<std::string> extra) {
  const std::string golden = testing::kGolden + "/single_doc";
  std::vector<std::string> args = {"--threads", "2", "debug-forward", "--precision", "fp32"};
  for (const std::string& arg :
       {std::string("--model"), model, std::string("--pixel-values"),
        testing::kGolden + "/images/doc_400x300.pixel_values.npy", std::string("--grid-thw"),
        golden + "/image_grid_thw.npy", std::string("--input-ids"), golden + "/input_ids.npy",
        std::string("--steps"), std::string("4"), std::string("--all-logits"),
        std::string("--trace"), std::string("--dump"), dump}) {
    args.push_back(arg);
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(PackCliTest, WritesTheFileThatFp32LoadsMapWithTheSameOutputs) {
  const std::string root = TestDir();  // fresh on every call: taken once
  const std::string dir = root + "/model";
  std::filesystem::copy(kModel, dir);
  const CliResult p = RunCli({"--threads", "2", "pack", "--model", dir});
  ASSERT_TRUE(Succeeded(p)) << Describe(p);
  EXPECT_NE(p.out.find("BF16 panel matrices"), std::string::npos) << Describe(p);
  const std::string file = dir + "/mineru-packed.bin";
  ASSERT_TRUE(std::filesystem::exists(file));

  const CliResult r = RunCli(TinyBench(dir, {"--precision", "fp32"}));
  ASSERT_TRUE(Succeeded(r)) << Describe(r);
  const size_t json_start = r.out.find("\n{");
  ASSERT_NE(json_start, std::string::npos) << Describe(r);
  const Json report = Json::parse(r.out.substr(json_start), nullptr, false);
  ASSERT_TRUE(report.is_object()) << Describe(r);
  EXPECT_EQ(report["precision"], "fp32");
  EXPECT_EQ(report["packed_file"], file);
  EXPECT_EQ(report["quantized_file"], "");

  // The same bits with the file (found next to the checkpoint, or named by --packed) as packing
  // at load (the original checkpoint folder has no file).
  const std::string with = root + "/with", named = root + "/named", without = root + "/without";
  const CliResult a = RunCli(DebugForward(dir, with, {}));
  const CliResult b = RunCli(DebugForward(kModel, without, {}));
  const CliResult c = RunCli(DebugForward(kModel, named, {"--packed", file}));
  ASSERT_TRUE(Succeeded(a) && Succeeded(b) && Succeeded(c))
      << Describe(a) << Describe(b) << Describe(c);
  // Every file of the dump: logits at every position, vision output, each traced vision block
  // and decoder layer, generated ids.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(without)) {
    const std::string name = entry.path().filename().string();
    const std::string want = ReadFile(entry.path().string());
    ASSERT_FALSE(want.empty()) << name;
    EXPECT_EQ(ReadFile(with + "/" + name), want) << name;
    EXPECT_EQ(ReadFile(named + "/" + name), want) << name;
    ++files;
  }
  EXPECT_GE(files, 8);

  // An int8 file given as --packed is refused naming both kinds.
  ASSERT_TRUE(Succeeded(RunCli({"--threads", "2", "quantize", "--model", dir})));
  const CliResult wrong =
      RunCli(TinyBench(dir, {"--precision", "fp32", "--packed", dir + "/mineru-q8.bin"}));
  EXPECT_TRUE(FailedWith(wrong, {"mineru-q8.bin", "holds int8 weights", "not packed panels"}))
      << Describe(wrong);
  // A damaged file is refused, not silently replaced by packing at load.
  std::string bytes = ReadFile(file);
  bytes[0] = 'x';
  WriteFile(file, bytes);
  const CliResult bad = RunCli(TinyBench(dir, {"--precision", "fp32"}));
  EXPECT_TRUE(FailedWith(bad, {"mineru-packed.bin", "MINERUPK"})) << Describe(bad);
  // bf16 precision reads the checkpoint in place and never opens the file.
  EXPECT_TRUE(Succeeded(RunCli(TinyBench(dir, {"--precision", "bf16"}))));
  const CliResult missing =
      RunCli(TinyBench(dir, {"--precision", "fp32", "--packed", dir + "/none.bin"}));
  EXPECT_TRUE(FailedWith(missing, {"none.bin"})) << Describe(missing);
}

}  // namespace
}  // namespace mineru::apps
