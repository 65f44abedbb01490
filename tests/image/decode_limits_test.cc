// SPDX-License-Identifier: Apache-2.0
// Every decoding limit at its boundary, for every format: the limit equal to what a file needs
// decodes it, one less refuses it with kResourceExhausted before any pixel memory is taken.
// Also the classic bombs: a PNG declaring 65535 x 65535 over a tiny IDAT, a progressive JPEG
// of thousands of scans, huge declared sizes in every format.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "image/decode.h"
#include "image/encode.h"
#include "image_test_util.h"

namespace mineru::image {
namespace {

::testing::AssertionResult RefusedBy(const Result<DecodedImage>& r, const std::string& needle) {
  if (r) return ::testing::AssertionFailure() << "decoded, expected a limit error";
  if (r.error().code != ErrorCode::kResourceExhausted) {
    return ::testing::AssertionFailure() << "wrong code: " << r.error().ToString();
  }
  if (r.error().message.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "message lacks '" << needle << "': " << r.error().ToString();
  }
  return ::testing::AssertionSuccess();
}

struct Sample {
  std::string file;
  int64_t width, height;  // declared (the canvas for GIF)
};

const std::vector<Sample>& Samples() {
  static const std::vector<Sample> samples = {
      {"png_rgb8", 17, 9},       {"png_grey8_interlaced", 19, 13},
      {"jpeg_rgb420", 37, 23},   {"jpeg_progressive", 37, 23},
      {"webp_lossy", 45, 31},    {"webp_animated", 45, 31},
      {"tiff_rgb_raw", 45, 31},  {"tiff_rgb_tiled", 37, 40},
      {"bmp_24_topdown", 13, 7}, {"bmp_rle8", 13, 7},
      {"gif_palette", 45, 31},   {"gif_frame_grows_screen", 50, 33},
  };
  return samples;
}

TEST(DecodeLimitsTest, WidthHeightPixelsAndBytesAtTheirBoundary) {
  for (const Sample& s : Samples()) {
    SCOPED_TRACE(s.file);
    const std::vector<uint8_t> bytes = testing::DecodeReferenceFile(s.file);
    DecodeOptions exact;
    exact.apply_exif_orientation = false;
    exact.limits.max_width = s.width;
    exact.limits.max_height = s.height;
    exact.limits.max_pixels = s.width * s.height;
    exact.limits.max_bytes = bytes.size();
    auto ok = DecodeImage(bytes, exact);
    ASSERT_TRUE(ok) << ok.error().ToString();
    EXPECT_EQ(ok->image.width, s.width);
    EXPECT_EQ(ok->image.height, s.height);

    DecodeOptions o = exact;
    o.limits.max_width = s.width - 1;
    EXPECT_TRUE(RefusedBy(DecodeImage(bytes, o), "width is over the limit"));
    o = exact;
    o.limits.max_height = s.height - 1;
    EXPECT_TRUE(RefusedBy(DecodeImage(bytes, o), "height is over the limit"));
    o = exact;
    o.limits.max_pixels = s.width * s.height - 1;
    EXPECT_TRUE(RefusedBy(DecodeImage(bytes, o), "pixels is over the limit"));
    o = exact;
    o.limits.max_bytes = bytes.size() - 1;
    EXPECT_TRUE(RefusedBy(DecodeImage(bytes, o), "bytes"));
  }
}

TEST(DecodeLimitsTest, FileSizeIsCheckedBeforeReading) {
  const std::string path = testing::kGoldenImages + "/tiny_50x40.png";
  const auto size = testing::ReadBytes(path).size();
  DecodeOptions o;
  o.limits.max_bytes = size;
  EXPECT_TRUE(DecodeImageFile(path, o));
  o.limits.max_bytes = size - 1;
  auto refused = DecodeImageFile(path, o);
  EXPECT_TRUE(RefusedBy(refused, "over the limit of"));
  if (!refused) {
    EXPECT_NE(refused.error().message.find("tiny_50x40.png"), std::string::npos);
  }
}

std::vector<uint8_t> PngHeader(uint32_t w, uint32_t h) {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  const std::vector<uint8_t> ihdr = testing::PngIhdr(w, h);
  testing::AppendPngChunk(png, "IHDR", ihdr);
  return png;
}

TEST(DecodeLimitsTest, PngBombIsRefusedBeforeAllocation) {
  // 65535 x 65535 RGB (12 GiB decoded) over an IDAT of a dozen bytes.
  std::vector<uint8_t> png = PngHeader(65535, 65535);
  testing::AppendPngChunk(png, "IDAT",
                          {0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01});
  testing::AppendPngChunk(png, "IEND", {});
  EXPECT_TRUE(RefusedBy(DecodeImage(png), "pixels is over the limit of 89478485"));
  // Past the format's own width: the side limit speaks first.
  std::vector<uint8_t> wide = PngHeader(70000, 1);
  testing::AppendPngChunk(wide, "IDAT",
                          {0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01});
  EXPECT_TRUE(RefusedBy(DecodeImage(wide), "width is over the limit of 65535"));
}

TEST(DecodeLimitsTest, PngMetadataChunkAtItsBoundary) {
  // A valid 1 x 1 image with one tEXt chunk of `text` bytes.
  const size_t text = 5000;
  std::vector<uint8_t> png = PngHeader(1, 1);
  std::vector<uint8_t> data(text, 'x');
  const char keyword[] = "Comment";  // with its terminating zero
  std::memcpy(data.data(), keyword, sizeof(keyword));
  testing::AppendPngChunk(png, "tEXt", data);
  // zlib stream of one row: filter 0 and three zero bytes.
  testing::AppendPngChunk(png, "IDAT",
                          {0x78, 0x9c, 0x63, 0x60, 0x60, 0x60, 0x00, 0x00, 0x00, 0x04, 0x00, 0x01});
  testing::AppendPngChunk(png, "IEND", {});
  DecodeOptions o;
  o.limits.max_metadata_bytes = text;
  auto ok = DecodeImage(png, o);
  ASSERT_TRUE(ok) << ok.error().ToString();
  EXPECT_EQ(ok->image.pixels, std::vector<uint8_t>(3, 0));
  o.limits.max_metadata_bytes = text - 1;
  EXPECT_TRUE(RefusedBy(DecodeImage(png, o), "tEXt chunk of 5000 bytes is over the metadata"));
}

TEST(DecodeLimitsTest, WebpExifChunkAtItsBoundary) {
  const std::vector<uint8_t> bytes = testing::DecodeReferenceFile("webp_exif8");
  // The EXIF chunk: "EXIF", little-endian size, payload.
  size_t size = 0;
  for (size_t i = 12; i + 8 <= bytes.size();) {
    const uint32_t n = bytes[i + 4] | bytes[i + 5] << 8 | bytes[i + 6] << 16 | bytes[i + 7] << 24;
    if (std::memcmp(&bytes[i], "EXIF", 4) == 0) size = n;
    i += 8 + n + (n & 1);
  }
  ASSERT_GT(size, 0u);
  DecodeOptions o;
  o.limits.max_metadata_bytes = size;
  auto ok = DecodeImage(bytes, o);
  ASSERT_TRUE(ok) << ok.error().ToString();
  EXPECT_EQ(ok->orientation, 8);
  o.limits.max_metadata_bytes = size - 1;
  EXPECT_TRUE(RefusedBy(DecodeImage(bytes, o), "metadata limit"));
}

// A progressive JPEG whose first scan is repeated `copies` more times; returns the scan count.
std::vector<uint8_t> RepeatFirstScan(const std::vector<uint8_t>& jpeg, int copies, int* scans) {
  size_t first = 0, end = 0;
  *scans = 0;
  for (size_t i = 2; i + 3 < jpeg.size();) {
    if (jpeg[i] != 0xff) {
      ++i;
      continue;
    }
    const uint8_t marker = jpeg[i + 1];
    if (marker == 0x00 || (marker >= 0xd0 && marker <= 0xd7) || marker == 0xff) {
      ++i;  // stuffed byte, restart marker or fill
      continue;
    }
    if (end == 0 && first != 0) end = i;  // the first scan's data ends at the next marker
    if (marker == 0xd9) break;
    const size_t length = jpeg[i + 2] << 8 | jpeg[i + 3];
    if (marker == 0xda) {
      ++*scans;
      if (first == 0) first = i;
    }
    i += 2 + length;
  }
  std::vector<uint8_t> out(jpeg.begin(), jpeg.begin() + static_cast<ptrdiff_t>(end));
  for (int c = 0; c < copies; ++c) {
    out.insert(out.end(), jpeg.begin() + static_cast<ptrdiff_t>(first),
               jpeg.begin() + static_cast<ptrdiff_t>(end));
  }
  out.insert(out.end(), jpeg.begin() + static_cast<ptrdiff_t>(end), jpeg.end());
  *scans += copies;
  return out;
}

TEST(DecodeLimitsTest, JpegScanCountAtItsBoundary) {
  const RgbImage image = testing::NoiseImage(24, 16, 5);
  JpegEncodeOptions progressive;
  progressive.progressive = true;
  auto jpeg = EncodeJpeg(image, progressive);
  ASSERT_TRUE(jpeg);
  auto plain = DecodeImage(*jpeg);
  ASSERT_TRUE(plain);
  int scans = 0;
  const std::vector<uint8_t> repeated = RepeatFirstScan(*jpeg, 30, &scans);
  ASSERT_GT(scans, 30);
  DecodeOptions o;
  o.limits.max_jpeg_scans = scans;
  auto ok = DecodeImage(repeated, o);
  ASSERT_TRUE(ok) << ok.error().ToString();
  EXPECT_EQ(ok->image.pixels, plain->image.pixels);  // repeating a DC scan changes nothing
  o.limits.max_jpeg_scans = scans - 1;
  EXPECT_TRUE(RefusedBy(DecodeImage(repeated, o), "scans"));
}

TEST(DecodeLimitsTest, JpegWithThousandsOfScansStopsAtTheDefault) {
  auto jpeg = EncodeJpeg(testing::NoiseImage(16, 16, 9), JpegEncodeOptions{.progressive = true});
  ASSERT_TRUE(jpeg);
  int scans = 0;
  const std::vector<uint8_t> bomb = RepeatFirstScan(*jpeg, 5000, &scans);
  EXPECT_TRUE(RefusedBy(DecodeImage(bomb), "more than 500 scans"));
}

TEST(DecodeLimitsTest, HugeDeclaredSizesInEveryFormat) {
  // JPEG: the SOF's height and width patched to 65500 x 65500.
  std::vector<uint8_t> jpeg = testing::DecodeReferenceFile("jpeg_rgb420");
  for (size_t i = 2; i + 8 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xff && jpeg[i + 1] == 0xc0) {
      jpeg[i + 5] = jpeg[i + 7] = 0xff;
      jpeg[i + 6] = jpeg[i + 8] = 0xdc;
      break;
    }
  }
  EXPECT_TRUE(RefusedBy(DecodeImage(jpeg), "pixels is over the limit"));
  // GIF: logical screen 65535 x 65535.
  std::vector<uint8_t> gif = testing::DecodeReferenceFile("gif_palette");
  gif[6] = gif[7] = gif[8] = gif[9] = 0xff;
  EXPECT_TRUE(RefusedBy(DecodeImage(gif), "pixels is over the limit"));
  // BMP: 60000 x 60000 24-bit with almost no data.
  std::vector<uint8_t> bmp = testing::DecodeReferenceFile("bmp_24_topdown");
  const uint32_t side = 60000;
  std::memcpy(&bmp[18], &side, 4);
  const uint32_t height = 0u - side;  // top-down
  std::memcpy(&bmp[22], &height, 4);
  EXPECT_TRUE(RefusedBy(DecodeImage(bmp), "pixels is over the limit"));
  // WebP (lossy): the frame header's 14-bit sizes set to 16383.
  std::vector<uint8_t> webp = testing::DecodeReferenceFile("webp_lossy");
  for (size_t i = 12; i + 10 < webp.size(); ++i) {
    if (webp[i] == 0x9d && webp[i + 1] == 0x01 && webp[i + 2] == 0x2a) {
      webp[i + 3] = webp[i + 5] = 0xff;
      webp[i + 4] = webp[i + 6] = 0x3f;
      break;
    }
  }
  EXPECT_TRUE(RefusedBy(DecodeImage(webp), "pixels is over the limit"));
  // TIFF (little-endian, hand-written): ImageWidth and ImageLength set to 65535.
  std::vector<uint8_t> tiff = testing::DecodeReferenceFile("tiff_miniswhite8");
  ASSERT_EQ(tiff[0], 'I');
  const uint32_t ifd = tiff[4] | tiff[5] << 8 | tiff[6] << 16 | tiff[7] << 24;
  const int entries = tiff[ifd] | tiff[ifd + 1] << 8;
  for (int e = 0; e < entries; ++e) {
    uint8_t* entry = &tiff[ifd + 2 + 12 * e];
    const int tag = entry[0] | entry[1] << 8;
    if (tag == 256 || tag == 257) entry[8] = entry[9] = 0xff;
  }
  EXPECT_TRUE(RefusedBy(DecodeImage(tiff), "pixels is over the limit"));
}

}  // namespace
}  // namespace mineru::image
