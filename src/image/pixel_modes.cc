// SPDX-License-Identifier: Apache-2.0
#include "image/pixel_modes.h"

#include <algorithm>

namespace mineru::image::internal {

Palette::Palette() {
  for (int i = 0; i < 256; ++i)
    Set(i, static_cast<uint8_t>(i), static_cast<uint8_t>(i), static_cast<uint8_t>(i));
}

void GreyToRgb(const uint8_t* in, size_t pixels, size_t in_stride, uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i, in += in_stride, out += 3) {
    out[0] = out[1] = out[2] = in[0];
  }
}

void PaletteToRgb(const uint8_t* indices, size_t pixels, const Palette& palette, uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i, out += 3) {
    const uint8_t* entry = palette.rgb.data() + static_cast<size_t>(indices[i]) * 3;
    out[0] = entry[0];
    out[1] = entry[1];
    out[2] = entry[2];
  }
}

void DropExtraChannels(const uint8_t* in, size_t pixels, size_t in_stride, uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i, in += in_stride, out += 3) {
    out[0] = in[0];
    out[1] = in[1];
    out[2] = in[2];
  }
}

void BgrToRgb(const uint8_t* in, size_t pixels, size_t in_stride, uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i, in += in_stride, out += 3) {
    out[0] = in[2];
    out[1] = in[1];
    out[2] = in[0];
  }
}

namespace {

// Pillow's MULDIV255: a * b / 255 rounded, in integers ((t >> 8) + t) >> 8 with t = a * b + 128.
inline int MulDiv255(int a, int b) {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

inline uint8_t Clip8(int v) { return static_cast<uint8_t>(std::clamp(v, 0, 255)); }

}  // namespace

void CmykToRgb(const uint8_t* in, size_t pixels, uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i, in += 4, out += 3) {
    const int nk = 255 - in[3];
    out[0] = Clip8(nk - MulDiv255(in[0], nk));
    out[1] = Clip8(nk - MulDiv255(in[1], nk));
    out[2] = Clip8(nk - MulDiv255(in[2], nk));
  }
}

void Grey16ClipToRgb(const uint16_t* in, size_t pixels, uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i, out += 3) {
    out[0] = out[1] = out[2] = static_cast<uint8_t>(std::min<uint16_t>(in[i], 255));
  }
}

void UnpackBits(const uint8_t* in, int bits, size_t pixels, bool scale, uint8_t* out) {
  const int per_byte = 8 / bits;
  const int mask = (1 << bits) - 1;
  const int factor = scale ? 255 / mask : 1;  // 255, 85, 17: exact for 1, 2 and 4 bits
  for (size_t i = 0; i < pixels; ++i) {
    const int shift = 8 - bits * (static_cast<int>(i % per_byte) + 1);
    out[i] = static_cast<uint8_t>(((in[i / per_byte] >> shift) & mask) * factor);
  }
}

}  // namespace mineru::image::internal
