// SPDX-License-Identifier: Apache-2.0
// Reading an image's cost from its header (image/probe.h): on every reference file of every
// format the probe reports exactly the size decoding allocates, and decoding within the probe's
// limits gives Pillow's pixels bit for bit; its scratch bound covers the buffers each codec
// keeps (whole-image ones only where the codec has them); and headers that lie are caught: a
// GIF frame reaching past its screen, a JPEG frame header behind a large segment, a WebP canvas
// that disagrees with its frame, an IHDR that is not first, declared sizes past the limits, and
// image data larger than the header says, which decoding within the probe never allocates for.
#include "image/probe.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "image/decode.h"
#include "image/encode.h"
#include "image_test_util.h"

namespace mineru::image {
namespace {

using testing::Reference;

TEST(ProbeTest, AgreesWithDecodingOnEveryReferenceFile) {
  const Reference& ref = Reference::Get("decode");
  ASSERT_GT(ref.cases().size(), 100u);
  std::map<std::string, int> agreed;
  for (const Json& c : ref.cases()) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const std::vector<uint8_t> bytes =
        testing::ReadBytes(testing::ReferenceDir() + "/" + c["file"].get<std::string>());
    auto header = ProbeImage(bytes);
    DecodeOptions upright;
    upright.apply_exif_orientation = false;
    auto decoded = DecodeImage(bytes, upright);
    if (!decoded) {
      // A file decoding refuses may still have a readable header; decoding within it must fail
      // the same way, never crash.
      if (header) {
        DecodeOptions within;
        within.limits = LimitsWithin(*header, within.limits);
        EXPECT_FALSE(DecodeImage(bytes, within));
      }
      continue;
    }
    ASSERT_TRUE(header) << header.error().ToString();
    EXPECT_EQ(header->format, decoded->format);
    EXPECT_EQ(header->width, decoded->image.width);
    EXPECT_EQ(header->height, decoded->image.height);
    EXPECT_EQ(header->decoded_bytes(), decoded->image.pixels.size());
    EXPECT_GE(header->scratch_bytes, header->decoded_bytes());  // the EXIF rotation's copy
    // Within the probe's limits, with the orientation applied: the same pixels as without them.
    DecodeOptions within;
    within.limits = LimitsWithin(*header, within.limits);
    auto bounded = DecodeImage(bytes, within);
    auto plain = DecodeImage(bytes);
    ASSERT_TRUE(bounded) << bounded.error().ToString();
    ASSERT_TRUE(plain);
    EXPECT_EQ(testing::FirstDifference(bounded->image, plain->image), "");
    ++agreed[std::string(FormatName(header->format))];
  }
  for (const char* format : {"png", "jpeg", "webp", "tiff", "bmp", "gif"}) {
    EXPECT_GE(agreed[format], 5) << format;
  }
}

TEST(ProbeTest, ScratchCountsTheWholeImageBuffersOfEachCodec) {
  const auto scratch = [](const std::string& file) {
    auto header = ProbeImage(testing::DecodeReferenceFile(file));
    EXPECT_TRUE(header) << file << ": " << header.error().ToString();
    return header ? header->scratch_bytes : 0;
  };
  const auto pixels = [](const std::string& file) {
    auto header = ProbeImage(testing::DecodeReferenceFile(file));
    return header ? static_cast<uint64_t>(header->width * header->height) : 0;
  };
  // Progressive JPEG: every coefficient (2 bytes a sample, 3 samples a pixel) until the end.
  EXPECT_GE(scratch("jpeg_progressive"), pixels("jpeg_progressive") * 6);
  // WebP: the RGBA buffer of a still image; two canvases and a frame for an animation.
  EXPECT_GE(scratch("webp_lossy"), pixels("webp_lossy") * 4);
  EXPECT_GE(scratch("webp_animated"), pixels("webp_animated") * 13);
  // TIFF: the page's samples; GIF: a palette index per canvas pixel; BMP RLE: one per pixel.
  EXPECT_GE(scratch("tiff_rgb_raw"), pixels("tiff_rgb_raw") * 3);
  EXPECT_GE(scratch("gif_palette"), pixels("gif_palette"));
  EXPECT_GE(scratch("bmp_rle8"), pixels("bmp_rle8"));
}

const std::vector<uint8_t> kPngSignature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

// The chunks of a PNG after its signature and IHDR (its image data and end).
std::vector<uint8_t> ChunksAfterIhdr(const std::vector<uint8_t>& png) {
  return {png.begin() + 33, png.end()};
}

TEST(ProbeTest, PngHeaderRules) {
  // A bomb's header: refused by the size limit from 33 bytes, nothing allocated.
  std::vector<uint8_t> bomb = kPngSignature;
  testing::AppendPngChunk(bomb, "IHDR", testing::PngIhdr(65535, 65535));
  auto refused = ProbeImage(bomb);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(refused.error().message.find("pixels is over the limit of 89478485"),
            std::string::npos);
  // An interlaced file keeps the whole image in rows as well.
  std::vector<uint8_t> interlaced = kPngSignature;
  testing::AppendPngChunk(interlaced, "IHDR", testing::PngIhdr(100, 50, 8, 6, 1));
  auto header = ProbeImage(interlaced);
  ASSERT_TRUE(header) << header.error().ToString();
  EXPECT_EQ(header->width, 100);
  EXPECT_EQ(header->height, 50);
  EXPECT_GE(header->scratch_bytes, 100u * 50 * 4);
  // Not first, the wrong length, an invalid depth for the colour type, cut short: corrupt.
  std::vector<uint8_t> late = kPngSignature;
  testing::AppendPngChunk(late, "tEXt", {'a', 0, 'b'});
  testing::AppendPngChunk(late, "IHDR", testing::PngIhdr(10, 10));
  std::vector<uint8_t> long_ihdr = kPngSignature;
  std::vector<uint8_t> fourteen = testing::PngIhdr(10, 10);
  fourteen.push_back(0);
  testing::AppendPngChunk(long_ihdr, "IHDR", fourteen);
  std::vector<uint8_t> bad_depth = kPngSignature;
  testing::AppendPngChunk(bad_depth, "IHDR",
                          testing::PngIhdr(10, 10, 4, 2));  // 4-bit RGB does not exist
  std::vector<uint8_t> cut = bomb;
  cut.resize(30);
  for (const auto& [what, file] :
       std::vector<std::pair<std::string, std::vector<uint8_t>>>{{"IHDR not first", late},
                                                                 {"IHDR of 14 bytes", long_ihdr},
                                                                 {"4-bit RGB", bad_depth},
                                                                 {"truncated", cut}}) {
    SCOPED_TRACE(what);
    auto r = ProbeImage(file);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kCorrupt) << r.error().ToString();
    EXPECT_FALSE(DecodeImage(file));  // libpng refuses them too
  }
}

TEST(ProbeTest, DataForALargerImageThanTheHeaderIsNeverDecodedPastIt) {
  // The image data of a 64 x 64 PNG behind an IHDR that declares 4 x 4: decoding within the
  // probe reads the first rows the header describes (or fails) and never allocates more.
  auto big = EncodePng(testing::NoiseImage(64, 64, 3));
  ASSERT_TRUE(big);
  std::vector<uint8_t> liar = kPngSignature;
  testing::AppendPngChunk(liar, "IHDR", testing::PngIhdr(4, 4));
  const std::vector<uint8_t> rest = ChunksAfterIhdr(*big);
  liar.insert(liar.end(), rest.begin(), rest.end());
  auto header = ProbeImage(liar);
  ASSERT_TRUE(header) << header.error().ToString();
  EXPECT_EQ(header->decoded_bytes(), 4u * 4 * 3);
  DecodeOptions within;
  within.limits = LimitsWithin(*header, within.limits);
  auto decoded = DecodeImage(liar, within);
  if (decoded) {
    EXPECT_EQ(decoded->image.pixels.size(), header->decoded_bytes());
  }
}

TEST(ProbeTest, GifFramePastItsScreenIsCountedAndLimited) {
  // gif_frame_grows_screen: a logical screen smaller than its first frame's extent.
  const std::vector<uint8_t> gif = testing::DecodeReferenceFile("gif_frame_grows_screen");
  const int screen_w = gif[6] | gif[7] << 8, screen_h = gif[8] | gif[9] << 8;
  auto header = ProbeImage(gif);
  ASSERT_TRUE(header) << header.error().ToString();
  EXPECT_EQ(header->width, 50);
  EXPECT_EQ(header->height, 33);
  EXPECT_LT(int64_t{screen_w} * screen_h, header->width * header->height);
  // A screen within the limit whose frame is not: refused from the frame's descriptor.
  DecodeLimits limits;
  limits.max_pixels = int64_t{screen_w} * screen_h;
  auto refused = ProbeImage(gif, limits);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  // A file without any frame is corrupt, as decoding says.
  std::vector<uint8_t> no_frame(gif.begin(), gif.begin() + 13);
  if ((gif[10] & 0x80) != 0) {  // keep the global colour table
    const size_t table = size_t{3} << ((gif[10] & 7) + 1);
    no_frame.insert(no_frame.end(), gif.begin() + 13, gif.begin() + 13 + table);
  }
  no_frame.push_back(0x3b);
  auto empty = ProbeImage(no_frame);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, ErrorCode::kCorrupt);
}

TEST(ProbeTest, JpegFrameHeaderBehindALargeSegmentAndTheIssueBomb) {
  const std::vector<uint8_t> jpeg = testing::DecodeReferenceFile("jpeg_rgb420");
  // A 65,000-byte comment segment before the frame header: read through, not guessed.
  std::vector<uint8_t> commented(jpeg.begin(), jpeg.begin() + 2);
  const size_t length = 65000;
  commented.insert(commented.end(), {0xff, 0xfe, static_cast<uint8_t>(length >> 8),
                                     static_cast<uint8_t>(length & 0xff)});
  commented.insert(commented.end(), length - 2, 'c');
  commented.insert(commented.end(), jpeg.begin() + 2, jpeg.end());
  auto header = ProbeImage(commented);
  ASSERT_TRUE(header) << header.error().ToString();
  EXPECT_EQ(header->width, 37);
  EXPECT_EQ(header->height, 23);
  auto decoded = DecodeImage(commented);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->image.width, 37);

  // Issue 14's bomb: a file of a few hundred bytes whose frame header declares 9000 x 9000.
  // Its header alone says it decodes to 243,000,000 bytes.
  std::vector<uint8_t> bomb = jpeg;
  bool patched = false;
  for (size_t i = 2; i + 8 < bomb.size(); ++i) {
    if (bomb[i] == 0xff && bomb[i + 1] == 0xc0) {
      bomb[i + 5] = bomb[i + 7] = 9000 >> 8;
      bomb[i + 6] = bomb[i + 8] = 9000 & 0xff;
      patched = true;
      break;
    }
  }
  ASSERT_TRUE(patched);
  auto bomb_header = ProbeImage(bomb);
  ASSERT_TRUE(bomb_header) << bomb_header.error().ToString();
  EXPECT_EQ(bomb_header->decoded_bytes(), uint64_t{9000} * 9000 * 3);
  // Cut before its frame header: corrupt.
  std::vector<uint8_t> cut(jpeg.begin(), jpeg.begin() + 20);
  auto truncated = ProbeImage(cut);
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.error().code, ErrorCode::kCorrupt);
}

// A simple lossy WebP rewrapped in a VP8X header declaring another canvas.
std::vector<uint8_t> WithCanvas(const std::vector<uint8_t>& simple, uint32_t w, uint32_t h) {
  std::vector<uint8_t> vp8x = {'V', 'P', '8', 'X', 10, 0, 0, 0, 0, 0, 0, 0};
  for (uint32_t v : {w - 1, h - 1}) {
    for (int b = 0; b < 3; ++b) vp8x.push_back(static_cast<uint8_t>(v >> (8 * b)));
  }
  std::vector<uint8_t> out = {'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'};
  out.insert(out.end(), vp8x.begin(), vp8x.end());
  out.insert(out.end(), simple.begin() + 12, simple.end());  // the VP8 chunk
  const uint32_t riff = static_cast<uint32_t>(out.size() - 8);
  for (int b = 0; b < 4; ++b) out[4 + b] = static_cast<uint8_t>(riff >> (8 * b));
  return out;
}

TEST(ProbeTest, WebpCanvasThatDisagreesWithItsFrame) {
  const std::vector<uint8_t> simple = testing::DecodeReferenceFile("webp_lossy");
  ASSERT_EQ(std::memcmp(&simple[12], "VP8 ", 4), 0);
  // The canvas is what decoding sizes its buffers by: the true one is read as such ...
  const std::vector<uint8_t> honest = WithCanvas(simple, 45, 31);
  auto header = ProbeImage(honest);
  ASSERT_TRUE(header) << header.error().ToString();
  EXPECT_EQ(header->width, 45);
  EXPECT_EQ(header->height, 31);
  DecodeOptions within;
  within.limits = LimitsWithin(*header, within.limits);
  auto decoded = DecodeImage(honest, within);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded->image.pixels.size(), header->decoded_bytes());
  // ... and a still image's canvas that claims more than its frame holds is refused by the
  // probe as by decoding (libwebp requires them equal), never taken as the size to hold.
  const std::vector<uint8_t> liar = WithCanvas(simple, 4000, 4000);
  auto refused = ProbeImage(liar);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kCorrupt);
  EXPECT_FALSE(DecodeImage(liar));
}

TEST(ProbeTest, DeclaredSizesPastTheLimitsInTiffBmpAndWebp) {
  const auto expect_refused = [](const std::vector<uint8_t>& bytes, const char* what) {
    auto r = ProbeImage(bytes);
    ASSERT_FALSE(r) << what;
    EXPECT_EQ(r.error().code, ErrorCode::kResourceExhausted) << what << r.error().ToString();
  };
  std::vector<uint8_t> tiff = testing::DecodeReferenceFile("tiff_miniswhite8");
  ASSERT_EQ(tiff[0], 'I');
  const uint32_t ifd = tiff[4] | tiff[5] << 8 | tiff[6] << 16 | tiff[7] << 24;
  const int entries = tiff[ifd] | tiff[ifd + 1] << 8;
  for (int e = 0; e < entries; ++e) {
    uint8_t* entry = &tiff[ifd + 2 + 12 * e];
    const int tag = entry[0] | entry[1] << 8;
    if (tag == 256 || tag == 257) entry[8] = entry[9] = 0xff;
  }
  expect_refused(tiff, "tiff 65535 x 65535");
  // BMP: a top-down height whose top byte is 0xFF but whose magnitude is 2^24.
  std::vector<uint8_t> bmp = testing::DecodeReferenceFile("bmp_24_topdown");
  const uint32_t width = 1000, height = 0xff000000u;
  std::memcpy(&bmp[18], &width, 4);
  std::memcpy(&bmp[22], &height, 4);
  expect_refused(bmp, "bmp 1000 x 2^24 top-down");
  // WebP (lossy): the frame header's 14-bit sizes set to 16383.
  const std::vector<uint8_t> webp = testing::DecodeReferenceFile("webp_lossy");
  std::vector<uint8_t> huge_webp = webp;
  for (size_t i = 12; i + 10 < huge_webp.size(); ++i) {
    if (huge_webp[i] == 0x9d && huge_webp[i + 1] == 0x01 && huge_webp[i + 2] == 0x2a) {
      huge_webp[i + 3] = huge_webp[i + 5] = 0xff;
      huge_webp[i + 4] = huge_webp[i + 6] = 0x3f;
      break;
    }
  }
  expect_refused(huge_webp, "webp 16383 x 16383");
  // Over the file limit or of no known format.
  DecodeLimits small;
  small.max_bytes = webp.size() - 1;
  auto big = ProbeImage(webp, small);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, ErrorCode::kResourceExhausted);
  const std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  auto unknown = ProbeImage(text);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace mineru::image
