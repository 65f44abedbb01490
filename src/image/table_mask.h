// SPDX-License-Identifier: Apache-2.0
// Images inside a table, as MinerU2.5-Pro's client hides them from the table recognition request
// (mineru-vl-utils 1.2.1 post_process/table_image_processor.py, mask_and_encode_table_image):
// each image's area of the table crop is filled with the average colour around it and labelled
// with a short token such as "[KT7Z]"; the model writes the token into the cell where the image
// sits, and post-processing puts the image back in its place as <img src="data:...">.
//
// The geometry, exactly as the client computes it (W x H the page, the table's normalised box
// (x1, y1, x2, y2), tw x th the size of the table crop before rotation):
//   * table origin on the page: (int(x1 * W), int(y1 * H)) (truncation, although the crop itself
//     is cut with rounded edges: the client's own inconsistency, kept);
//   * for each image, box (ix1, iy1, ix2, iy2) in page pixels as doubles; relative box
//     (int(max(0, ix1 - tx)), int(max(0, iy1 - ty)), int(min(tw, ix2 - tx)), int(min(th, iy2 -
//     ty))); empty -> skipped; the image itself is cut from the page at the truncated page box
//     (skipped when under 1 pixel), turned by the table's angle, and JPEG-encoded (quality 75,
//     4:2:0, what Pillow writes by default);
//   * the relative box is mapped into the turned table crop: 90 -> (y1, tw-x2, y2, tw-x1),
//     180 -> (tw-x2, th-y2, tw-x1, th-y1), 270 -> (th-y2, x1, th-y1, x2);
//   * fill colour: per channel the floor of the mean of 8 pixels 2 px outside the box (corners and
//     edge midpoints, clamped to the image) of the crop as masked so far; the box is filled
//     inclusively ([x1, x2] x [y1, y2], clipped), as Pillow's rectangle does;
//   * the token is drawn centred in the box, black, or white when 0.299 R + 0.587 G + 0.114 B of
//     the fill is below 128, at the largest font size in [4, max(100, int(0.7 * box_h))] (binary
//     search, at most 30 steps) whose ink is at most 0.7 of the box wide and high; when none fits,
//     at size 4.
//
// Deviations, deliberate: tokens are four characters of "ACDGHKTWXYZ2345678" drawn from a
// generator seeded by the caller (the client draws them at random), so that one page always
// yields the same request and answers can be cached; the glyphs are cairo's rendering of DejaVu
// Sans (fontconfig's choice; the client tries Arial, then DejaVu Sans, with FreeType through
// Pillow): the model only has to read the token, not match pixels.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "image/image.h"

namespace mineru::image {

// The token alphabet and length of the client.
inline constexpr std::string_view kTableImageTokenChars = "ACDGHKTWXYZ2345678";
inline constexpr int kTableImageTokenLength = 4;

struct MaskedTable {
  // The table crop turned upright (by the table's angle) with every inner image masked.
  RgbImage image;
  // Per inner image that was masked, in the order given: "[CODE]" and the JPEG of the image
  // (turned like the table).
  std::vector<std::pair<std::string, std::vector<uint8_t>>> images;
};

// The tokens MaskTableImages hands out, in order, to `count` masked images with `token_seed`
// (images it skips take none).
std::vector<std::string> TableImageTokens(uint64_t token_seed, size_t count);

// `table_crop` is the table's crop of `page` before rotation; `table_bbox` and `image_bboxes`
// are normalised page boxes; `angle` 0/90/180/270 (anything else: 0). Errors: an angle turn or
// crop that fails, more images than there are tokens (18^4), a JPEG that cannot be encoded.
Result<MaskedTable> MaskTableImages(const RgbImage& page, const RgbImage& table_crop,
                                    const std::array<double, 4>& table_bbox, int angle,
                                    std::span<const std::array<double, 4>> image_bboxes,
                                    uint64_t token_seed);

}  // namespace mineru::image
