// SPDX-License-Identifier: Apache-2.0
// Decoding PNG, JPEG, WebP, TIFF, BMP and GIF (first frame) into 8-bit RGB exactly as Pillow 9.4
// does it (Image.open, then ImageOps.exif_transpose, then convert("RGB")), with the Debian codec
// libraries and limits checked before any pixel memory is allocated.
//
// Every input is untrusted: a bad file returns kCorrupt (malformed or truncated), kUnsupported
// (a valid variant we do not decode) or kResourceExhausted (a limit), never aborts, never
// writes to stderr. docs/IMAGES.md lists each format's variants and how each maps to RGB.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "image/image.h"

namespace mineru::image {

enum class ImageFormat { kUnknown, kPng, kJpeg, kWebp, kTiff, kBmp, kGif };

// "png", "jpeg", "webp", "tiff", "bmp", "gif", "unknown".
std::string_view FormatName(ImageFormat format);
// "image/png", ...; "application/octet-stream" for kUnknown.
std::string_view FormatMimeType(ImageFormat format);

// The format from the first bytes (magic numbers; file names are never consulted).
ImageFormat SniffFormat(std::span<const uint8_t> bytes);

// Default limits. Pixels: Pillow's MAX_IMAGE_PIXELS (a quarter GiB at 3 bytes per pixel), the
// size Pillow warns about as a possible decompression bomb. Sides: 65535, the largest JPEG, GIF
// and WebP can declare. Bytes: far above any page scan, far below memory. Scans: a real
// progressive JPEG has about 10; 500 is the cap NVIDIA DALI uses against scan bombs (each scan
// re-walks every coefficient of the image).
inline constexpr uint64_t kDefaultMaxImageBytes = uint64_t{256} << 20;
inline constexpr int64_t kDefaultMaxImageWidth = 65535;
inline constexpr int64_t kDefaultMaxImageHeight = 65535;
inline constexpr int64_t kDefaultMaxImagePixels = 89478485;
inline constexpr int kDefaultMaxJpegScans = 500;
// Metadata: PNG chunks other than image data (text, ICC profiles, EXIF) and WebP's EXIF chunk.
// Real ones are kilobytes; ICC profiles reach a few hundred.
inline constexpr uint64_t kDefaultMaxImageMetadataBytes = uint64_t{16} << 20;

struct DecodeLimits {
  uint64_t max_bytes = kDefaultMaxImageBytes;  // size of the encoded file
  int64_t max_width = kDefaultMaxImageWidth;   // declared width (before EXIF rotation)
  int64_t max_height = kDefaultMaxImageHeight;
  int64_t max_pixels = kDefaultMaxImagePixels;                  // declared width x height
  int max_jpeg_scans = kDefaultMaxJpegScans;                    // scans in one JPEG
  uint64_t max_metadata_bytes = kDefaultMaxImageMetadataBytes;  // one metadata chunk
};

// Fails with kResourceExhausted when a declared size breaks a limit, naming the format and the
// limit ("png: 70000 x 10 pixels: width is over the limit of 65535"); kCorrupt for sizes < 1.
Status CheckDimensions(std::string_view format, int64_t width, int64_t height,
                       const DecodeLimits& limits);

struct DecodeOptions {
  DecodeLimits limits;
  // ImageOps.exif_transpose: turn the pixels upright by the EXIF orientation tag (JPEG APP1,
  // PNG eXIf or "Raw profile type exif" text or XMP, WebP EXIF chunk, TIFF Orientation tag).
  // MinerU applies it to every image it reads.
  bool apply_exif_orientation = true;
};

struct DecodedImage {
  RgbImage image;
  ImageFormat format = ImageFormat::kUnknown;
  // Pillow's mode of the decoded file before convert("RGB"): "RGB", "RGBA", "L", "LA", "P",
  // "1", "I", "I;16", "CMYK".
  std::string source_mode;
  int orientation = 1;  // EXIF orientation found (1-8); 1 when absent or not applied
};

Result<DecodedImage> DecodeImage(std::span<const uint8_t> bytes, const DecodeOptions& options = {});

// Reads the file (refusing files over limits.max_bytes before reading them) and decodes it.
// Error messages start with the path. A file whose bytes match no format is named in the words
// of the type its extension promises: "a.png: not a PNG file (unknown magic bytes)" ("empty
// file, not a PNG" when it is empty); with no image extension, DecodeImage's text.
Result<DecodedImage> DecodeImageFile(const std::string& path, const DecodeOptions& options = {});

}  // namespace mineru::image
