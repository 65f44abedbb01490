// SPDX-License-Identifier: Apache-2.0
// Truncated and corrupt files of every format: a clear error naming the format, never a crash,
// never output on stderr (the codecs' own handlers are replaced).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "image/decode.h"
#include "image_test_util.h"

namespace mineru::image {
namespace {

using testing::Reference;

std::vector<uint8_t> ReferenceFile(const std::string& name) {
  return testing::ReadBytes(testing::ReferenceDir() + "/decode/" + name);
}

std::string FormatOf(const std::string& name) { return name.substr(0, name.find('_')); }

// Captures what the process writes to stderr while `body` runs.
template <class Body>
std::string CaptureStderr(const Body& body) {
  ::testing::internal::CaptureStderr();
  body();
  return ::testing::internal::GetCapturedStderr();
}

TEST(DecodeErrorsTest, EveryFileCutInHalfIsAClearError) {
  const Reference& ref = Reference::Get("decode");
  std::map<std::string, int> checked;
  const std::string err = CaptureStderr([&] {
    for (const Json& c : ref.cases()) {
      const std::string name = c["name"];
      // An animation's first frame can lie wholly in the first half.
      if (c.value("error", false) || name == "gif_animated") continue;
      SCOPED_TRACE(name);
      std::vector<uint8_t> bytes = ReferenceFile(name);
      bytes.resize(bytes.size() / 2);
      auto decoded = DecodeImage(bytes);
      ASSERT_FALSE(decoded) << "half a file decoded";
      EXPECT_TRUE(decoded.error().code == ErrorCode::kCorrupt ||
                  decoded.error().code == ErrorCode::kUnsupported)
          << decoded.error().ToString();
      EXPECT_EQ(decoded.error().message.rfind(FormatOf(name) + ":", 0), 0u)
          << decoded.error().ToString();
      ++checked[FormatOf(name)];
    }
  });
  EXPECT_EQ(err, "");
  EXPECT_EQ(checked.size(), 6u);
}

// Every prefix of one small file per format: errors or (where the cut spares the pixels, such
// as a PNG without IEND) a full image, and nothing else.
TEST(DecodeErrorsTest, EveryPrefixOfSmallFiles) {
  const std::string err = CaptureStderr([&] {
    for (const char* name :
         {"png_palette4_short", "png_rgba8_interlaced", "jpeg_progressive", "jpeg_rgb420",
          "webp_lossy_alpha", "webp_animated", "tiff_rgb_tiff_lzw", "tiff_rgb_jpeg", "bmp_rle8",
          "bmp_palette4", "gif_interlaced", "gif_frame_offset_transparent"}) {
      SCOPED_TRACE(name);
      const std::vector<uint8_t> bytes = ReferenceFile(name);
      auto full = DecodeImage(bytes);
      ASSERT_TRUE(full) << full.error().ToString();
      int errors = 0;
      for (size_t n = 0; n < bytes.size(); ++n) {
        auto decoded = DecodeImage(std::span<const uint8_t>(bytes.data(), n));
        if (decoded) {
          EXPECT_EQ(decoded->image.width, full->image.width) << n;
          EXPECT_EQ(decoded->image.height, full->image.height) << n;
        } else {
          ++errors;
          EXPECT_FALSE(decoded.error().message.empty());
        }
      }
      EXPECT_GT(errors, static_cast<int>(bytes.size() / 2));
    }
  });
  EXPECT_EQ(err, "");
}

// Random byte damage anywhere: any outcome but a crash, a hang or stderr output.
TEST(DecodeErrorsTest, RandomCorruptionNeverCrashes) {
  const Reference& ref = Reference::Get("decode");
  std::mt19937 rng(20250929);
  int decoded_ok = 0, refused = 0;
  const std::string err = CaptureStderr([&] {
    for (const Json& c : ref.cases()) {
      const std::vector<uint8_t> original = ReferenceFile(c["name"]);
      for (int trial = 0; trial < 40; ++trial) {
        std::vector<uint8_t> bytes = original;
        const int hits = 1 + static_cast<int>(rng() % 4);
        for (int h = 0; h < hits; ++h) {
          // Headers matter most: half the hits land in the first 64 bytes.
          const size_t span = (rng() & 1) ? std::min<size_t>(64, bytes.size()) : bytes.size();
          bytes[rng() % span] = static_cast<uint8_t>(rng());
        }
        auto decoded = DecodeImage(bytes);
        if (decoded) {
          ++decoded_ok;
          EXPECT_LE(decoded->image.width * decoded->image.height, kDefaultMaxImagePixels);
        } else {
          ++refused;
        }
      }
    }
  });
  EXPECT_EQ(err, "");
  EXPECT_GT(refused, 0);
  std::printf("random damage: %d decoded, %d refused\n", decoded_ok, refused);
}

struct Damage {
  const char* file;
  size_t offset;
  std::vector<uint8_t> bytes;
  ErrorCode code;
  const char* needle;
};

TEST(DecodeErrorsTest, DamagedHeadersGiveSpecificErrors) {
  const std::vector<Damage> cases = {
      {"png_rgb8", 16, {0xff}, ErrorCode::kCorrupt, "png:"},  // IHDR width byte: CRC mismatch
      {"png_rgb8", 24, {7}, ErrorCode::kCorrupt, "png:"},     // bit depth 7
      {"jpeg_rgb420", 2, {0xff, 0xd9}, ErrorCode::kCorrupt, "jpeg:"},  // EOI before any frame
      {"gif_palette",
       0,
       {'G', 'I', 'F', '8', '9', 'a', 0, 0, 0, 0},
       ErrorCode::kCorrupt,
       "gif:"},  // empty screen
      {"bmp_24_topdown", 14, {20}, ErrorCode::kUnsupported, "header type"},
      {"bmp_24_topdown", 28, {2}, ErrorCode::kUnsupported, "pixel depth"},
      {"bmp_24_topdown", 30, {9}, ErrorCode::kUnsupported, "compression"},
      {"bmp_palette4", 46, {0x71, 0x11, 0x01}, ErrorCode::kUnsupported, "palette size"},
      {"tiff_miniswhite8", 4, {0xf0, 0xff, 0xff, 0x0f}, ErrorCode::kCorrupt, "tiff:"},
      {"webp_lossy", 8, {'W', 'A', 'V', 'E'}, ErrorCode::kUnsupported, "unknown magic"},
      {"webp_lossy", 12, {'V', 'P', '8', 'Q'}, ErrorCode::kCorrupt, "webp:"},
  };
  const std::string err = CaptureStderr([&] {
    for (const Damage& d : cases) {
      SCOPED_TRACE(std::string(d.file) + " @" + std::to_string(d.offset));
      std::vector<uint8_t> bytes = ReferenceFile(d.file);
      std::copy(d.bytes.begin(), d.bytes.end(), bytes.begin() + static_cast<ptrdiff_t>(d.offset));
      auto decoded = DecodeImage(bytes);
      ASSERT_FALSE(decoded);
      EXPECT_EQ(decoded.error().code, d.code) << decoded.error().ToString();
      EXPECT_NE(decoded.error().message.find(d.needle), std::string::npos)
          << decoded.error().ToString();
    }
  });
  EXPECT_EQ(err, "");
}

TEST(DecodeErrorsTest, TruncationIsNamed) {
  for (const char* name : {"jpeg_rgb420", "png_rgb8", "bmp_24_topdown", "gif_palette"}) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> bytes = ReferenceFile(name);
    bytes.resize(bytes.size() * 3 / 4);
    auto decoded = DecodeImage(bytes);
    ASSERT_FALSE(decoded);
    EXPECT_NE(decoded.error().message.find("truncated"), std::string::npos)
        << decoded.error().ToString();
  }
}

// Found by fuzz/image_decode_fuzzer.cc (image_tiff, fuzz/corpus/image_tiff/crash-tile-13gb):
// the tile buffer was sized from the tags alone, so a 155-byte file declaring 1537 x 4259845
// tiles (TileLength read from RowsPerStrip) for a 155 x 5 image allocated 13 GB. The input here
// is that file with 32768 rows per strip (a 100 MB tile, which the decoder used to allocate and
// fill); tiles larger than the padded image (or than 1024 x 1024) are now refused first.
TEST(DecodeErrorsTest, TilesFarLargerThanTheImageAreRefused) {
  const std::vector<uint8_t> tiff = {
      0x49, 0x49, 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x01, 0x04, 0x00, 0x01,
      0x00, 0x00, 0x00, 0x9b, 0x00, 0x00, 0x00, 0x01, 0x01, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00,
      0x05, 0x00, 0x00, 0x00, 0x02, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,
      0x00, 0x03, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x01,
      0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x11, 0x01, 0x04, 0x00, 0x01,
      0x00, 0x00, 0x02, 0x7a, 0x00, 0x00, 0x00, 0x16, 0x01, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00,
      0x00, 0x80, 0x00, 0x00, 0x17, 0x01, 0x04, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x42, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x24, 0x24, 0x24, 0x24,
      0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x24, 0x04, 0x00, 0x41, 0x00,
      0x00, 0x00, 0x00, 0x60, 0xb0, 0x00, 0x00, 0x00, 0x56, 0x97, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x01, 0x00, 0x00, 0x00,
  };
  Result<DecodedImage> decoded = DecodeImage(tiff);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(decoded.error().message.find("tiles of 1537 x 32768 pixels for an image of 155 x 5"),
            std::string::npos)
      << decoded.error().ToString();
}

}  // namespace
}  // namespace mineru::image
