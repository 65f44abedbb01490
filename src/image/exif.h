// SPDX-License-Identifier: Apache-2.0
// The EXIF orientation tag (0x0112), read the way Pillow 9.4's Image.getexif finds it, for
// ImageOps.exif_transpose. Only IFD0 of the embedded TIFF structure is read; every offset is
// bounds-checked and a malformed block simply has no orientation (Pillow warns and goes on).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace mineru::image {

// ExifOrientation's answer when the block has no orientation tag (or cannot be read at all).
// Pillow consults XMP only then; a tag that is present but unusable blocks that fallback.
inline constexpr int kExifOrientationAbsent = -1;

// The orientation in an EXIF block (a TIFF header and IFD0, optionally after "Exif\0\0"): 1-8;
// 0 when the tag is present with another value or a non-integer type (Pillow then leaves the
// image as it is); kExifOrientationAbsent when there is no tag.
int ExifOrientation(std::span<const uint8_t> exif);

// Pillow's fallback for files without an EXIF orientation: the first match of
// `tiff:Orientation(="|>)([0-9])` in an XMP packet (0-9); kExifOrientationAbsent when none.
int XmpOrientation(std::string_view xmp);

// ImageMagick's "Raw profile type exif" PNG text: three header lines, then the EXIF block in
// hex over any number of lines (Pillow: bytes.fromhex of lines 4 on). As ExifOrientation;
// kExifOrientationAbsent when the hex does not parse.
int RawProfileExifOrientation(std::string_view text);

}  // namespace mineru::image
