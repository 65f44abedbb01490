// SPDX-License-Identifier: Apache-2.0
// WebP through libwebp. Pillow 9.4 decodes every WebP with WebPAnimDecoder in MODE_RGBA (mode
// "RGBA" when the file has alpha, else "RGB"), then drops alpha. A still image is one key
// frame decoded straight into a zeroed canvas, which WebPDecode into an RGBA buffer reproduces
// with half the memory; animated files go through WebPAnimDecoder itself (first frame, blended
// onto the transparent canvas as Pillow gets it). The orientation comes from the EXIF chunk.
#include <webp/decode.h>
#include <webp/demux.h>

#include <string>
#include <vector>

#include "image/codecs.h"
#include "image/pixel_modes.h"

namespace mineru::image::internal {
namespace {

std::string StatusText(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "corrupt bitstream";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "unsupported feature";
    case VP8_STATUS_SUSPENDED:
      return "suspended";
    case VP8_STATUS_USER_ABORT:
      return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "file is truncated";
    default:
      return fmt::format("error {}", static_cast<int>(status));
  }
}

Result<int> FindOrientation(const WebPData& data, const DecodeLimits& limits) {
  WebPDemuxer* demux = WebPDemux(&data);
  if (demux == nullptr) return kExifOrientationAbsent;  // decoding reports the real problem
  int orientation = kExifOrientationAbsent;
  WebPChunkIterator it;
  uint64_t size = 0;
  if (WebPDemuxGetChunk(demux, "EXIF", 1, &it)) {
    size = it.chunk.size;
    if (size <= limits.max_metadata_bytes) {
      orientation = ExifOrientation(std::span<const uint8_t>(it.chunk.bytes, it.chunk.size));
    }
    WebPDemuxReleaseChunkIterator(&it);
  }
  WebPDemuxDelete(demux);
  if (size > limits.max_metadata_bytes) {
    return Fail(ErrorCode::kResourceExhausted,
                "webp: EXIF chunk of {} bytes is over the metadata limit of {} bytes", size,
                limits.max_metadata_bytes);
  }
  return orientation;
}

Status DecodeStill(std::span<const uint8_t> bytes, RgbImage& image) {
  const auto w = static_cast<size_t>(image.width), h = static_cast<size_t>(image.height);
  std::vector<uint8_t> rgba(w * h * 4);
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) {
    return Fail(ErrorCode::kInternal, "webp: library version mismatch");
  }
  config.output.colorspace = MODE_RGBA;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = rgba.data();
  config.output.u.RGBA.stride = static_cast<int>(w * 4);
  config.output.u.RGBA.size = rgba.size();
  const VP8StatusCode status = WebPDecode(bytes.data(), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);
  if (status != VP8_STATUS_OK) {
    return Fail(
        status == VP8_STATUS_OUT_OF_MEMORY ? ErrorCode::kResourceExhausted : ErrorCode::kCorrupt,
        "webp: {}", StatusText(status));
  }
  DropExtraChannels(rgba.data(), w * h, 4, image.pixels.data());
  return OkStatus();
}

Status DecodeFirstFrame(const WebPData& data, RgbImage& image) {
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) {
    return Fail(ErrorCode::kInternal, "webp: library version mismatch");
  }
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  WebPAnimDecoder* decoder = WebPAnimDecoderNew(&data, &options);
  if (decoder == nullptr) {
    return Fail(ErrorCode::kCorrupt, "webp: cannot parse the animation");
  }
  WebPAnimInfo info;
  uint8_t* frame = nullptr;
  int timestamp = 0;
  Status status = OkStatus();
  if (!WebPAnimDecoderGetInfo(decoder, &info) ||
      static_cast<int64_t>(info.canvas_width) != image.width ||
      static_cast<int64_t>(info.canvas_height) != image.height) {
    status = Fail(ErrorCode::kCorrupt, "webp: animation canvas disagrees with the header");
  } else if (!WebPAnimDecoderGetNext(decoder, &frame, &timestamp) || frame == nullptr) {
    status = Fail(ErrorCode::kCorrupt, "webp: cannot decode the first frame");
  } else {
    DropExtraChannels(frame, static_cast<size_t>(image.width * image.height), 4,
                      image.pixels.data());
  }
  WebPAnimDecoderDelete(decoder);
  return status;
}

}  // namespace

Result<CodecHeader> ProbeWebp(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  // The RIFF header and the VP8X canvas (or the one frame's header): what DecodeWebp sizes its
  // output by.
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(bytes.data(), bytes.size(), &features);
  if (status != VP8_STATUS_OK) {
    return Fail(ErrorCode::kCorrupt, "webp: cannot read the header: {}", StatusText(status));
  }
  MINERU_RETURN_IF_ERROR(CheckDimensions("webp", features.width, features.height, limits));
  CodecHeader header{features.width, features.height, 0};
  const uint64_t pixels = uint64_t(features.width) * uint64_t(features.height);
  // Per pixel: a still image decodes into DecodeStill's RGBA buffer (4 bytes); a lossless (or
  // mixed) bitstream also holds its ARGB pixels (4), an alpha plane its bytes (1). An animation
  // holds WebPAnimDecoder's two RGBA canvases (8) and the frame being decoded (at most the
  // canvas: 4 ARGB + 1 alpha). Besides: the lossy decoder's row caches, under 64 bytes a column.
  const bool lossy = features.format == 1;
  const uint64_t per_pixel =
      features.has_animation ? 13 : 4 + (lossy ? 0 : 4) + (features.has_alpha ? 1 : 0);
  header.scratch_bytes = pixels * per_pixel + uint64_t(features.width) * 64;
  return header;
}

Result<CodecOutput> DecodeWebp(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(bytes.data(), bytes.size(), &features);
  if (status != VP8_STATUS_OK) {
    return Fail(ErrorCode::kCorrupt, "webp: cannot read the header: {}", StatusText(status));
  }
  CodecOutput out;
  out.mode = features.has_alpha ? "RGBA" : "RGB";
  MINERU_ASSIGN_OR_RETURN(out.image,
                          AllocateImage("webp", features.width, features.height, limits));
  const WebPData data{bytes.data(), bytes.size()};
  MINERU_ASSIGN_OR_RETURN(out.orientation, FindOrientation(data, limits));
  if (features.has_animation) {
    MINERU_RETURN_IF_ERROR(DecodeFirstFrame(data, out.image));
  } else {
    MINERU_RETURN_IF_ERROR(DecodeStill(bytes, out.image));
  }
  return out;
}

}  // namespace mineru::image::internal
