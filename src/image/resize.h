// SPDX-License-Identifier: Apache-2.0
// Pillow 9.4's Image.resize(size, Image.BICUBIC) on 8-bit RGB, bit for bit (reducing_gap=None,
// no box: the only way MinerU and Hugging Face's Qwen2-VL processor call it).
//
// Pillow's libImaging/Resample.c, per axis with n input and m output samples:
//   scale = n / m, fs = max(scale, 1), support = 2 fs (the bicubic kernel's 2, widened on
//   downscale so the filter averages what it drops), taps per output ksize = 2 ceil(support) + 1;
//   output i: center = (i + 0.5) scale, window [max(0, (int)(center - support + 0.5)),
//   min(n, (int)(center + support + 0.5))), weights K((x - center + 0.5) * (1 / fs)) in double
//   with K the a = -0.5 cubic, divided by their sum, then fixed point with 22 fraction bits
//   (round half away from zero): k = (int)(w * 2^22 +- 0.5).
//   out = clamp((2^21 + sum k * in) >> 22, 0, 255), all in int32.
// The horizontal pass runs first, over only the source rows the vertical pass reads, into an
// 8-bit intermediate image; then the vertical pass. A pass whose axis keeps its size is skipped;
// if neither changes, the result is a copy.
//
// Overflow: the weights of one output sum to 1 and their absolute values to at most 1.27 (the
// negative lobes of the a = -0.5 cubic; resize_test.cc checks the bound over many sizes), so
// |2^21 + sum k * in| <= 2^21 + 255 * 1.27 * 2^22 + rounding < 1.4e9 < 2^31: int32 accumulation
// cannot overflow, in the scalar and the SIMD code alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "image/image.h"

namespace mineru::image {

// Resizes to width x height (each in [1, kMaxImageSide]). SIMD (the best target this CPU
// supports, see base/simd_targets.h) and, with a pool, threaded over rows; the result does not
// depend on either.
Result<RgbImage> ResizeBicubic(const RgbImage& in, int64_t width, int64_t height,
                               ThreadPool* pool = nullptr);

// The scalar twin: Pillow's loops written out plainly, one thread. Tests compare the two.
Result<RgbImage> ResizeBicubicScalar(const RgbImage& in, int64_t width, int64_t height);

namespace internal {

// One axis of Pillow's precompute_coeffs + normalize_coeffs_8bpc.
struct AxisCoefficients {
  int64_t in_size = 0;
  int64_t out_size = 0;
  int ksize = 0;               // taps stored per output (Pillow's ksize)
  std::vector<int32_t> first;  // first input index of each output
  std::vector<int32_t> count;  // taps used by each output (<= ksize)
  std::vector<int32_t> kk;     // out_size x ksize fixed-point weights, zero past count
};

AxisCoefficients ComputeCoefficients(int64_t in_size, int64_t out_size);

}  // namespace internal
}  // namespace mineru::image
