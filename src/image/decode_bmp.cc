// SPDX-License-Identifier: Apache-2.0
// BMP, parsed here (Debian has no BMP library), following Pillow 9.4's BmpImagePlugin rule for
// rule so that the files Pillow opens decode to the same pixels and the ones it refuses are
// refused:
//   headers of 12 (OS/2 core), 40, 64, 108 and 124 bytes; height with a top byte of 0xFF means
//   top-down rows; 1, 4 and 8 bits through a palette (BGRX entries, BGR for core headers), 16
//   bits as 5-5-5, 24 bits BGR, 32 bits BGRX; BI_BITFIELDS only with the masks Pillow lists
//   (5-6-5 and 5-5-5; BGRX, XBGR, ABGR, RGBA, BGRA); RLE8 and RLE4 exactly as Pillow's
//   BmpRleDecoder walks them, quirks included: an odd RLE4 absolute run loses its last pixel,
//   a delta escape takes its offsets from the second pair of bytes after it, runs never wrap
//   to the next row, and data ending before the last row is an error.
// Every read is bounds-checked; sizes are checked against the limits before any pixel memory.
// One deliberate difference: a 4-bit file whose palette happens to be Pillow's grey test ramp
// (entries (i, i, i)) decodes through that palette; Pillow misreads such rows as 8-bit.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "image/codecs.h"
#include "image/pixel_modes.h"

namespace mineru::image::internal {
namespace {

constexpr uint32_t kRaw = 0, kRle8 = 1, kRle4 = 2, kBitfields = 3;

class Bytes {
 public:
  explicit Bytes(std::span<const uint8_t> d) : d_(d) {}
  size_t size() const { return d_.size(); }
  bool Has(uint64_t at, uint64_t n) const { return at <= d_.size() && d_.size() - at >= n; }
  uint32_t U16(size_t at) const { return d_[at] | d_[at + 1] << 8; }
  uint32_t U32(size_t at) const {
    return d_[at] | d_[at + 1] << 8 | d_[at + 2] << 16 | uint32_t{d_[at + 3]} << 24;
  }
  const uint8_t* At(size_t at) const { return d_.data() + at; }

 private:
  std::span<const uint8_t> d_;
};

tl::unexpected<Error> Truncated(std::string_view what) {
  return Fail(ErrorCode::kCorrupt, "bmp: file is truncated ({})", what);
}

struct Header {
  uint32_t header_size = 0;
  int64_t width = 0, height = 0;
  uint32_t bits = 0, compression = kRaw;
  uint64_t colors = 0;
  int palette_padding = 4;
  bool top_down = false;
  uint32_t masks[4] = {0, 0, 0, 0};  // r, g, b, a
  uint64_t after_header = 0;         // stream position after the header (and 40-byte masks)
};

Result<Header> ReadHeader(const Bytes& b) {
  Header h;
  if (!b.Has(14, 4)) return Truncated("header");
  h.header_size = b.U32(14);
  const uint32_t hs = h.header_size;
  if (hs != 12 && hs != 40 && hs != 64 && hs != 108 && hs != 124) {
    return Fail(ErrorCode::kUnsupported, "bmp: unsupported header type ({} bytes)", hs);
  }
  if (!b.Has(18, hs - 4)) return Truncated("header");
  h.after_header = 14 + uint64_t{hs};
  if (hs == 12) {
    h.width = b.U16(18);
    h.height = b.U16(20);
    h.bits = b.U16(24);
    h.palette_padding = 3;
  } else {
    h.top_down = *b.At(18 + 7) == 0xff;  // top byte of a negative height
    h.width = b.U32(18);
    h.height = h.top_down ? (int64_t{1} << 32) - b.U32(22) : int64_t{b.U32(22)};
    h.bits = b.U16(28);
    h.compression = b.U32(30);
    h.colors = b.U32(46);
    if (h.compression == kBitfields) {
      if (hs >= 56) {
        for (int i = 0; i < 4; ++i) h.masks[i] = b.U32(54 + 4 * i);
      } else {  // 40-byte header: three masks follow it
        if (!b.Has(h.after_header, 12)) return Truncated("bit field masks");
        for (int i = 0; i < 3; ++i) h.masks[i] = b.U32(h.after_header + 4 * i);
        h.after_header += 12;
      }
    }
  }
  if (h.colors == 0) h.colors = h.bits < 64 ? uint64_t{1} << h.bits : 0;
  return h;
}

// Pillow's raw mode for the pixel layout, or empty when it refuses the file.
std::string_view RawMode(const Header& h) {
  if (h.compression == kBitfields) {
    const uint32_t r = h.masks[0], g = h.masks[1], b = h.masks[2], a = h.masks[3];
    auto is = [&](uint32_t mr, uint32_t mg, uint32_t mb) { return r == mr && g == mg && b == mb; };
    if (h.bits == 32) {
      if (is(0xff0000, 0xff00, 0xff) && a == 0) return "BGRX";
      if (is(0xff000000, 0xff0000, 0xff00) && a == 0) return "XBGR";
      if (is(0xff000000, 0xff0000, 0xff00) && a == 0xff) return "ABGR";
      if (is(0xff, 0xff00, 0xff0000) && a == 0xff000000) return "RGBA";
      if (is(0xff0000, 0xff00, 0xff) && a == 0xff000000) return "BGRA";
      if (is(0, 0, 0) && a == 0) return "BGRA";
    } else if (h.bits == 24 && is(0xff0000, 0xff00, 0xff)) {
      return "BGR";
    } else if (h.bits == 16 && is(0xf800, 0x7e0, 0x1f)) {
      return "BGR;16";
    } else if (h.bits == 16 && is(0x7c00, 0x3e0, 0x1f)) {
      return "BGR;15";
    }
    return "";
  }
  switch (h.bits) {
    case 1:
      return "P;1";
    case 4:
      return "P;4";
    case 8:
      return "P";
    case 16:
      return "BGR;15";
    case 24:
      return "BGR";
    case 32:
      return "BGRX";
    default:
      return "";
  }
}

// One row of pixels in `raw` mode to RGB.
void ConvertRow(std::string_view raw, const uint8_t* in, size_t w, const Palette& palette,
                std::vector<uint8_t>& indices, uint8_t* out) {
  if (raw == "P;1" || raw == "P;4") {
    UnpackBits(in, raw == "P;1" ? 1 : 4, w, /*scale=*/false, indices.data());
    PaletteToRgb(indices.data(), w, palette, out);
  } else if (raw == "P") {
    PaletteToRgb(in, w, palette, out);
  } else if (raw == "BGR;15" || raw == "BGR;16") {
    const bool six = raw == "BGR;16";
    for (size_t x = 0; x < w; ++x, out += 3) {
      const uint32_t p = in[2 * x] | in[2 * x + 1] << 8;
      out[0] = static_cast<uint8_t>((six ? (p >> 11) & 31 : (p >> 10) & 31) * 255 / 31);
      out[1] = static_cast<uint8_t>(six ? ((p >> 5) & 63) * 255 / 63 : ((p >> 5) & 31) * 255 / 31);
      out[2] = static_cast<uint8_t>((p & 31) * 255 / 31);
    }
  } else if (raw == "BGR") {
    BgrToRgb(in, w, 3, out);
  } else if (raw == "BGRX" || raw == "BGRA") {
    BgrToRgb(in, w, 4, out);
  } else if (raw == "XBGR" || raw == "ABGR") {
    BgrToRgb(in + 1, w, 4, out);
  } else {  // RGBA
    DropExtraChannels(in, w, 4, out);
  }
}

// Pillow's BmpRleDecoder: pixel indices in file row order. `pos` is the absolute file offset of
// the pixel data (absolute-mode runs are padded to an even file offset).
Result<std::vector<uint8_t>> DecodeRle(const Bytes& b, uint64_t pos, bool rle4, int64_t width,
                                       int64_t height) {
  const auto xsize = static_cast<uint64_t>(width);
  const uint64_t total = xsize * static_cast<uint64_t>(height);
  std::vector<uint8_t> data;
  data.reserve(total);
  uint64_t x = 0;
  auto read = [&](uint64_t n) -> uint64_t {  // bytes available of n, advancing
    const uint64_t got = pos >= b.size() ? 0 : std::min<uint64_t>(n, b.size() - pos);
    pos += got;
    return got;
  };
  while (data.size() < total) {
    if (!b.Has(pos, 2)) break;
    const uint8_t count = *b.At(pos), byte = *b.At(pos + 1);
    pos += 2;
    if (count != 0) {
      const uint64_t n = x + count > xsize ? (xsize > x ? xsize - x : 0) : count;
      for (uint64_t i = 0; i < n; ++i) {
        data.push_back(rle4 ? static_cast<uint8_t>(i % 2 == 0 ? byte >> 4 : byte & 15) : byte);
      }
      x += n;
    } else if (byte == 0) {  // end of line
      while (data.size() % xsize != 0) data.push_back(0);
      x = 0;
    } else if (byte == 1) {  // end of bitmap
      break;
    } else if (byte == 2) {  // delta
      // Pillow 9.4 reads two bytes, then takes the offsets from the two after them.
      if (!b.Has(pos, 2)) break;
      pos += 2;
      if (!b.Has(pos, 2)) {
        return Fail(ErrorCode::kCorrupt, "bmp: RLE delta cut short by the end of the file");
      }
      const uint64_t right = *b.At(pos), up = *b.At(pos + 1);
      pos += 2;
      data.insert(data.end(), right + up * xsize, 0);
      x = data.size() % xsize;
    } else {                                         // absolute run of `byte` pixels
      const uint64_t want = rle4 ? byte / 2 : byte;  // Pillow drops the last of an odd RLE4 run
      const uint64_t start = pos;
      const uint64_t got = read(want);
      for (uint64_t i = 0; i < got; ++i) {
        const uint8_t v = *b.At(start + i);
        if (rle4) {
          data.push_back(v >> 4);
          data.push_back(v & 15);
        } else {
          data.push_back(v);
        }
      }
      if (got < want) break;
      x += byte;
      if (pos % 2 != 0) ++pos;
    }
  }
  if (data.size() < total) {
    return Fail(ErrorCode::kCorrupt, "bmp: RLE data ends after {} of {} pixels", data.size(),
                total);
  }
  return data;
}

}  // namespace

Result<CodecHeader> ProbeBmp(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  const Bytes b(bytes);
  if (!b.Has(0, 14)) return Truncated("file header");
  MINERU_ASSIGN_OR_RETURN(const Header h, ReadHeader(b));
  MINERU_RETURN_IF_ERROR(CheckDimensions("bmp", h.width, h.height, limits));
  CodecHeader header{h.width, h.height, 0};
  const auto w = static_cast<uint64_t>(h.width);
  // RLE: DecodeRle's indices of the whole image, which a delta escape may overshoot by up to
  // 255 rows and 255 pixels; otherwise one row of indices.
  const bool rle = h.compression == kRle8 || h.compression == kRle4;
  header.scratch_bytes = rle ? w * static_cast<uint64_t>(h.height) + 255 * (w + 1) : w;
  return header;
}

Result<CodecOutput> DecodeBmp(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  const Bytes b(bytes);
  if (!b.Has(0, 14)) return Truncated("file header");
  uint64_t offset = b.U32(10);
  MINERU_ASSIGN_OR_RETURN(const Header h, ReadHeader(b));
  if (offset == 14 + uint64_t{h.header_size} && h.bits <= 8) offset += 4 * h.colors;
  const std::string_view raw = RawMode(h);
  if (h.compression != kRaw && h.compression != kRle8 && h.compression != kRle4 &&
      h.compression != kBitfields) {
    return Fail(ErrorCode::kUnsupported, "bmp: unsupported compression ({})", h.compression);
  }
  if (raw.empty()) {
    return Fail(ErrorCode::kUnsupported, "bmp: unsupported {} ({} bits per pixel)",
                h.compression == kBitfields ? "bit fields layout" : "pixel depth", h.bits);
  }
  const bool rle = h.compression == kRle8 || h.compression == kRle4;
  if (rle && h.bits != (h.compression == kRle8 ? 8u : 4u)) {
    return Fail(ErrorCode::kUnsupported, "bmp: RLE{} with {} bits per pixel",
                h.compression == kRle8 ? 8 : 4, h.bits);
  }
  CodecOutput out;
  out.mode = raw == "RGBA" || raw == "BGRA" || raw == "ABGR" ? "RGBA" : "RGB";
  uint64_t pos = h.after_header;
  Palette palette;
  if (h.bits <= 8) {
    if (h.colors == 0 || h.colors > 65536) {
      return Fail(ErrorCode::kUnsupported, "bmp: unsupported palette size ({})", h.colors);
    }
    // As Pillow's read(): a short palette is simply shorter.
    const uint64_t pad = h.palette_padding;
    const uint64_t available = pos >= b.size() ? 0 : std::min(pad * h.colors, b.size() - pos);
    bool grey = true;
    for (uint64_t i = 0; i < h.colors; ++i) {
      const uint8_t want = static_cast<uint8_t>(h.colors == 2 ? (i == 0 ? 0 : 255) : i);
      const bool whole = (i + 1) * pad <= available || i * pad + 3 <= available;
      if (!whole) {
        grey = false;
        break;
      }
      const uint8_t* e = b.At(pos + i * pad);
      if (e[0] != want || e[1] != want || e[2] != want) grey = false;
      if (i < 256) palette.Set(static_cast<int>(i), e[2], e[1], e[0]);
    }
    out.mode = grey ? (h.colors == 2 ? "1" : "L") : "P";
    pos += available;
  }
  if (offset == 0) offset = pos;
  MINERU_ASSIGN_OR_RETURN(out.image, AllocateImage("bmp", h.width, h.height, limits));
  const auto w = static_cast<size_t>(h.width);
  std::vector<uint8_t> indices(w);
  if (rle) {
    MINERU_ASSIGN_OR_RETURN(std::vector<uint8_t> data,
                            DecodeRle(b, offset, h.compression == kRle4, h.width, h.height));
    for (int64_t r = 0; r < h.height; ++r) {
      const int64_t y = h.top_down ? r : h.height - 1 - r;
      PaletteToRgb(data.data() + static_cast<size_t>(r) * w, w, palette, out.image.row(y));
    }
    return out;
  }
  const uint64_t stride = ((uint64_t{w} * h.bits + 31) >> 3) & ~uint64_t{3};
  const uint64_t row_bytes = (uint64_t{w} * h.bits + 7) / 8;
  if (!b.Has(offset, stride * static_cast<uint64_t>(h.height - 1) + row_bytes)) {
    return Truncated("pixel data");
  }
  for (int64_t r = 0; r < h.height; ++r) {
    const int64_t y = h.top_down ? r : h.height - 1 - r;
    ConvertRow(raw, b.At(offset + stride * static_cast<uint64_t>(r)), w, palette, indices,
               out.image.row(y));
  }
  return out;
}

}  // namespace mineru::image::internal
