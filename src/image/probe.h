// SPDX-License-Identifier: Apache-2.0
// What an image will cost, read from its header before any decoding: the size DecodeImage will
// allocate and the scratch it needs on the way, so that a caller holding several images (a chat
// request, an upload) can count them all, and refuse or wait, before it decodes the first one.
//
//   MINERU_ASSIGN_OR_RETURN(ImageHeader header, ProbeImage(bytes, limits));
//   ... reserve header.decoded_bytes() + header.scratch_bytes ...
//   DecodeOptions options;
//   options.limits = LimitsWithin(header, limits);
//   auto decoded = DecodeImage(bytes, options);   // never more pixels than the header declared
//
// Each format's probe reads only its header (PNG: the IHDR chunk; JPEG: the markers up to the
// first scan, through libjpeg; WebP: the RIFF/VP8X header, through libwebp; TIFF: the first
// directory, through libtiff; GIF: the screen and the first frame's descriptor, through giflib;
// BMP: the info header) and allocates no pixel memory. The same limits as decoding apply, with
// the same errors: kCorrupt, kUnsupported, kResourceExhausted naming the limit.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "image/decode.h"

namespace mineru::image {

struct ImageHeader {
  ImageFormat format = ImageFormat::kUnknown;
  // The size DecodeImage allocates: before EXIF rotation (which may swap the two); for GIF the
  // logical screen grown to hold the first frame, as Pillow builds it.
  int64_t width = 0;
  int64_t height = 0;
  // An upper bound of what decoding holds for a moment besides the decoded image: the codec's
  // buffers that grow with the image (rows, planes, JPEG coefficient arrays, WebP canvases), or
  // the copy EXIF rotation makes, whichever is larger. Fixed-size codec state is not counted.
  uint64_t scratch_bytes = 0;

  // The RgbImage DecodeImage returns: width x height x 3 bytes.
  uint64_t decoded_bytes() const {
    return static_cast<uint64_t>(width) * static_cast<uint64_t>(height) * 3;
  }
};

// The header of an image file. Refuses what DecodeImage would refuse from the header alone:
// more than limits.max_bytes, unknown magic bytes, a malformed or truncated header, a size past
// max_width/max_height/max_pixels. A file whose header is fine may still fail to decode.
Result<ImageHeader> ProbeImage(std::span<const uint8_t> bytes, const DecodeLimits& limits = {});

// `limits` narrowed to the header's size: decoding with them never allocates more pixels than
// the header declared (a decoder that reads a larger size than its probe did refuses the file
// with kResourceExhausted instead).
DecodeLimits LimitsWithin(const ImageHeader& header, DecodeLimits limits);

}  // namespace mineru::image
