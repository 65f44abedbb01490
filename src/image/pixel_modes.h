// SPDX-License-Identifier: Apache-2.0
// Row conversions from the pixel layouts decoders hand out to 8-bit RGB, each exactly as
// Pillow 9.4 converts that mode with convert("RGB") (libImaging/Convert.c and Unpack.c):
//   L, 1        R = G = B = L
//   LA          alpha dropped (not composited)
//   P           palette lookup; entries the file does not define read (i, i, i), Pillow's
//               default palette, so out-of-range indices come out grey rather than failing
//   RGBA, RGBX  alpha dropped
//   CMYK        Pillow's cmyk2rgb: R = 255 - K - C * (255 - K) / 255 in its integer rounding
//   I, I;16     16-bit grey is clipped to [0, 255] (not scaled: 40000 becomes 255)
// Internal to the image layer: decoders call these one row at a time so that no second
// full-size buffer is needed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace mineru::image::internal {

// 256 RGB entries, initialised to Pillow's default grey ramp.
struct Palette {
  std::array<uint8_t, 256 * 3> rgb;

  Palette();
  void Set(int index, uint8_t r, uint8_t g, uint8_t b) {
    rgb[index * 3] = r;
    rgb[index * 3 + 1] = g;
    rgb[index * 3 + 2] = b;
  }
};

void GreyToRgb(const uint8_t* in, size_t pixels, size_t in_stride, uint8_t* out);
void PaletteToRgb(const uint8_t* indices, size_t pixels, const Palette& palette, uint8_t* out);
// Copies the first three bytes of every `in_stride`-byte pixel (RGBA, RGBX, RGB).
void DropExtraChannels(const uint8_t* in, size_t pixels, size_t in_stride, uint8_t* out);
// Pillow's "BGR", "BGRX", "BGRA": swaps to RGB.
void BgrToRgb(const uint8_t* in, size_t pixels, size_t in_stride, uint8_t* out);
// Plain CMYK (0 = no ink); Pillow inverts Adobe JPEG data before this (see decode_jpeg.cc).
void CmykToRgb(const uint8_t* in, size_t pixels, uint8_t* out);
void Grey16ClipToRgb(const uint16_t* in, size_t pixels, uint8_t* out);

// Unpacks `pixels` samples of 1, 2 or 4 bits (most significant first) into bytes. With
// `scale`, sample values become grey levels the way Pillow unpacks "1", "L;2", "L;4"
// (v * 255 / (2^bits - 1)); without, they stay indices (for palettes).
void UnpackBits(const uint8_t* in, int bits, size_t pixels, bool scale, uint8_t* out);

}  // namespace mineru::image::internal
