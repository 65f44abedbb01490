// SPDX-License-Identifier: Apache-2.0
// TIFF (first page) through libtiff, any compression libtiff decodes (none, LZW, Deflate,
// PackBits, JPEG, CCITT G3/G4, ...), strips or tiles, contiguous or planar samples. Variants and
// the Pillow 9.4 mode each becomes:
//   min-is-black 1/2/4/8-bit       -> "1"/"L" (scaled), 16-bit -> "I;16" (clipped to 255)
//   min-is-white 1/2/4/8-bit       -> "1"/"L", inverted
//   grey + extra sample, 8-bit     -> "LA"
//   RGB 8/16-bit, 3 or 4 samples   -> "RGB"/"RGBA" (16-bit: high byte; extra sample dropped)
//   palette 1/2/4/8-bit            -> "P" (colour map values >> 8)
//   separated (CMYK) 8-bit         -> "CMYK" (Pillow's cmyk2rgb)
//   YCbCr with JPEG compression    -> "RGB" (libjpeg converts, as Pillow asks libtiff to)
// Anything else (floating point or signed samples, other photometrics, YCbCr without JPEG) is
// kUnsupported. Pillow reads the orientation from the TIFF tag itself; so do we.
//
// libtiff reports errors through handlers we register per file (never its global stderr ones)
// and returns error codes; it never longjmps. Its single allocations (directory arrays such as
// strip offsets) are capped by limits.max_metadata_bytes; strip and tile data are read straight
// from the caller's bytes through a read-only mapping.
#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "image/codecs.h"
#include "image/pixel_modes.h"

namespace mineru::image::internal {
namespace {

struct Source {
  std::span<const uint8_t> data;
  uint64_t pos = 0;
  std::string error;  // the first error libtiff reported
};

tmsize_t OnRead(thandle_t h, void* out, tmsize_t size) {
  auto* s = static_cast<Source*>(h);
  if (size < 0 || s->pos >= s->data.size()) return 0;
  const auto n = std::min<uint64_t>(static_cast<uint64_t>(size), s->data.size() - s->pos);
  std::memcpy(out, s->data.data() + s->pos, n);
  s->pos += n;
  return static_cast<tmsize_t>(n);
}
tmsize_t OnWrite(thandle_t, void*, tmsize_t) { return 0; }
toff_t OnSeek(thandle_t h, toff_t offset, int whence) {
  auto* s = static_cast<Source*>(h);
  uint64_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->data.size() : 0;
  s->pos = base + offset;  // reads past the end return nothing
  return s->pos;
}
int OnClose(thandle_t) { return 0; }
toff_t OnSize(thandle_t h) { return static_cast<Source*>(h)->data.size(); }
int OnMap(thandle_t h, void** base, toff_t* size) {
  auto* s = static_cast<Source*>(h);
  *base = const_cast<uint8_t*>(s->data.data());  // libtiff only reads a read-only mapping
  *size = s->data.size();
  return 1;
}
void OnUnmap(thandle_t, void*, toff_t) {}

int OnError(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* s = static_cast<Source*>(user);
  if (s->error.empty()) {
    char text[512];
    std::vsnprintf(text, sizeof(text), fmt, ap);
    s->error = text;
  }
  return 1;  // handled: libtiff's global handlers (stderr) are not called
}
int OnWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

tl::unexpected<Error> TiffError(const Source& s, std::string_view what) {
  return Fail(ErrorCode::kCorrupt, "tiff: {}{}{}", what, s.error.empty() ? "" : ": ", s.error);
}

struct Layout {
  uint32_t width = 0, height = 0;
  uint16_t spp = 1, bps = 1, photometric = 0, planar = PLANARCONFIG_CONTIG;
  bool premultiplied = false;  // RGB + associated alpha (Pillow's "RGBa" raw mode)
  uint16_t sample_format = SAMPLEFORMAT_UINT, compression = COMPRESSION_NONE;
};

// Pillow's mode for the layout, or empty when unsupported.
std::string_view ModeOf(const Layout& l) {
  const bool low_bits = l.bps == 1 || l.bps == 2 || l.bps == 4 || l.bps == 8;
  switch (l.photometric) {
    case PHOTOMETRIC_MINISWHITE:
    case PHOTOMETRIC_MINISBLACK:
      if (l.spp == 1 && low_bits) return l.bps == 1 ? "1" : "L";
      if (l.spp == 1 && l.bps == 16 && l.photometric == PHOTOMETRIC_MINISBLACK) return "I;16";
      if (l.spp == 2 && l.bps == 8 && l.photometric == PHOTOMETRIC_MINISBLACK) return "LA";
      return "";
    case PHOTOMETRIC_RGB:
      if ((l.bps == 8 || l.bps == 16) && (l.spp == 3 || l.spp == 4)) {
        return l.spp == 3 ? "RGB" : "RGBA";
      }
      return "";
    case PHOTOMETRIC_PALETTE:
      return l.spp == 1 && low_bits ? "P" : "";
    case PHOTOMETRIC_SEPARATED:
      return l.spp == 4 && l.bps == 8 ? "CMYK" : "";
    case PHOTOMETRIC_YCBCR:
      return l.compression == COMPRESSION_JPEG && l.bps == 8 && l.spp == 3 &&
                     l.planar == PLANARCONFIG_CONTIG
                 ? "RGB"
                 : "";
    default:
      return "";
  }
}

// Reads the whole first page as rows of samples in file order: one buffer per plane (one
// buffer in all when samples are contiguous), each `height` rows of `row_bytes`.
Status ReadPlanes(TIFF* tif, const Source& src, const Layout& l, size_t row_bytes,
                  std::vector<std::vector<uint8_t>>& planes) {
  const int num_planes = l.planar == PLANARCONFIG_SEPARATE ? l.spp : 1;
  planes.assign(num_planes, std::vector<uint8_t>(row_bytes * l.height));
  if (TIFFIsTiled(tif)) {
    uint32_t tw = 0, th = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
    const tmsize_t tile_size = TIFFTileSize(tif);
    const tmsize_t tile_row = TIFFTileRowSize(tif);
    if (tw == 0 || th == 0 || tile_size <= 0 || tile_row <= 0) return TiffError(src, "tiles");
    // The tile buffer is ours, not libtiff's (its allocation cap does not apply), and its size
    // comes from the tags alone: a 155-byte file declaring 1537 x 4259845 tiles for a 155 x 5
    // image asked for 13 GB. A tile needs to cover no more than the image padded to the next
    // multiple of 16 (tile sizes are multiples of 16); encoders that use one fixed size for
    // small images too (libtiff's tiffcp: 256 x 256) stay within kMaxTilePixelsAnyImage.
    constexpr uint64_t kMaxTilePixelsAnyImage = uint64_t{1} << 20;  // 1024 x 1024
    const auto pad16 = [](uint64_t v) { return (v + 15) / 16 * 16; };
    if (uint64_t{tw} * th > std::max(pad16(l.width) * pad16(l.height), kMaxTilePixelsAnyImage)) {
      return Fail(ErrorCode::kCorrupt, "tiff: tiles of {} x {} pixels for an image of {} x {}", tw,
                  th, l.width, l.height);
    }
    std::vector<uint8_t> tile(static_cast<size_t>(tile_size));
    const uint64_t bits_per_pixel = uint64_t{l.bps} * (num_planes == 1 ? l.spp : 1);
    for (int p = 0; p < num_planes; ++p) {
      for (uint32_t y = 0; y < l.height; y += th) {
        for (uint32_t x = 0; x < l.width; x += tw) {
          const uint32_t index = TIFFComputeTile(tif, x, y, 0, static_cast<uint16_t>(p));
          if (TIFFReadEncodedTile(tif, index, tile.data(), tile_size) < 0) {
            return TiffError(src, "tile data");
          }
          // Tile widths are multiples of 16, so every tile starts on a byte.
          const size_t offset = static_cast<size_t>(x * bits_per_pixel / 8);
          const size_t bytes = std::min<size_t>(static_cast<size_t>(tile_row), row_bytes - offset);
          for (uint32_t r = 0; r < th && y + r < l.height; ++r) {
            std::memcpy(planes[p].data() + (y + r) * row_bytes + offset,
                        tile.data() + static_cast<size_t>(r) * tile_row, bytes);
          }
        }
      }
    }
    return OkStatus();
  }
  uint32_t rows_per_strip = 0;
  TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
  rows_per_strip = std::clamp<uint32_t>(rows_per_strip, 1, l.height);
  const uint32_t strips_per_plane = (l.height + rows_per_strip - 1) / rows_per_strip;
  for (int p = 0; p < num_planes; ++p) {
    for (uint32_t s = 0; s < strips_per_plane; ++s) {
      const uint32_t first = s * rows_per_strip;
      const uint32_t rows = std::min(rows_per_strip, l.height - first);
      const tmsize_t want = static_cast<tmsize_t>(rows * row_bytes);
      const tmsize_t got =
          TIFFReadEncodedStrip(tif, s + static_cast<uint32_t>(p) * strips_per_plane,
                               planes[p].data() + first * row_bytes, want);
      if (got < want) return TiffError(src, got < 0 ? "strip data" : "strip data is truncated");
    }
  }
  return OkStatus();
}

// Converts rows of file samples to RGB.
void ConvertRows(const Layout& l, std::string_view mode, const Palette& palette,
                 const std::vector<std::vector<uint8_t>>& planes, size_t row_bytes,
                 RgbImage& image) {
  const size_t w = l.width;
  std::vector<uint8_t> grey(w), pixel_bytes(w * 4);
  for (uint32_t y = 0; y < l.height; ++y) {
    uint8_t* out = image.row(y);
    auto sample_row = [&](int plane) { return planes[plane].data() + y * row_bytes; };
    const uint8_t* in = sample_row(0);
    if (mode == "1" || mode == "L" || mode == "P") {
      const bool index = mode == "P";
      if (l.bps == 8) {
        std::memcpy(grey.data(), in, w);
      } else {
        UnpackBits(in, l.bps, w, /*scale=*/!index, grey.data());
      }
      if (l.photometric == PHOTOMETRIC_MINISWHITE) {
        for (uint8_t& v : grey) v = static_cast<uint8_t>(255 - v);
      }
      if (index) {
        PaletteToRgb(grey.data(), w, palette, out);
      } else {
        GreyToRgb(grey.data(), w, 1, out);
      }
    } else if (mode == "I;16") {
      Grey16ClipToRgb(reinterpret_cast<const uint16_t*>(in), w, out);  // libtiff byte-swaps
    } else {
      // Gather the channels used of each pixel (high bytes of 16-bit samples) as bytes.
      const int channels = mode == "LA" ? 1 : mode == "CMYK" || l.premultiplied ? 4 : 3;
      for (size_t x = 0; x < w; ++x) {
        for (int c = 0; c < channels; ++c) {
          const int plane = l.planar == PLANARCONFIG_SEPARATE ? c : 0;
          const size_t index = l.planar == PLANARCONFIG_SEPARATE ? x : x * l.spp + c;
          const uint8_t* row = sample_row(plane);
          pixel_bytes[x * 4 + c] =
              l.bps == 16 ? static_cast<uint8_t>(reinterpret_cast<const uint16_t*>(row)[index] >> 8)
                          : row[index];
        }
      }
      if (channels == 1) {
        GreyToRgb(pixel_bytes.data(), w, 4, out);
      } else if (mode == "CMYK") {
        CmykToRgb(pixel_bytes.data(), w, out);
      } else if (l.premultiplied) {
        // Pillow's unpackRGBa: divide by alpha (truncating), clip; alpha 0 gives black.
        for (size_t x = 0; x < w; ++x) {
          const uint8_t* p = &pixel_bytes[x * 4];
          const int a = p[3];
          for (int c = 0; c < 3; ++c) {
            out[x * 3 + c] = a == 0 ? 0 : static_cast<uint8_t>(std::min(p[c] * 255 / a, 255));
          }
        }
      } else {
        DropExtraChannels(pixel_bytes.data(), w, 4, out);
      }
    }
  }
}

struct TiffCloser {
  TIFF* tif;
  ~TiffCloser() {
    if (tif != nullptr) TIFFClose(tif);
  }
};

// Opens `src` and reads its first directory, with libtiff's single allocations capped by
// limits.max_metadata_bytes and its messages kept in `src`.
Result<TIFF*> Open(Source& src, const DecodeLimits& limits) {
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  if (options == nullptr) return Fail(ErrorCode::kResourceExhausted, "tiff: out of memory");
  TIFFOpenOptionsSetMaxSingleMemAlloc(
      options, static_cast<tmsize_t>(std::min<uint64_t>(
                   std::max<uint64_t>(limits.max_metadata_bytes, 1), uint64_t{1} << 62)));
  TIFFOpenOptionsSetErrorHandlerExtR(options, OnError, &src);
  TIFFOpenOptionsSetWarningHandlerExtR(options, OnWarning, nullptr);
  TIFF* tif = TIFFClientOpenExt("tiff", "r", &src, OnRead, OnWrite, OnSeek, OnClose, OnSize, OnMap,
                                OnUnmap, options);
  TIFFOpenOptionsFree(options);
  if (tif == nullptr) return TiffError(src, "cannot read the header");
  return tif;
}

}  // namespace

Result<CodecHeader> ProbeTiff(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  Source src{bytes, 0, {}};
  MINERU_ASSIGN_OR_RETURN(TIFF * opened, Open(src, limits));
  TiffCloser closer{opened};
  TIFF* tif = closer.tif;
  uint32_t width = 0, height = 0;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width) ||
      !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height)) {
    return TiffError(src, "no image size");
  }
  MINERU_RETURN_IF_ERROR(CheckDimensions("tiff", width, height, limits));
  uint16_t spp = 1, bps = 1, planar = PLANARCONFIG_CONTIG;
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  // DecodeTiff's planes hold the whole page as file samples (one plane per sample when they are
  // separate), plus one decoded tile or strip and two rows of conversion buffers. Computed from
  // the tags rather than TIFFScanlineSize so that absurd values count in full instead of failing.
  const bool separate = planar == PLANARCONFIG_SEPARATE;
  const uint64_t row_bytes = (uint64_t{width} * bps * (separate ? 1 : spp) + 7) / 8;
  const uint64_t planes = row_bytes * height * (separate ? spp : 1);
  const tmsize_t piece = TIFFIsTiled(tif) ? TIFFTileSize(tif) : TIFFStripSize(tif);
  CodecHeader header{width, height, 0};
  header.scratch_bytes =
      planes + static_cast<uint64_t>(std::max<tmsize_t>(piece, 0)) + uint64_t{width} * 5;
  return header;
}

Result<CodecOutput> DecodeTiff(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  Source src{bytes, 0, {}};
  MINERU_ASSIGN_OR_RETURN(TIFF * opened, Open(src, limits));
  TiffCloser closer{opened};
  TIFF* tif = closer.tif;

  Layout l;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &l.width) ||
      !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &l.height)) {
    return TiffError(src, "no image size");
  }
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &l.spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &l.bps);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &l.planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &l.sample_format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &l.compression);
  uint16_t num_extra = 0;
  uint16_t* extra_types = nullptr;
  if (TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &num_extra, &extra_types) && num_extra > 0) {
    l.premultiplied = extra_types[0] == EXTRASAMPLE_ASSOCALPHA;
  }
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &l.photometric)) {
    return Fail(ErrorCode::kUnsupported, "tiff: no photometric interpretation");
  }
  l.premultiplied = l.premultiplied && l.photometric == PHOTOMETRIC_RGB && l.spp == 4;
  CodecOutput out;
  out.mode = l.sample_format == SAMPLEFORMAT_UINT ? ModeOf(l) : "";
  if (out.mode.empty()) {
    return Fail(ErrorCode::kUnsupported,
                "tiff: photometric {} with {} sample(s) of {} bits (format {}{}) is not supported",
                l.photometric, l.spp, l.bps, l.sample_format,
                l.photometric == PHOTOMETRIC_YCBCR ? ", YCbCr needs JPEG compression" : "");
  }
  uint16_t orientation = 0;
  if (TIFFGetField(tif, TIFFTAG_ORIENTATION, &orientation)) out.orientation = orientation;
  MINERU_ASSIGN_OR_RETURN(out.image, AllocateImage("tiff", l.width, l.height, limits));
  Palette palette;
  if (out.mode == "P") {
    uint16_t *r = nullptr, *g = nullptr, *b = nullptr;
    if (!TIFFGetField(tif, TIFFTAG_COLORMAP, &r, &g, &b)) {
      return Fail(ErrorCode::kCorrupt, "tiff: palette image without a colour map");
    }
    for (int i = 0; i < (1 << l.bps); ++i) {
      palette.Set(i, static_cast<uint8_t>(r[i] >> 8), static_cast<uint8_t>(g[i] >> 8),
                  static_cast<uint8_t>(b[i] >> 8));
    }
  }
  if (l.photometric == PHOTOMETRIC_YCBCR) {
    // libjpeg converts YCbCr to RGB and undoes the subsampling, as Pillow asks.
    TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
  }
  const tmsize_t scanline = TIFFScanlineSize(tif);
  const uint64_t bits_per_row =
      uint64_t{l.width} * l.bps * (l.planar == PLANARCONFIG_SEPARATE ? 1 : l.spp);
  if (scanline <= 0 || static_cast<uint64_t>(scanline) != (bits_per_row + 7) / 8) {
    return TiffError(src, "inconsistent row size");
  }
  std::vector<std::vector<uint8_t>> planes;
  MINERU_RETURN_IF_ERROR(ReadPlanes(tif, src, l, static_cast<size_t>(scanline), planes));
  ConvertRows(l, out.mode, palette, planes, static_cast<size_t>(scanline), out.image);
  return out;
}

}  // namespace mineru::image::internal
