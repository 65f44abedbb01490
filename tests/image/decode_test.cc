// SPDX-License-Identifier: Apache-2.0
// Decoding against Pillow 9.4: every file pillow_reference.py writes (each format's modes, bit
// depths, palettes, compressions, layouts and EXIF orientations) must give Pillow's
// exif_transpose(...).convert("RGB") pixels exactly, and every file Pillow refuses must be
// refused. Also the committed page renders, by digest.
#include "image/decode.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "base/sha256.h"
#include "image_test_util.h"

namespace mineru::image {
namespace {

using testing::Reference;

TEST(DecodeTest, MatchesPillowOnEveryReferenceFile) {
  const Reference& ref = Reference::Get("decode");
  ASSERT_GT(ref.cases().size(), 100u);
  std::map<std::string, int> exact, refused;
  for (const Json& c : ref.cases()) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const std::vector<uint8_t> bytes =
        testing::ReadBytes(testing::ReferenceDir() + "/" + c["file"].get<std::string>());
    const std::string format = name.substr(0, name.find('_'));
    auto decoded = DecodeImage(bytes);
    if (c.value("error", false)) {
      EXPECT_FALSE(decoded) << "Pillow refuses this file (" << c["pillow_error"] << ")";
      if (!decoded) {
        EXPECT_NE(decoded.error().message.find(format), std::string::npos)
            << decoded.error().ToString();
        ++refused[format];
      }
      continue;
    }
    ASSERT_TRUE(decoded) << decoded.error().ToString();
    EXPECT_EQ(FormatName(decoded->format), format);
    EXPECT_EQ(decoded->source_mode, c["mode"].get<std::string>());
    RgbImage expected;
    expected.width = c["width"];
    expected.height = c["height"];
    expected.pixels = ref.Copy(c["pixels"]);
    const std::string diff = testing::FirstDifference(decoded->image, expected);
    EXPECT_EQ(diff, "");
    if (diff.empty()) ++exact[format];
    if (!c["orientation"].is_null()) {
      const int o = c["orientation"];
      EXPECT_EQ(decoded->orientation, o >= 2 && o <= 8 ? o : 1);
    }
  }
  // Every format is covered, each with several variants.
  for (const char* format : {"png", "jpeg", "webp", "tiff", "bmp", "gif"}) {
    EXPECT_GE(exact[format], 5) << format;
  }
  std::string summary;
  for (const auto& [format, n] : exact) summary += " " + format + "=" + std::to_string(n);
  std::string refusals;
  for (const auto& [format, n] : refused) refusals += " " + format + "=" + std::to_string(n);
  ::testing::Test::RecordProperty("bit_exact", summary);
  std::printf("bit-exact with Pillow:%s; refused like Pillow:%s\n", summary.c_str(),
              refusals.c_str());
}

TEST(DecodeTest, PageRendersMatchPillow) {
  const Reference& ref = Reference::Get("crops");
  ASSERT_GE(ref.cases().size(), 3u);
  for (const Json& page : ref.cases()) {
    const std::string path = testing::kData + "/" + page["file"].get<std::string>();
    SCOPED_TRACE(path);
    auto decoded = DecodeImageFile(path);
    ASSERT_TRUE(decoded) << decoded.error().ToString();
    EXPECT_EQ(decoded->image.width, page["width"].get<int64_t>());
    EXPECT_EQ(decoded->image.height, page["height"].get<int64_t>());
    Sha256 sha;
    sha.Update(decoded->image.pixels);
    EXPECT_EQ(HexString(sha.Finish()), page["sha256"].get<std::string>());
  }
}

TEST(DecodeTest, OrientationCanBeLeftAlone) {
  const auto bytes = testing::ReadBytes(testing::ReferenceDir() + "/decode/jpeg_orientation6");
  DecodeOptions options;
  options.apply_exif_orientation = false;
  auto raw = DecodeImage(bytes, options);
  auto upright = DecodeImage(bytes);
  ASSERT_TRUE(raw && upright);
  EXPECT_EQ(raw->orientation, 1);
  EXPECT_EQ(upright->orientation, 6);
  EXPECT_EQ(raw->image.width, upright->image.height);
  EXPECT_EQ(raw->image.height, upright->image.width);
}

TEST(DecodeTest, FormatIsSniffedFromBytesNotNames) {
  const auto png = testing::ReadBytes(testing::kGoldenImages + "/tiny_50x40.png");
  EXPECT_EQ(SniffFormat(png), ImageFormat::kPng);
  const std::string misnamed = ::testing::TempDir() + "/really_a_png.jpg";
  testing::WriteBytes(misnamed, png);
  auto decoded = DecodeImageFile(misnamed);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded->format, ImageFormat::kPng);
  EXPECT_EQ(decoded->image.width, 50);
  std::remove(misnamed.c_str());

  const std::vector<std::pair<std::vector<uint8_t>, ImageFormat>> magics = {
      {{0xff, 0xd8, 0xff, 0xe0}, ImageFormat::kJpeg},
      {{'G', 'I', 'F', '8', '9', 'a'}, ImageFormat::kGif},
      {{'G', 'I', 'F', '8', '7', 'a'}, ImageFormat::kGif},
      {{'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'}, ImageFormat::kWebp},
      {{'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'A', 'V', 'E'}, ImageFormat::kUnknown},
      {{'I', 'I', 42, 0}, ImageFormat::kTiff},
      {{'M', 'M', 0, 42}, ImageFormat::kTiff},
      {{'B', 'M'}, ImageFormat::kBmp},
      {{'%', 'P', 'D', 'F'}, ImageFormat::kUnknown},
      {{}, ImageFormat::kUnknown},
  };
  for (const auto& [bytes, format] : magics) EXPECT_EQ(SniffFormat(bytes), format);
  auto unknown = DecodeImage(std::vector<uint8_t>{'%', 'P', 'D', 'F', '-', '1'});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kUnsupported);
}

// Bytes that match no format are named by the type the file's name promises (before: "not a
// PNG, JPEG, WebP, TIFF, BMP or GIF file" whatever the name said).
TEST(DecodeTest, AFileMatchingNoFormatIsNamedByItsExtension) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"text.png", "text.png: not a PNG file (unknown magic bytes)"},
      {"text.JPG", "text.JPG: not a JPEG file (unknown magic bytes)"},
      {"text.jpeg", "text.jpeg: not a JPEG file (unknown magic bytes)"},
      {"text.webp", "text.webp: not a WebP file (unknown magic bytes)"},
      {"text.tiff", "text.tiff: not a TIFF file (unknown magic bytes)"},
      {"text.bmp", "text.bmp: not a BMP file (unknown magic bytes)"},
      {"text.gif", "text.gif: not a GIF file (unknown magic bytes)"},
      {"text.dat", "text.dat: not a PNG, JPEG, WebP, TIFF, BMP or GIF file (unknown magic bytes)"},
      {"dir.png/text", "text: not a PNG, JPEG, WebP, TIFF, BMP or GIF file (unknown magic bytes)"},
  };
  const std::string dir = ::testing::TempDir() + "/named_by_extension";
  std::filesystem::create_directories(dir + "/dir.png");
  const std::string text = "%PDF-1.7 is not an image";
  for (const auto& [name, says] : cases) {
    const std::string path = dir + "/" + name;
    testing::WriteBytes(path, std::vector<uint8_t>(text.begin(), text.end()));
    auto decoded = DecodeImageFile(path);
    ASSERT_FALSE(decoded) << name;
    EXPECT_EQ(decoded.error().code, ErrorCode::kUnsupported) << name;
    const std::string& message = decoded.error().message;
    ASSERT_GE(message.size(), says.size()) << message;
    EXPECT_EQ(message.substr(message.size() - says.size()), says) << message;
  }
  const std::string empty = dir + "/empty.png";
  testing::WriteBytes(empty, {});
  auto decoded = DecodeImageFile(empty);
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().message, empty + ": empty file, not a PNG");
  std::filesystem::remove_all(dir);
}

TEST(DecodeTest, MissingFileIsNotFound) {
  auto decoded = DecodeImageFile(::testing::TempDir() + "/no_such_image.png");
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().code, ErrorCode::kNotFound);
  EXPECT_NE(decoded.error().message.find("no_such_image.png"), std::string::npos);
}

}  // namespace
}  // namespace mineru::image
