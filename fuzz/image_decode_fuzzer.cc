// SPDX-License-Identifier: Apache-2.0
// One image decoder wrapper (image/decode_<format>.cc) through DecodeImage (image/decode.h),
// EXIF orientation included. Built once per format: MINERU_FUZZ_IMAGE_FORMAT names the
// ImageFormat this binary exercises, and inputs the sniffer gives to another decoder are
// skipped, so each target's corpus and time stay with its own codec.
// Invariants: a decoded image has the pixels its size says, within the limits, and the format
// the sniffer named.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "image/decode.h"

#ifndef MINERU_FUZZ_IMAGE_FORMAT
#error "define MINERU_FUZZ_IMAGE_FORMAT (kPng, kJpeg, kWebp, kTiff, kBmp or kGif)"
#endif

namespace {

using mineru::image::ImageFormat;

constexpr ImageFormat kFormat = ImageFormat::MINERU_FUZZ_IMAGE_FORMAT;

mineru::image::DecodeOptions Options() {
  mineru::image::DecodeOptions options;
  // 4 Mpx instead of Pillow's 89 Mpx: the limit checks run all the same, and an input that
  // declares a large image costs the fuzzer 12 MB instead of 268 MB per run.
  options.limits.max_pixels = int64_t{1} << 22;
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mineru;
  const std::span<const uint8_t> bytes(data, size);
  const ImageFormat sniffed = image::SniffFormat(bytes);
  if (sniffed != kFormat) return -1;  // another target's input: not added to the corpus
  static const image::DecodeOptions options = Options();
  auto decoded = image::DecodeImage(bytes, options);
  if (!decoded) return 0;
  const image::RgbImage& rgb = decoded->image;
  MINERU_CHECK(decoded->format == kFormat);
  MINERU_CHECK(rgb.width >= 1 && rgb.height >= 1);
  MINERU_CHECK(rgb.width * rgb.height <= options.limits.max_pixels);
  MINERU_CHECK(rgb.pixels.size() == static_cast<size_t>(rgb.width * rgb.height * 3));
  MINERU_CHECK(decoded->orientation >= 1 && decoded->orientation <= 8);
  MINERU_CHECK(!decoded->source_mode.empty());
  return 0;
}
