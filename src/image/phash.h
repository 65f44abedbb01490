// SPDX-License-Identifier: Apache-2.0
// A 64-bit perceptual hash (the DCT "pHash"): similar-looking pages get hashes a few bits apart,
// whatever their resolution or encoding. A hint for near duplicates (two scans of one form,
// one template filled twice), never a cache key: two invoices from one template share a pHash
// and differ in every number (docs/DESIGN.md).
//
// Steps: luma (ITU-R BT.601 weights) averaged over a 32 x 32 grid of equal areas (box filter:
// every source pixel counts once, so no aliasing from the downscale), a 2-D DCT-II of that grid,
// the 8 x 8 lowest frequencies, one bit per coefficient: above the median of the 63 AC
// coefficients or not (the DC term, mere brightness, is compared but not in the median).
// Bit 63 - (8 * v + u) is coefficient (u, v): DC is the most significant bit.
#pragma once

#include <cstdint>

#include "image/image.h"

namespace mineru::image {

// 0 for an empty image.
uint64_t PerceptualHash(const RgbImage& image);

// Differing bits (0..64).
int HammingDistance(uint64_t a, uint64_t b);

// Hashes at most this far apart are reported as near duplicates.
inline constexpr int kNearDuplicateDistance = 8;

}  // namespace mineru::image
