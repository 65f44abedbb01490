// SPDX-License-Identifier: Apache-2.0
// The two passes of Pillow's bicubic resize for every SIMD target (integer fixed point, int32
// lanes: bit-identical to the scalar twin on every target).
//
// Vertical: contiguous bytes of the rows in the window, widened to int32, times one broadcast
// weight per row; the sum is shifted and saturated to uint8 by the demotion.
// Horizontal: blocks of rows are transposed so that the same vertical kernel filters along the
// rows (a horizontal filter of an image is a vertical filter of its transpose), then transposed
// back. The transposes are plain byte moves; all arithmetic is the vertical kernel's.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "image/resize_simd.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cstring>

#include "image/resize_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace mineru::image::internal::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int kPrecisionBits = 22;
constexpr int32_t kHalf = 1 << (kPrecisionBits - 1);

inline uint8_t Clip8(int32_t acc) {
  return static_cast<uint8_t>(std::clamp(acc >> kPrecisionBits, 0, 255));
}

void VerticalRows(const VerticalArgs& a, int64_t row_begin, int64_t row_end) {
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const size_t n = hn::Lanes(di);
  for (int64_t yy = row_begin; yy < row_end; ++yy) {
    const int32_t* k = a.kk + static_cast<size_t>(yy) * a.ksize;
    const uint8_t* base = a.src + static_cast<size_t>(a.first[yy]) * a.src_stride;
    const int count = a.count[yy];
    uint8_t* out = a.dst + static_cast<size_t>(yy) * a.dst_stride;
    size_t i = 0;
    // Four vectors at a time: one weight broadcast serves four loads.
    for (; i + 4 * n <= a.row_bytes; i += 4 * n) {
      auto acc0 = hn::Set(di, kHalf), acc1 = acc0, acc2 = acc0, acc3 = acc0;
      const uint8_t* row = base + i;
      for (int y = 0; y < count; ++y, row += a.src_stride) {
        const auto w = hn::Set(di, k[y]);
        acc0 = hn::Add(acc0, hn::Mul(hn::PromoteTo(di, hn::LoadU(d8, row)), w));
        acc1 = hn::Add(acc1, hn::Mul(hn::PromoteTo(di, hn::LoadU(d8, row + n)), w));
        acc2 = hn::Add(acc2, hn::Mul(hn::PromoteTo(di, hn::LoadU(d8, row + 2 * n)), w));
        acc3 = hn::Add(acc3, hn::Mul(hn::PromoteTo(di, hn::LoadU(d8, row + 3 * n)), w));
      }
      // Arithmetic shift, then the saturating demotion clamps to [0, 255] like Pillow's clip8.
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(acc0)), d8, out + i);
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(acc1)), d8, out + i + n);
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(acc2)), d8, out + i + 2 * n);
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(acc3)), d8, out + i + 3 * n);
    }
    for (; i + n <= a.row_bytes; i += n) {
      auto acc = hn::Set(di, kHalf);
      const uint8_t* row = base + i;
      for (int y = 0; y < count; ++y, row += a.src_stride) {
        acc = hn::Add(acc, hn::Mul(hn::PromoteTo(di, hn::LoadU(d8, row)), hn::Set(di, k[y])));
      }
      hn::StoreU(hn::DemoteTo(d8, hn::ShiftRight<kPrecisionBits>(acc)), d8, out + i);
    }
    for (; i < a.row_bytes; ++i) {
      int32_t acc = kHalf;
      const uint8_t* row = base + i;
      for (int y = 0; y < count; ++y, row += a.src_stride) acc += row[0] * k[y];
      out[i] = Clip8(acc);
    }
  }
}

// Horizontal pass on rows [row_begin, row_end), kHorizontalBlockRows at a time: the block is
// transposed (pixel x of every row becomes one row of the buffer), filtered by the vertical
// kernel with the horizontal weights, and transposed back. Every output byte gets the very sum
// of products Pillow's horizontal loop computes.
void HorizontalRows(const HorizontalArgs& a, int64_t row_begin, int64_t row_end,
                    uint8_t* HWY_RESTRICT scratch) {
  uint8_t* transposed = scratch;
  uint8_t* filtered = scratch + HorizontalTransposedBytes(a.in_width);
  for (int64_t y0 = row_begin; y0 < row_end; y0 += kHorizontalBlockRows) {
    const int64_t rows = std::min<int64_t>(kHorizontalBlockRows, row_end - y0);
    const size_t line = static_cast<size_t>(rows) * 3;  // bytes per transposed row
    // transposed[x][r * 3 + c] = src[y0 + r][x * 3 + c]. Four-byte copies: the fourth byte
    // lands where the next row's (or the next x's) first byte goes, written after it.
    for (int64_t x = 0; x < a.in_width; ++x) {
      uint8_t* t = transposed + static_cast<size_t>(x) * line;
      const uint8_t* s = a.src + static_cast<size_t>(y0) * a.src_stride + x * 3;
      if (x + 1 < a.in_width) {
        for (int64_t r = 0; r < rows; ++r, s += a.src_stride) std::memcpy(t + r * 3, s, 4);
      } else {  // the last pixel of a row may end the source buffer
        for (int64_t r = 0; r < rows; ++r, s += a.src_stride) std::memcpy(t + r * 3, s, 3);
      }
    }
    const VerticalArgs v{transposed, line, filtered, line, line, a.first, a.count, a.kk, a.ksize};
    HWY_NAMESPACE::VerticalRows(v, 0, a.out_width);  // this target's kernel, not the dispatcher
    for (int64_t xx = 0; xx < a.out_width; ++xx) {
      const uint8_t* f = filtered + static_cast<size_t>(xx) * line;
      uint8_t* d = a.dst + static_cast<size_t>(y0) * a.dst_stride + xx * 3;
      if (xx + 1 < a.out_width) {
        for (int64_t r = 0; r < rows; ++r, d += a.dst_stride) std::memcpy(d, f + r * 3, 4);
      } else {
        for (int64_t r = 0; r < rows; ++r, d += a.dst_stride) std::memcpy(d, f + r * 3, 3);
      }
    }
  }
}

}  // namespace mineru::image::internal::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mineru::image {
namespace internal {

HWY_EXPORT(HorizontalRows);
HWY_EXPORT(VerticalRows);

void HorizontalRows(const HorizontalArgs& args, int64_t row_begin, int64_t row_end,
                    uint8_t* scratch) {
  HWY_DYNAMIC_DISPATCH(HorizontalRows)(args, row_begin, row_end, scratch);
}

void VerticalRows(const VerticalArgs& args, int64_t row_begin, int64_t row_end) {
  HWY_DYNAMIC_DISPATCH(VerticalRows)(args, row_begin, row_end);
}

}  // namespace internal

}  // namespace mineru::image
#endif  // HWY_ONCE
