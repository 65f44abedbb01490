// SPDX-License-Identifier: Apache-2.0
// The per-format decoders behind DecodeImage (decode.cc). Each checks the declared size against
// the limits before allocating pixels, converts to RGB the way Pillow converts that format's
// mode, and reports the orientation its metadata declares (not yet applied). Internal to the
// image layer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "image/decode.h"
#include "image/exif.h"
#include "image/image.h"

namespace mineru::image::internal {

struct CodecOutput {
  RgbImage image;
  std::string_view mode;  // Pillow's mode of the file, a literal: "P", "RGBA", "I;16", ...
  // As ExifOrientation: 1-8, 0 (present but unusable) or kExifOrientationAbsent.
  int orientation = kExifOrientationAbsent;
};

Result<CodecOutput> DecodePng(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecOutput> DecodeJpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecOutput> DecodeWebp(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecOutput> DecodeTiff(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecOutput> DecodeBmp(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecOutput> DecodeGif(std::span<const uint8_t> bytes, const DecodeLimits& limits);

// What a codec reads from a file's header alone, allocating no pixel memory: the size its
// Decode* function allocates (before EXIF rotation) and an upper bound of the buffers that grow
// with the image which it holds besides the RGB output while decoding (rows, planes, coefficient
// arrays, canvases). Fixed-size codec state (Huffman tables, zlib windows, metadata capped by
// limits.max_metadata_bytes) is not counted. Each probe applies CheckDimensions as its decoder
// does, so a size the decoder refuses is refused here first.
struct CodecHeader {
  int64_t width = 0;
  int64_t height = 0;
  uint64_t scratch_bytes = 0;
};

Result<CodecHeader> ProbePng(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecHeader> ProbeJpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecHeader> ProbeWebp(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecHeader> ProbeTiff(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecHeader> ProbeBmp(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<CodecHeader> ProbeGif(std::span<const uint8_t> bytes, const DecodeLimits& limits);

// CheckDimensions, then an RGB image of that size (zero-filled).
Result<RgbImage> AllocateImage(std::string_view format, int64_t width, int64_t height,
                               const DecodeLimits& limits);

}  // namespace mineru::image::internal
