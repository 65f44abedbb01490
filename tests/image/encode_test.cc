// SPDX-License-Identifier: Apache-2.0
// PNG and JPEG encoding round trips, JPEG bytes against Pillow's encoder, base64 and data URLs.
#include "image/encode.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "image/data_url.h"
#include "image/decode.h"
#include "image_test_util.h"

namespace mineru::image {
namespace {

using testing::Reference;

double Psnr(const RgbImage& a, const RgbImage& b) {
  double se = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) {
    const double d = static_cast<double>(a.pixels[i]) - static_cast<double>(b.pixels[i]);
    se += d * d;
  }
  const double mse = se / static_cast<double>(a.pixels.size());
  return mse == 0 ? INFINITY : 10 * std::log10(255.0 * 255.0 / mse);
}

TEST(EncodeTest, PngRoundTripIsExactAtEveryLevel) {
  for (auto [w, h] : {std::pair<int64_t, int64_t>{1, 1}, {7, 3}, {300, 201}}) {
    const RgbImage image = testing::NoiseImage(w, h, static_cast<uint32_t>(w));
    for (int level : {0, 1, 6, 9}) {
      for (bool filter_rows : {true, false}) {
        auto png = EncodePng(image, PngEncodeOptions{level, filter_rows});
        ASSERT_TRUE(png) << png.error().ToString();
        auto back = DecodeImage(*png);
        ASSERT_TRUE(back) << back.error().ToString();
        EXPECT_EQ(back->format, ImageFormat::kPng);
        EXPECT_EQ(testing::FirstDifference(back->image, image), "") << level << filter_rows;
      }
    }
  }
  EXPECT_FALSE(EncodePng(testing::NoiseImage(2, 2, 1), PngEncodeOptions{10}));
  EXPECT_FALSE(EncodePng(RgbImage{}));
}

TEST(EncodeTest, JpegRoundTripKeepsTheImage) {
  // A page-like image: smooth areas and edges (noise would make any JPEG look bad).
  RgbImage image = testing::NoiseImage(160, 120, 5);
  for (int64_t y = 0; y < image.height; ++y) {
    for (int64_t x = 0; x < image.width; ++x) {
      uint8_t* p = image.row(y) + x * 3;
      p[0] = static_cast<uint8_t>(x * 255 / 159);
      p[1] = static_cast<uint8_t>((x / 16 + y / 16) % 2 ? 230 : 20);
      p[2] = static_cast<uint8_t>(y * 2);
    }
  }
  double last = 0;
  for (int quality : {50, 75, 95}) {
    for (ChromaSubsampling s : {ChromaSubsampling::k420, ChromaSubsampling::k444}) {
      for (bool progressive : {false, true}) {
        JpegEncodeOptions o;
        o.quality = quality;
        o.subsampling = s;
        o.progressive = progressive;
        auto jpeg = EncodeJpeg(image, o);
        ASSERT_TRUE(jpeg) << jpeg.error().ToString();
        auto back = DecodeImage(*jpeg);
        ASSERT_TRUE(back) << back.error().ToString();
        ASSERT_EQ(back->image.width, 160);
        const double psnr = Psnr(back->image, image);
        // Halving the chroma resolution smears the sharp green checkerboard: about 25 dB.
        EXPECT_GT(psnr, s == ChromaSubsampling::k444 ? 35.0 : 24.0) << quality;
        if (s == ChromaSubsampling::k444 && !progressive) {
          EXPECT_GT(psnr, last) << "quality " << quality;
          last = psnr;
        }
      }
    }
  }
  EXPECT_FALSE(EncodeJpeg(image, JpegEncodeOptions{.quality = 0}));
  EXPECT_FALSE(EncodeJpeg(image, JpegEncodeOptions{.quality = 101}));
}

// Pillow's JPEG writer is libjpeg-turbo with jpeg_set_defaults and jpeg_set_quality: the same
// calls give the same bytes.
TEST(EncodeTest, JpegBytesEqualPillows) {
  const Reference& ref = Reference::Get("encode");
  int equal = 0;
  for (const Json& c : ref.cases()) {
    RgbImage image;
    image.width = c["size"][0];
    image.height = c["size"][1];
    image.pixels = ref.Copy(c["pixels"]);
    for (const Json& j : c["jpeg"]) {
      SCOPED_TRACE(c["size"].dump() + " " + j.dump());
      JpegEncodeOptions o;
      o.quality = j["quality"];
      o.subsampling =
          j["subsampling"] == "4:4:4" ? ChromaSubsampling::k444 : ChromaSubsampling::k420;
      auto ours = EncodeJpeg(image, o);
      ASSERT_TRUE(ours);
      const std::vector<uint8_t> pillow = ref.Copy(j["bytes"]);
      EXPECT_EQ(*ours, pillow);
      equal += *ours == pillow;
    }
  }
  EXPECT_EQ(equal, 8);
}

TEST(DataUrlTest, Base64KnownAnswers) {
  // RFC 4648 section 10.
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (auto [plain, coded] : vectors) {
    const std::string p = plain;
    const std::vector<uint8_t> bytes(p.begin(), p.end());
    EXPECT_EQ(Base64Encode(bytes), coded);
    auto back = Base64Decode(coded);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, bytes);
  }
  const std::vector<uint8_t> all = [] {
    std::vector<uint8_t> v(256);
    for (int i = 0; i < 256; ++i) v[i] = static_cast<uint8_t>(i);
    return v;
  }();
  EXPECT_EQ(*Base64Decode(Base64Encode(all)), all);
  for (const char* bad : {"Zg=", "Zg==Zg==", "Z===", "Zm9v\n", "Zm9*", "=Zm9"}) {
    auto r = Base64Decode(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kCorrupt);
  }
}

TEST(DataUrlTest, RoundTripAndLimit) {
  auto png = EncodePng(testing::NoiseImage(9, 5, 3));
  ASSERT_TRUE(png);
  const std::string url = MakeDataUrl(FormatMimeType(ImageFormat::kPng), *png);
  EXPECT_EQ(url.rfind("data:image/png;base64,iVBORw0KGgo", 0), 0u);
  auto parsed = ParseDataUrl(url, png->size());
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->mime_type, "image/png");
  EXPECT_EQ(parsed->bytes, *png);
  auto over = ParseDataUrl(url, png->size() - 1);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
  EXPECT_FALSE(ParseDataUrl("https://example.com/a.png", 100));
  EXPECT_FALSE(ParseDataUrl("data:image/png,rawdata", 100));
}

}  // namespace
}  // namespace mineru::image
