// SPDX-License-Identifier: Apache-2.0
// mineru-cpp preprocess end to end: every golden PNG through the binary gives transformers'
// pixel_values and image_grid_thw bit for bit; bad inputs exit 1 with one clear line; a bad
// command line exits 2; the decoding limits' flags act at their boundary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "../apps/cli_test_util.h"
#include "image_test_util.h"

namespace mineru::image {
namespace {

using apps::testing::FailedWith;
using apps::testing::RunCli;
using apps::testing::Succeeded;
using apps::testing::TestDir;
using apps::testing::UsageError;

TEST(CliPreprocessTest, GoldenImagesBitExact) {
  for (const char* name : {"doc_400x300", "odd_333x517", "tiny_50x40"}) {
    SCOPED_TRACE(name);
    const std::string out = TestDir() + "/" + name;
    const std::string base = testing::kGoldenImages + "/" + name;
    const auto r =
        RunCli({"preprocess", base + ".png", "--model", testing::kModelDir, "--dump", out});
    ASSERT_TRUE(Succeeded(r));
    EXPECT_NE(r.out.find("grid (t, h, w)"), std::string::npos) << r.out;
    const NpyArray got = apps::testing::ReadArray(out + "/pixel_values.npy");
    const NpyArray want = apps::testing::ReadArray(base + ".pixel_values.npy");
    EXPECT_EQ(got.dtype, DType::kF32);
    EXPECT_EQ(got.shape, want.shape);
    EXPECT_TRUE(got.bytes == want.bytes) << "pixel_values differ";
    EXPECT_EQ(apps::testing::I64(out + "/grid_thw.npy"),
              apps::testing::I64(base + ".image_grid_thw.npy"));
    EXPECT_EQ(apps::testing::ReadArray(out + "/grid_thw.npy").shape, (std::vector<int64_t>{1, 3}));
  }
}

TEST(CliPreprocessTest, LayoutFlagGivesTheMineruThumbnail) {
  const std::string out = TestDir();
  const auto r = RunCli({"preprocess", testing::kData + "/images/pages/unittest_p1_200dpi.png",
                         "--model", testing::kModelDir, "--dump", out, "--layout"});
  ASSERT_TRUE(Succeeded(r));
  // 1036 x 1036 is above this checkpoint's max_pixels (1003520): smart_resize takes it to
  // 980 x 980, a 70 x 70 grid.
  EXPECT_EQ(apps::testing::I64(out + "/grid_thw.npy"), (std::vector<int64_t>{1, 70, 70}));
}

TEST(CliPreprocessTest, BadInputsExitOneWithAClearMessage) {
  const std::string dir = TestDir();
  const std::string golden = testing::kGoldenImages + "/doc_400x300.png";
  apps::testing::WriteFile(dir + "/not_an_image.png", "%PDF-1.7 hello");
  std::string png = apps::testing::ReadFile(golden);
  apps::testing::WriteFile(dir + "/cut.png", png.substr(0, png.size() / 2));
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {{dir + "/missing.png"}, {"missing.png", "not found"}},
      {{dir + "/not_an_image.png"}, {"not_an_image.png", "unknown magic bytes"}},
      {{dir + "/cut.png"}, {"cut.png", "png:", "truncated"}},
      {{golden, "--max-image-width", "399"}, {"doc_400x300.png", "width is over the limit of 399"}},
      {{golden, "--max-image-height", "299"}, {"height is over the limit of 299"}},
      {{golden, "--max-image-pixels", "119999"}, {"pixels is over the limit of 119999"}},
      {{golden, "--max-image-bytes", "100"}, {"over the limit of 100 bytes"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"preprocess"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.insert(args.end(), {"--model", testing::kModelDir, "--dump", dir + "/out"});
    EXPECT_TRUE(FailedWith(RunCli(args), c.needles));
  }
  // The same limits one step looser pass.
  for (const char* flag :
       {"--max-image-width=400", "--max-image-height=300", "--max-image-pixels=120000"}) {
    EXPECT_TRUE(Succeeded(
        RunCli({"preprocess", golden, flag, "--model", testing::kModelDir, "--dump", dir + "/ok"})))
        << flag;
  }
  // The metadata limit, on a PNG whose largest ancillary chunk is an XMP packet.
  const std::string xmp_png = testing::ReferenceDir() + "/decode/png_xmp8";
  const std::string bytes = apps::testing::ReadFile(xmp_png);
  uint32_t largest = 0;
  for (size_t pos = 8; pos + 8 <= bytes.size();) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + pos);
    const uint32_t length = uint32_t{p[0]} << 24 | p[1] << 16 | p[2] << 8 | p[3];
    if (p[4] & 0x20) largest = std::max(largest, length);
    pos += length + 12;
  }
  ASSERT_GT(largest, 50u);
  // (--layout: the 11 x 7 image is below smart_resize's minimum side.)
  EXPECT_TRUE(Succeeded(
      RunCli({"preprocess", xmp_png, "--layout", "--max-image-metadata-bytes",
              std::to_string(largest), "--model", testing::kModelDir, "--dump", dir + "/xmp"})));
  EXPECT_TRUE(FailedWith(
      RunCli({"preprocess", xmp_png, "--layout", "--max-image-metadata-bytes",
              std::to_string(largest - 1), "--model", testing::kModelDir, "--dump", dir + "/xmp"}),
      {"iTXt chunk", "metadata limit of " + std::to_string(largest - 1)}));
  // --max-json-bytes at the size of preprocessor_config.json, and one byte under it.
  const auto json_size =
      apps::testing::ReadFile(testing::kModelDir + "/preprocessor_config.json").size();
  EXPECT_TRUE(Succeeded(RunCli({"preprocess", golden, "--max-json-bytes", std::to_string(json_size),
                                "--model", testing::kModelDir, "--dump", dir + "/ok"})));
  EXPECT_TRUE(
      FailedWith(RunCli({"preprocess", golden, "--max-json-bytes", std::to_string(json_size - 1),
                         "--model", testing::kModelDir, "--dump", dir + "/out"}),
                 {"preprocessor_config.json"}));
  // A model directory without preprocessor_config.json.
  EXPECT_TRUE(FailedWith(RunCli({"preprocess", golden, "--model", dir, "--dump", dir + "/out"}),
                         {"preprocessor_config.json"}));
}

TEST(CliPreprocessTest, BadCommandLinesExitTwo) {
  const std::string golden = testing::kGoldenImages + "/doc_400x300.png";
  const std::string out = TestDir() + "/out";
  EXPECT_TRUE(UsageError(RunCli({"preprocess", golden, "--dump", out}), {"--model"}));
  EXPECT_TRUE(UsageError(RunCli({"preprocess", "--model", testing::kModelDir, "--dump", out})));
  EXPECT_TRUE(UsageError(RunCli({"preprocess", golden, "--model", testing::kModelDir, "--dump", out,
                                 "--max-image-width", "0"})));
  EXPECT_TRUE(UsageError(RunCli({"preprocess", golden, "--model", testing::kModelDir, "--dump", out,
                                 "--max-jpeg-scans", "-3"})));
}

}  // namespace
}  // namespace mineru::image
