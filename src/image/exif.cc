// SPDX-License-Identifier: Apache-2.0
#include "image/exif.h"

#include <cstring>
#include <string>
#include <vector>

namespace mineru::image {
namespace {

constexpr uint16_t kOrientationTag = 0x0112;

class Reader {
 public:
  Reader(std::span<const uint8_t> data, bool big_endian) : data_(data), big_(big_endian) {}
  bool U16(size_t at, uint32_t* v) const {
    if (at > data_.size() || data_.size() - at < 2) return false;
    const uint8_t* p = data_.data() + at;
    *v = big_ ? (p[0] << 8 | p[1]) : (p[1] << 8 | p[0]);
    return true;
  }
  bool U32(size_t at, uint32_t* v) const {
    if (at > data_.size() || data_.size() - at < 4) return false;
    const uint8_t* p = data_.data() + at;
    *v = big_ ? (uint32_t{p[0]} << 24 | p[1] << 16 | p[2] << 8 | p[3])
              : (uint32_t{p[3]} << 24 | p[2] << 16 | p[1] << 8 | p[0]);
    return true;
  }

 private:
  std::span<const uint8_t> data_;
  bool big_;
};

}  // namespace

int ExifOrientation(std::span<const uint8_t> exif) {
  static constexpr uint8_t kExifPrefix[6] = {'E', 'x', 'i', 'f', 0, 0};
  if (exif.size() >= 6 && std::memcmp(exif.data(), kExifPrefix, 6) == 0) exif = exif.subspan(6);
  if (exif.size() < 8) return kExifOrientationAbsent;
  bool big;
  if (exif[0] == 'I' && exif[1] == 'I' && exif[2] == 0x2a && exif[3] == 0) {
    big = false;
  } else if (exif[0] == 'M' && exif[1] == 'M' && exif[2] == 0 && exif[3] == 0x2a) {
    big = true;
  } else {
    return kExifOrientationAbsent;  // not a classic TIFF header (BigTIFF EXIF is not in use)
  }
  const Reader r(exif, big);
  uint32_t ifd = 0, count = 0;
  if (!r.U32(4, &ifd) || !r.U16(ifd, &count)) return kExifOrientationAbsent;
  int orientation = kExifOrientationAbsent;
  // Entries are read in order; a later duplicate wins (Pillow keeps a dict keyed by tag). An
  // entry whose value lies past the end stops the walk, as Pillow's truncated read does.
  for (uint32_t i = 0; i < count; ++i) {
    const size_t entry = size_t{ifd} + 2 + size_t{i} * 12;
    uint32_t tag = 0, type = 0, n = 0;
    if (entry + 12 > exif.size()) break;
    if (!r.U16(entry, &tag) || !r.U16(entry + 2, &type) || !r.U32(entry + 4, &n)) break;
    if (type < 1 || type > 12) continue;  // unknown types are skipped: the tag stays absent
    static constexpr uint8_t kUnitSize[13] = {0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8};
    const uint64_t size = uint64_t{n} * kUnitSize[type];
    size_t at = entry + 8;
    if (size > 4) {
      uint32_t offset = 0;
      if (!r.U32(entry + 8, &offset)) break;
      if (offset > exif.size() || exif.size() - offset < size) break;
      at = offset;
    }
    if (tag != kOrientationTag || n == 0) continue;
    // Present from here on. Only integer types give an orientation; Pillow takes the first
    // value of a tag that has several.
    uint32_t value = 0;
    bool integer = true;
    switch (type) {
      case 1:  // BYTE
        value = exif[at];
        break;
      case 6:  // SBYTE
        value = static_cast<uint32_t>(static_cast<int8_t>(exif[at]));
        break;
      case 3:  // SHORT
        r.U16(at, &value);
        break;
      case 8:  // SSHORT
        r.U16(at, &value);
        value = static_cast<uint32_t>(static_cast<int16_t>(value));
        break;
      case 4:  // LONG
      case 9:  // SLONG
        r.U32(at, &value);
        break;
      default:
        integer = false;
    }
    const auto signed_value = static_cast<int32_t>(value);
    orientation = integer && signed_value >= 1 && signed_value <= 8 ? signed_value : 0;
  }
  return orientation;
}

int XmpOrientation(std::string_view xmp) {
  static constexpr std::string_view kKey = "tiff:Orientation";
  for (size_t at = xmp.find(kKey); at != std::string_view::npos; at = xmp.find(kKey, at + 1)) {
    size_t p = at + kKey.size();
    if (p < xmp.size() && xmp[p] == '>') {
      ++p;
    } else if (p + 1 < xmp.size() && xmp[p] == '=' && xmp[p + 1] == '"') {
      p += 2;
    } else {
      continue;
    }
    if (p < xmp.size() && xmp[p] >= '0' && xmp[p] <= '9') return xmp[p] - '0';
  }
  return kExifOrientationAbsent;
}

int RawProfileExifOrientation(std::string_view text) {
  // Skip the first three lines ("", "exif", byte count).
  size_t start = 0;
  for (int line = 0; line < 3; ++line) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return kExifOrientationAbsent;
    start = nl + 1;
  }
  std::vector<uint8_t> bytes;
  bytes.reserve((text.size() - start) / 2);
  int high = -1;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') continue;  // lines are joined
    if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
      if (high >= 0)
        return kExifOrientationAbsent;  // fromhex accepts whitespace only between byte pairs
      continue;
    }
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      return kExifOrientationAbsent;
    }
    if (high < 0) {
      high = v;
    } else {
      bytes.push_back(static_cast<uint8_t>(high << 4 | v));
      high = -1;
    }
  }
  if (high >= 0) return kExifOrientationAbsent;
  return ExifOrientation(bytes);
}

}  // namespace mineru::image
