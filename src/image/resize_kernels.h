// SPDX-License-Identifier: Apache-2.0
// The SIMD halves of ResizeBicubic (resize_simd.cc, one object per Highway target, chosen at run
// time). Internal to the image layer; resize.cc owns the threading and the buffers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mineru::image::internal {

// Rows the horizontal pass transposes at a time: 64 rows of RGB make 192-byte lines, whole
// vectors on every target.
inline constexpr int64_t kHorizontalBlockRows = 64;

// Horizontal pass over rows [row_begin, row_end) of RGB rows (in_width pixels in, out_width
// pixels out). `scratch` holds HorizontalScratchBytes(in_width, out_width) bytes.
struct HorizontalArgs {
  const uint8_t* src;
  size_t src_stride;
  int64_t in_width;
  uint8_t* dst;
  size_t dst_stride;
  int64_t out_width;
  const int32_t* first;  // per output pixel: first input pixel
  const int32_t* count;  // taps
  const int32_t* kk;     // ksize weights per output pixel
  int ksize;
};
inline size_t HorizontalTransposedBytes(int64_t in_width) {
  return static_cast<size_t>(in_width) * kHorizontalBlockRows * 3 + 4;
}
inline size_t HorizontalScratchBytes(int64_t in_width, int64_t out_width) {
  return HorizontalTransposedBytes(in_width) +
         static_cast<size_t>(out_width) * kHorizontalBlockRows * 3 + 4;
}
void HorizontalRows(const HorizontalArgs& args, int64_t row_begin, int64_t row_end,
                    uint8_t* scratch);

// Vertical pass: output row y reads source rows first[y] .. first[y] + count[y] - 1.
struct VerticalArgs {
  const uint8_t* src;
  size_t src_stride;
  uint8_t* dst;
  size_t dst_stride;
  size_t row_bytes;  // width * 3
  const int32_t* first;
  const int32_t* count;
  const int32_t* kk;  // ksize weights per output row
  int ksize;
};
void VerticalRows(const VerticalArgs& args, int64_t row_begin, int64_t row_end);

}  // namespace mineru::image::internal
