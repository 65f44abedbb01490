// SPDX-License-Identifier: Apache-2.0
// Pillow's bicubic coefficients, the scalar twin, and the driver that runs the SIMD passes over
// a thread pool. The numerics are described in resize.h.
#include "image/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "image/resize_kernels.h"

namespace mineru::image {
namespace internal {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's PRECISION_BITS

// Pillow's bicubic_filter with a = -0.5, in its exact operation order.
double BicubicFilter(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

}  // namespace

AxisCoefficients ComputeCoefficients(int64_t in_size, int64_t out_size) {
  constexpr double kSupport = 2.0;  // the bicubic filter's support
  AxisCoefficients c;
  c.in_size = in_size;
  c.out_size = out_size;
  // Pillow: scale = (double)(in1 - in0) / outSize with in0 = 0, in1 = in_size as float (exact
  // for every size we accept).
  const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  const double filterscale = std::max(scale, 1.0);
  const double support = kSupport * filterscale;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(out_size);
  c.count.resize(out_size);
  c.kk.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> k(c.ksize);
  const double ss = 1.0 / filterscale;
  for (int64_t xx = 0; xx < out_size; ++xx) {
    const double center = (static_cast<double>(xx) + 0.5) * scale;
    // C truncation, as Pillow's (int) cast; then the clamps.
    int64_t xmin = static_cast<int64_t>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int64_t xmax = static_cast<int64_t>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int64_t x = 0; x < xmax; ++x) {
      const double w = BicubicFilter((static_cast<double>(x + xmin) - center + 0.5) * ss);
      k[x] = w;
      ww += w;
    }
    int32_t* out = &c.kk[static_cast<size_t>(xx) * c.ksize];
    for (int64_t x = 0; x < xmax; ++x) {
      const double w = ww != 0.0 ? k[x] / ww : k[x];
      // normalize_coeffs_8bpc: round half away from zero, then truncate.
      out[x] = w < 0 ? static_cast<int32_t>(-0.5 + w * (1 << kPrecisionBits))
                     : static_cast<int32_t>(0.5 + w * (1 << kPrecisionBits));
    }
    c.first[xx] = static_cast<int32_t>(xmin);
    c.count[xx] = static_cast<int32_t>(xmax);
  }
  return c;
}

}  // namespace internal

namespace {

using internal::AxisCoefficients;

constexpr int kPrecisionBits = 22;

inline uint8_t Clip8(int32_t acc) {
  return static_cast<uint8_t>(std::clamp(acc >> kPrecisionBits, 0, 255));
}

Status CheckTarget(const RgbImage& in, int64_t width, int64_t height) {
  if (in.empty()) return Fail(ErrorCode::kInvalidArgument, "cannot resize an empty image");
  if (width < 1 || height < 1 || width > kMaxImageSide || height > kMaxImageSide ||
      width * height > kMaxImagePixels) {
    return Fail(ErrorCode::kInvalidArgument, "resize target {}x{} outside [1, {}] per side", width,
                height, kMaxImageSide);
  }
  return OkStatus();
}

// The source rows the vertical pass reads, [first, last).
struct RowSpan {
  int64_t first, last;
};
RowSpan UsedRows(const AxisCoefficients& vert) {
  const int64_t n = vert.out_size;
  return {vert.first[0], int64_t{vert.first[n - 1]} + vert.count[n - 1]};
}

}  // namespace

Result<RgbImage> ResizeBicubicScalar(const RgbImage& in, int64_t width, int64_t height) {
  MINERU_RETURN_IF_ERROR(CheckTarget(in, width, height));
  const bool need_horizontal = width != in.width;
  const bool need_vertical = height != in.height;
  if (!need_horizontal && !need_vertical) return in;
  const AxisCoefficients horiz = internal::ComputeCoefficients(in.width, width);
  AxisCoefficients vert = internal::ComputeCoefficients(in.height, height);
  const RowSpan rows = UsedRows(vert);

  RgbImage temp;
  const RgbImage* src = &in;
  if (need_horizontal) {
    // Only rows [rows.first, rows.last) are filtered; the vertical bounds shift with them.
    for (int32_t& f : vert.first) f -= static_cast<int32_t>(rows.first);
    temp.width = width;
    temp.height = rows.last - rows.first;
    temp.pixels.resize(static_cast<size_t>(temp.width * temp.height) * 3);
    for (int64_t y = 0; y < temp.height; ++y) {
      const uint8_t* line = in.row(y + rows.first);
      uint8_t* out = temp.row(y);
      for (int64_t xx = 0; xx < width; ++xx) {
        const int32_t* k = &horiz.kk[static_cast<size_t>(xx) * horiz.ksize];
        const uint8_t* p = line + static_cast<size_t>(horiz.first[xx]) * 3;
        int32_t ss0 = 1 << (kPrecisionBits - 1), ss1 = ss0, ss2 = ss0;
        for (int32_t x = 0; x < horiz.count[xx]; ++x) {
          ss0 += p[x * 3 + 0] * k[x];
          ss1 += p[x * 3 + 1] * k[x];
          ss2 += p[x * 3 + 2] * k[x];
        }
        out[xx * 3 + 0] = Clip8(ss0);
        out[xx * 3 + 1] = Clip8(ss1);
        out[xx * 3 + 2] = Clip8(ss2);
      }
    }
    src = &temp;
  }
  if (!need_vertical) return temp;
  RgbImage out;
  out.width = src->width;
  out.height = height;
  out.pixels.resize(static_cast<size_t>(out.width * height) * 3);
  const size_t row_bytes = out.row_bytes();
  for (int64_t yy = 0; yy < height; ++yy) {
    const int32_t* k = &vert.kk[static_cast<size_t>(yy) * vert.ksize];
    uint8_t* dst = out.row(yy);
    for (size_t i = 0; i < row_bytes; ++i) {
      int32_t ss = 1 << (kPrecisionBits - 1);
      for (int32_t y = 0; y < vert.count[yy]; ++y) ss += src->row(vert.first[yy] + y)[i] * k[y];
      dst[i] = Clip8(ss);
    }
  }
  return out;
}

Result<RgbImage> ResizeBicubic(const RgbImage& in, int64_t width, int64_t height,
                               ThreadPool* pool) {
  MINERU_RETURN_IF_ERROR(CheckTarget(in, width, height));
  const bool need_horizontal = width != in.width;
  const bool need_vertical = height != in.height;
  if (!need_horizontal && !need_vertical) return in;
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  // Runs fn(begin, end) over [0, n) in blocks, on the pool when there is one. Blocks are small
  // enough for every thread to get several (rows differ little in cost).
  // Runs fn(begin, end, thread) over [0, n) in blocks of a multiple of `granule`, on the pool
  // when there is one. Blocks are small enough for every thread to get several.
  auto for_blocks = [&](int64_t n, int64_t granule, auto&& fn) {
    const int64_t blocks =
        std::max<int64_t>(1, std::min<int64_t>(n / granule, int64_t{threads} * 4));
    const int64_t per = ((n + blocks - 1) / blocks + granule - 1) / granule * granule;
    const int64_t tasks = (n + per - 1) / per;
    auto run = [&](size_t task, int thread) {
      const int64_t begin = static_cast<int64_t>(task) * per;
      fn(begin, std::min(n, begin + per), thread);
    };
    if (pool != nullptr && tasks > 1) {
      pool->ParallelFor(static_cast<size_t>(tasks), run);
    } else {
      for (int64_t t = 0; t < tasks; ++t) run(static_cast<size_t>(t), 0);
    }
  };

  AxisCoefficients vert = internal::ComputeCoefficients(in.height, height);
  const RowSpan rows = UsedRows(vert);
  RgbImage temp;
  const RgbImage* src = &in;
  if (need_horizontal) {
    const AxisCoefficients horiz = internal::ComputeCoefficients(in.width, width);
    for (int32_t& f : vert.first) f -= static_cast<int32_t>(rows.first);
    temp.width = width;
    temp.height = rows.last - rows.first;
    temp.pixels.resize(static_cast<size_t>(temp.width * temp.height) * 3);
    const internal::HorizontalArgs args{in.row(rows.first), in.row_bytes(),     in.width,
                                        temp.pixels.data(), temp.row_bytes(),   width,
                                        horiz.first.data(), horiz.count.data(), horiz.kk.data(),
                                        horiz.ksize};
    std::vector<std::vector<uint8_t>> scratch(
        threads, std::vector<uint8_t>(internal::HorizontalScratchBytes(in.width, width)));
    for_blocks(temp.height, internal::kHorizontalBlockRows,
               [&](int64_t begin, int64_t end, int thread) {
                 internal::HorizontalRows(args, begin, end, scratch[thread].data());
               });
    src = &temp;
  }
  if (!need_vertical) return temp;
  RgbImage out;
  out.width = src->width;
  out.height = height;
  out.pixels.resize(static_cast<size_t>(out.width * height) * 3);
  const internal::VerticalArgs args{src->pixels.data(), src->row_bytes(), out.pixels.data(),
                                    out.row_bytes(),    out.row_bytes(),  vert.first.data(),
                                    vert.count.data(),  vert.kk.data(),   vert.ksize};
  for_blocks(height, 1,
             [&](int64_t begin, int64_t end, int) { internal::VerticalRows(args, begin, end); });
  return out;
}

}  // namespace mineru::image
