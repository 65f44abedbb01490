// SPDX-License-Identifier: Apache-2.0
// PNG through libpng, converted as Pillow 9.4 converts the mode its PngImagePlugin gives each
// (bit depth, colour type):
//   grey 1 -> "1", grey 2/4/8 -> "L" (scaled to 0..255), grey 16 -> "I" (clipped to 255),
//   grey+alpha 8 -> "LA", grey+alpha 16 -> "RGBA" (high byte), RGB 8/16 -> "RGB" (high byte),
//   RGBA 8/16 -> "RGBA" (high byte), palette 1/2/4/8 -> "P" (tRNS ignored for RGB).
// Ancillary chunks are not interpreted beyond the orientation (eXIf, then ImageMagick's
// "Raw profile type exif" text, then XMP), before or after the image data: Pillow's PNG
// getexif() loads the whole file when no eXIf came before the image data. gAMA, sBIT and iCCP
// are ignored, as Pillow ignores them. Chunks after the image data are read leniently (a file
// cut after its last image data still decodes, as in Pillow).
//
// libpng reports errors by calling our handler, which longjmps back into ReadPng. ReadPng
// therefore keeps no C++ object with a destructor alive across a libpng call: all state lives
// in PngJob, owned by the caller.
#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <string>
#include <vector>

#include "image/codecs.h"
#include "image/pixel_modes.h"

namespace mineru::image::internal {
namespace {

struct PngJob {
  std::span<const uint8_t> data;
  size_t pos = 0;
  const DecodeLimits* limits = nullptr;
  std::string error;
  ErrorCode code = ErrorCode::kCorrupt;
  CodecOutput out;
  Palette palette;
  std::vector<uint8_t> buffer;          // one row, or the whole image when interlaced
  std::vector<png_bytep> row_pointers;  // interlaced only
};

void OnError(png_structp png, png_const_charp message) {
  auto* job = static_cast<PngJob*>(png_get_error_ptr(png));
  job->error = fmt::format("png: {}", message);
  png_longjmp(png, 1);
}

void OnWarning(png_structp, png_const_charp) {}  // warnings are not errors; never print them

void OnRead(png_structp png, png_bytep out, size_t length) {
  auto* job = static_cast<PngJob*>(png_get_io_ptr(png));
  if (job->data.size() - job->pos < length) png_error(png, "file is truncated");
  std::memcpy(out, job->data.data() + job->pos, length);
  job->pos += length;
}

// The orientation Pillow's getexif would find in the chunks read (before and after the image
// data; a later text chunk with the same key wins, as in Pillow's info dict).
int FindOrientation(png_structp png, png_infop info) {
  int orientation = kExifOrientationAbsent;
  png_uint_32 exif_size = 0;
  png_bytep exif = nullptr;
  png_textp texts = nullptr;
  int num_texts = 0;
  png_get_text(png, info, &texts, &num_texts);
  auto last_text = [&](const char* key) -> const png_text* {
    const png_text* found = nullptr;
    for (int i = 0; i < num_texts; ++i) {
      if (texts[i].key != nullptr && std::strcmp(texts[i].key, key) == 0) found = &texts[i];
    }
    return found;
  };
  if (png_get_eXIf_1(png, info, &exif_size, &exif) != 0 && exif != nullptr) {
    orientation = ExifOrientation(std::span<const uint8_t>(exif, exif_size));
  } else if (const png_text* raw = last_text("Raw profile type exif")) {
    const size_t length = raw->compression > 0 ? raw->itxt_length : raw->text_length;
    orientation = RawProfileExifOrientation(std::string_view(raw->text, length));
  }
  if (orientation == kExifOrientationAbsent) {
    if (const png_text* xmp = last_text("XML:com.adobe.xmp")) {
      const size_t length = xmp->compression > 0 ? xmp->itxt_length : xmp->text_length;
      orientation = XmpOrientation(std::string_view(xmp->text, length));
    }
  }
  return orientation;
}

// Allocates the output after the size check; false with job->error on failure. Not a libpng
// call, so it may build C++ objects freely.
bool Allocate(PngJob* job, int64_t width, int64_t height, size_t row_bytes, bool interlaced) {
  auto image = AllocateImage("png", width, height, *job->limits);
  if (!image) {
    job->error = image.error().message;
    job->code = image.error().code;
    return false;
  }
  job->out.image = std::move(*image);
  if (interlaced) {
    job->buffer.resize(row_bytes * static_cast<size_t>(height));
    job->row_pointers.resize(static_cast<size_t>(height));
    for (int64_t y = 0; y < height; ++y) {
      job->row_pointers[y] = job->buffer.data() + row_bytes * static_cast<size_t>(y);
    }
  } else {
    job->buffer.resize(row_bytes);
  }
  return true;
}

void ConvertRow(const PngJob& job, int color_type, int bit_depth, const uint8_t* in, uint8_t* out) {
  const auto w = static_cast<size_t>(job.out.image.width);
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY:
      if (bit_depth == 16) {
        for (size_t x = 0; x < w; ++x) {
          const uint16_t v = static_cast<uint16_t>(in[2 * x] << 8 | in[2 * x + 1]);
          Grey16ClipToRgb(&v, 1, out + 3 * x);
        }
      } else {
        GreyToRgb(in, w, 1, out);
      }
      break;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      GreyToRgb(in, w, 2, out);
      break;
    case PNG_COLOR_TYPE_PALETTE:
      PaletteToRgb(in, w, job.palette, out);
      break;
    case PNG_COLOR_TYPE_RGB:
      std::memcpy(out, in, w * 3);
      break;
    default:  // PNG_COLOR_TYPE_RGB_ALPHA
      DropExtraChannels(in, w, 4, out);
      break;
  }
}

// Every libpng call happens here; see the file comment about longjmp.
bool ReadPng(png_structp png, png_infop info, PngJob* job) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_read_fn(png, job, OnRead);
  // Our own check below gives the clearer message; libpng's are set to the format's maximum.
  png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  // Bounds what libpng inflates from compressed text and ICC chunks (0 would mean no limit).
  png_set_chunk_malloc_max(png, std::max<uint64_t>(job->limits->max_metadata_bytes, 1));
  png_read_info(png, info);
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
  png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, nullptr, nullptr);
  switch (color_type) {
    case PNG_COLOR_TYPE_PALETTE: {
      job->out.mode = "P";
      png_colorp entries = nullptr;
      int num = 0;
      if (png_get_PLTE(png, info, &entries, &num) != 0) {
        for (int i = 0; i < num && i < 256; ++i) {
          job->palette.Set(i, entries[i].red, entries[i].green, entries[i].blue);
        }
      }
      if (bit_depth < 8) png_set_packing(png);  // one index per byte
      break;
    }
    case PNG_COLOR_TYPE_GRAY:
      job->out.mode = bit_depth == 1 ? "1" : bit_depth == 16 ? "I" : "L";
      if (bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);  // v * 255 / (2^bits - 1)
      break;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      job->out.mode = bit_depth == 16 ? "RGBA" : "LA";
      break;
    case PNG_COLOR_TYPE_RGB:
      job->out.mode = "RGB";
      break;
    default:
      job->out.mode = "RGBA";
      break;
  }
  // Pillow's ";16B" raw modes keep the high byte; libpng's strip_16 does the same. 16-bit grey
  // stays 16-bit: Pillow clips it instead.
  if (bit_depth == 16 && color_type != PNG_COLOR_TYPE_GRAY) png_set_strip_16(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  if (!Allocate(job, width, height, row_bytes, passes > 1)) return false;
  if (passes > 1) {
    png_read_image(png, job->row_pointers.data());
    for (png_uint_32 y = 0; y < height; ++y) {
      ConvertRow(*job, color_type, bit_depth, job->row_pointers[y], job->out.image.row(y));
    }
  } else {
    for (png_uint_32 y = 0; y < height; ++y) {
      png_read_row(png, job->buffer.data(), nullptr);
      ConvertRow(*job, color_type, bit_depth, job->buffer.data(), job->out.image.row(y));
    }
  }
  return true;
}

// The chunks after the image data, for the orientation; an error here leaves what was read.
void ReadEnd(png_structp png, png_infop info) {
  if (setjmp(png_jmpbuf(png))) return;
  png_read_end(png, info);
}

// limits.max_metadata_bytes applies to every ancillary chunk, by its declared length, before
// libpng reads anything (libpng's own chunk limit only covers what it decompresses).
Status CheckChunkSizes(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  for (size_t pos = 8; pos + 8 <= bytes.size();) {
    const uint32_t length =
        uint32_t{bytes[pos]} << 24 | bytes[pos + 1] << 16 | bytes[pos + 2] << 8 | bytes[pos + 3];
    const std::string_view type(reinterpret_cast<const char*>(&bytes[pos + 4]), 4);
    if (type == "IEND") break;
    // Ancillary chunks (lower-case first letter); the critical ones are bounded by the format.
    const bool ancillary = (type[0] & 0x20) != 0;
    if (ancillary && length > limits.max_metadata_bytes) {
      return Fail(ErrorCode::kResourceExhausted,
                  "png: {} chunk of {} bytes is over the metadata limit of {} bytes",
                  std::string(type), length, limits.max_metadata_bytes);
    }
    pos += size_t{length} + 12;  // a bad length is libpng's to report
  }
  return OkStatus();
}

uint32_t ReadBe32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

// Samples per pixel of a colour type, or 0 for a type PNG does not define; `depth_ok` tells
// whether the bit depth is one the type allows (PNG 1.2 table 11.1, which libpng enforces).
int Channels(int color_type, int depth, bool* depth_ok) {
  const bool low = depth == 1 || depth == 2 || depth == 4 || depth == 8;
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY:
      *depth_ok = low || depth == 16;
      return 1;
    case PNG_COLOR_TYPE_RGB:
      *depth_ok = depth == 8 || depth == 16;
      return 3;
    case PNG_COLOR_TYPE_PALETTE:
      *depth_ok = low;
      return 1;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      *depth_ok = depth == 8 || depth == 16;
      return 2;
    case PNG_COLOR_TYPE_RGB_ALPHA:
      *depth_ok = depth == 8 || depth == 16;
      return 4;
    default:
      *depth_ok = false;
      return 0;
  }
}

}  // namespace

// The IHDR chunk, which the format requires first (libpng refuses a file without it there), read
// by hand: png_read_info would also read and inflate every chunk before the image data.
Result<CodecHeader> ProbePng(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  if (bytes.size() < 33) return Fail(ErrorCode::kCorrupt, "png: file is truncated (header)");
  if (ReadBe32(&bytes[8]) != 13 || std::memcmp(&bytes[12], "IHDR", 4) != 0) {
    return Fail(ErrorCode::kCorrupt, "png: the first chunk is not a 13-byte IHDR");
  }
  const uint32_t width = ReadBe32(&bytes[16]), height = ReadBe32(&bytes[20]);
  const int depth = bytes[24], color_type = bytes[25], interlace = bytes[28];
  if (width > PNG_UINT_31_MAX || height > PNG_UINT_31_MAX) {
    return Fail(ErrorCode::kCorrupt, "png: image size {} x {} is out of the format's range", width,
                height);
  }
  bool depth_ok = false;
  const int channels = Channels(color_type, depth, &depth_ok);
  if (channels == 0 || !depth_ok || interlace > 1) {
    return Fail(ErrorCode::kCorrupt,
                "png: invalid IHDR (colour type {}, bit depth {}, interlace {})", color_type, depth,
                interlace);
  }
  MINERU_RETURN_IF_ERROR(CheckDimensions("png", width, height, limits));
  CodecHeader header{width, height, 0};
  // libpng's two raw rows (the current and the previous one, for filtering), then ReadPng's
  // buffer: rows after png_set_strip_16 / png_set_packing (16-bit grey keeps 2 bytes), one row
  // or, interlaced, the whole image.
  const uint64_t raw_row = (uint64_t{width} * channels * depth + 7) / 8 + 1;
  const uint64_t out_row =
      uint64_t{width} * channels * (depth == 16 && color_type == PNG_COLOR_TYPE_GRAY ? 2 : 1);
  header.scratch_bytes = 2 * raw_row + (interlace == 1 ? out_row * height : out_row);
  return header;
}

Result<CodecOutput> DecodePng(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  MINERU_RETURN_IF_ERROR(CheckChunkSizes(bytes, limits));
  PngJob job;
  job.data = bytes;
  job.limits = &limits;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, OnError, OnWarning);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return Fail(ErrorCode::kResourceExhausted, "png: cannot create a decoder (out of memory)");
  }
  const bool ok = ReadPng(png, info, &job);
  if (ok) {
    ReadEnd(png, info);
    job.out.orientation = FindOrientation(png, info);
  }
  png_destroy_read_struct(&png, &info, nullptr);
  if (!ok) {
    if (job.error.empty()) job.error = "png: decoding failed";
    return MakeError(job.code, job.error);
  }
  return std::move(job.out);
}

}  // namespace mineru::image::internal
