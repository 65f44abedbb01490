// SPDX-License-Identifier: Apache-2.0
#include "image/probe.h"

#include <algorithm>

#include "image/codecs.h"

namespace mineru::image {

Result<ImageHeader> ProbeImage(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  if (bytes.size() > limits.max_bytes) {
    return Fail(ErrorCode::kResourceExhausted, "image of {} bytes is over the limit of {} bytes",
                bytes.size(), limits.max_bytes);
  }
  const ImageFormat format = SniffFormat(bytes);
  Result<internal::CodecHeader> codec = Fail(ErrorCode::kInternal, "not probed");
  switch (format) {
    case ImageFormat::kPng:
      codec = internal::ProbePng(bytes, limits);
      break;
    case ImageFormat::kJpeg:
      codec = internal::ProbeJpeg(bytes, limits);
      break;
    case ImageFormat::kWebp:
      codec = internal::ProbeWebp(bytes, limits);
      break;
    case ImageFormat::kTiff:
      codec = internal::ProbeTiff(bytes, limits);
      break;
    case ImageFormat::kBmp:
      codec = internal::ProbeBmp(bytes, limits);
      break;
    case ImageFormat::kGif:
      codec = internal::ProbeGif(bytes, limits);
      break;
    case ImageFormat::kUnknown:
      return Fail(ErrorCode::kUnsupported,
                  "not a PNG, JPEG, WebP, TIFF, BMP or GIF file (unknown magic bytes)");
  }
  if (!codec) return tl::unexpected(std::move(codec).error());
  ImageHeader header;
  header.format = format;
  header.width = codec->width;
  header.height = codec->height;
  // The codec's buffers are gone before EXIF rotation makes its copy: the larger of the two.
  header.scratch_bytes = std::max(codec->scratch_bytes, header.decoded_bytes());
  return header;
}

DecodeLimits LimitsWithin(const ImageHeader& header, DecodeLimits limits) {
  limits.max_width = std::min(limits.max_width, header.width);
  limits.max_height = std::min(limits.max_height, header.height);
  limits.max_pixels = std::min(limits.max_pixels, header.width * header.height);
  return limits;
}

}  // namespace mineru::image
