// SPDX-License-Identifier: Apache-2.0
#include "image/table_mask.h"

#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "image/encode.h"
#include "image/transform.h"

namespace mineru::image {
namespace {

// x1, y1, x2, y2 in pixels of the (turned) table crop.
using PixelBox = std::array<int64_t, 4>;

int NormalizedAngle(int angle) { return angle == 90 || angle == 180 || angle == 270 ? angle : 0; }

// _rotate_box_in_image: a box of the unturned crop (tw x th) in the crop turned by `angle`.
PixelBox RotateBox(const PixelBox& b, int64_t tw, int64_t th, int angle) {
  switch (angle) {
    case 90:
      return {b[1], tw - b[2], b[3], tw - b[0]};
    case 180:
      return {tw - b[2], th - b[3], tw - b[0], th - b[1]};
    case 270:
      return {th - b[3], b[0], th - b[1], b[2]};
    default:
      return b;
  }
}

// splitmix64: a small, well-mixed generator; the token sequence of a seed never changes.
class TokenGenerator {
 public:
  explicit TokenGenerator(uint64_t seed) : state_(seed) {}
  std::string Next() {
    std::string code;
    for (int i = 0; i < kTableImageTokenLength; ++i) {
      code += kTableImageTokenChars[NextWord() % kTableImageTokenChars.size()];
    }
    return code;
  }

 private:
  uint64_t NextWord() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

// _get_average_color: the floor of the per-channel mean of 8 points 2 px outside the box.
std::array<uint8_t, 3> AverageAround(const RgbImage& image, const PixelBox& box) {
  constexpr int64_t kPad = 2;
  const int64_t mid_x = (box[0] + box[2]) / 2;  // Python // on possibly negative values below
  const int64_t mid_y = (box[1] + box[3]) / 2;
  const std::array<std::array<int64_t, 2>, 8> points = {{{box[0] - kPad, box[1] - kPad},
                                                         {mid_x, box[1] - kPad},
                                                         {box[2] + kPad, box[1] - kPad},
                                                         {box[2] + kPad, mid_y},
                                                         {box[2] + kPad, box[3] + kPad},
                                                         {mid_x, box[3] + kPad},
                                                         {box[0] - kPad, box[3] + kPad},
                                                         {box[0] - kPad, mid_y}}};
  std::array<int64_t, 3> sum = {0, 0, 0};
  for (const auto& p : points) {
    const int64_t x = std::clamp<int64_t>(p[0], 0, image.width - 1);
    const int64_t y = std::clamp<int64_t>(p[1], 0, image.height - 1);
    const uint8_t* px = image.row(y) + x * 3;
    for (int c = 0; c < 3; ++c) sum[c] += px[c];
  }
  return {static_cast<uint8_t>(sum[0] / 8), static_cast<uint8_t>(sum[1] / 8),
          static_cast<uint8_t>(sum[2] / 8)};
}

// ImageDraw.rectangle(box, fill): both corners inclusive, clipped to the image.
void FillInclusive(RgbImage& image, const PixelBox& box, const std::array<uint8_t, 3>& rgb) {
  const int64_t x0 = std::max<int64_t>(0, box[0]);
  const int64_t y0 = std::max<int64_t>(0, box[1]);
  const int64_t x1 = std::min<int64_t>(image.width - 1, box[2]);
  const int64_t y1 = std::min<int64_t>(image.height - 1, box[3]);
  for (int64_t y = y0; y <= y1; ++y) {
    uint8_t* row = image.row(y);
    for (int64_t x = x0; x <= x1; ++x) {
      row[x * 3] = rgb[0];
      row[x * 3 + 1] = rgb[1];
      row[x * 3 + 2] = rgb[2];
    }
  }
}

struct CairoDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};

// Draws `text` centred in `box` (clipped to the image) in `rgb`, at the largest size whose ink
// fits 0.7 of the box; size 4 when none does.
void DrawToken(RgbImage& image, const PixelBox& box, const std::string& text,
               const std::array<uint8_t, 3>& ink) {
  const int64_t x0 = std::max<int64_t>(0, box[0]);
  const int64_t y0 = std::max<int64_t>(0, box[1]);
  const int64_t x1 = std::min<int64_t>(image.width, box[2] + 1);
  const int64_t y1 = std::min<int64_t>(image.height, box[3] + 1);
  if (x1 <= x0 || y1 <= y0) return;
  const int w = static_cast<int>(x1 - x0), h = static_cast<int>(y1 - y0);
  std::unique_ptr<cairo_surface_t, CairoDeleter> surface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h));
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS) return;
  cairo_surface_flush(surface.get());
  unsigned char* data = cairo_image_surface_get_data(surface.get());
  const int stride = cairo_image_surface_get_stride(surface.get());
  for (int y = 0; y < h; ++y) {
    const uint8_t* src = image.row(y0 + y) + x0 * 3;
    auto* dst = reinterpret_cast<uint32_t*>(data + static_cast<size_t>(y) * stride);
    for (int x = 0; x < w; ++x) {
      dst[x] = (uint32_t{src[x * 3]} << 16) | (uint32_t{src[x * 3 + 1]} << 8) | src[x * 3 + 2];
    }
  }
  cairo_surface_mark_dirty(surface.get());
  std::unique_ptr<cairo_t, CairoDeleter> cr(cairo_create(surface.get()));
  cairo_select_font_face(cr.get(), "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         CAIRO_FONT_WEIGHT_NORMAL);
  const double box_w = static_cast<double>(box[2] - box[0]);
  const double box_h = static_cast<double>(box[3] - box[1]);
  int left = 4, right = std::max(100, static_cast<int>(box_h * 0.7));
  int best = 4;
  cairo_text_extents_t extents;
  for (int step = 0; step < 30 && left <= right; ++step) {
    const int mid = (left + right) / 2;
    cairo_set_font_size(cr.get(), mid);
    cairo_text_extents(cr.get(), text.c_str(), &extents);
    if (extents.width <= box_w * 0.7 && extents.height <= box_h * 0.7) {
      best = mid;
      left = mid + 1;
    } else {
      right = mid - 1;
    }
  }
  cairo_set_font_size(cr.get(), best);
  cairo_text_extents(cr.get(), text.c_str(), &extents);
  // Centre of the box in the surface's coordinates (the surface starts at the clipped corner).
  const double cx = static_cast<double>(box[0] - x0) + box_w / 2;
  const double cy = static_cast<double>(box[1] - y0) + box_h / 2;
  cairo_set_source_rgb(cr.get(), ink[0] / 255.0, ink[1] / 255.0, ink[2] / 255.0);
  cairo_move_to(cr.get(), cx - (extents.x_bearing + extents.width / 2),
                cy - (extents.y_bearing + extents.height / 2));
  cairo_show_text(cr.get(), text.c_str());
  cairo_surface_flush(surface.get());
  for (int y = 0; y < h; ++y) {
    uint8_t* dst = image.row(y0 + y) + x0 * 3;
    const auto* src = reinterpret_cast<const uint32_t*>(data + static_cast<size_t>(y) * stride);
    for (int x = 0; x < w; ++x) {
      dst[x * 3] = static_cast<uint8_t>(src[x] >> 16);
      dst[x * 3 + 1] = static_cast<uint8_t>(src[x] >> 8);
      dst[x * 3 + 2] = static_cast<uint8_t>(src[x]);
    }
  }
}

// The token sequence of a seed: unique codes, drawn until new (at most 18^4 of them).
class UniqueTokens {
 public:
  explicit UniqueTokens(uint64_t seed) : tokens_(seed) {}
  bool exhausted() const { return used_.size() >= kTokenSpace; }
  std::string Next() {
    std::string code = tokens_.Next();
    while (!used_.insert(code).second) code = tokens_.Next();
    return "[" + code + "]";
  }

 private:
  static constexpr size_t kTokenSpace = 18 * 18 * 18 * 18;
  TokenGenerator tokens_;
  std::set<std::string> used_;
};

}  // namespace

std::vector<std::string> TableImageTokens(uint64_t token_seed, size_t count) {
  UniqueTokens tokens(token_seed);
  std::vector<std::string> out;
  for (size_t i = 0; i < count && !tokens.exhausted(); ++i) out.push_back(tokens.Next());
  return out;
}

Result<MaskedTable> MaskTableImages(const RgbImage& page, const RgbImage& table_crop,
                                    const std::array<double, 4>& table_bbox, int angle,
                                    std::span<const std::array<double, 4>> image_bboxes,
                                    uint64_t token_seed) {
  angle = NormalizedAngle(angle);
  const double width = static_cast<double>(page.width);
  const double height = static_cast<double>(page.height);
  const double tx = std::trunc(table_bbox[0] * width);
  const double ty = std::trunc(table_bbox[1] * height);
  const int64_t tw = table_crop.width, th = table_crop.height;
  MaskedTable out;
  if (table_crop.empty()) return out;
  if (angle == 0) {
    out.image = table_crop;
  } else {
    MINERU_ASSIGN_OR_RETURN(out.image, RotateQuarterTurns(table_crop, angle));
  }
  UniqueTokens tokens(token_seed);
  for (const std::array<double, 4>& b : image_bboxes) {
    const double ix1 = b[0] * width, iy1 = b[1] * height;
    const double ix2 = b[2] * width, iy2 = b[3] * height;
    if (!std::isfinite(ix1) || !std::isfinite(iy1) || !std::isfinite(ix2) || !std::isfinite(iy2)) {
      continue;
    }
    const PixelBox rel = {static_cast<int64_t>(std::max(0.0, ix1 - tx)),
                          static_cast<int64_t>(std::max(0.0, iy1 - ty)),
                          static_cast<int64_t>(std::min(static_cast<double>(tw), ix2 - tx)),
                          static_cast<int64_t>(std::min(static_cast<double>(th), iy2 - ty))};
    if (rel[2] <= rel[0] || rel[3] <= rel[1]) continue;
    MINERU_ASSIGN_OR_RETURN(RgbImage crop,
                            Crop(page, static_cast<int64_t>(ix1), static_cast<int64_t>(iy1),
                                 static_cast<int64_t>(ix2), static_cast<int64_t>(iy2)));
    if (crop.width < 1 || crop.height < 1) continue;
    if (tokens.exhausted()) {
      return Fail(ErrorCode::kResourceExhausted, "table holds more images than there are tokens");
    }
    const std::string token = tokens.Next();
    if (angle != 0) {
      MINERU_ASSIGN_OR_RETURN(crop, RotateQuarterTurns(crop, angle));
    }
    MINERU_ASSIGN_OR_RETURN(std::vector<uint8_t> jpeg, EncodeJpeg(crop));
    out.images.emplace_back(token, std::move(jpeg));

    const PixelBox mask = RotateBox(rel, tw, th, angle);
    const std::array<uint8_t, 3> fill = AverageAround(out.image, mask);
    FillInclusive(out.image, mask, fill);
    const double luminance = 0.299 * fill[0] + 0.587 * fill[1] + 0.114 * fill[2];
    const std::array<uint8_t, 3> ink =
        luminance < 128 ? std::array<uint8_t, 3>{255, 255, 255} : std::array<uint8_t, 3>{0, 0, 0};
    DrawToken(out.image, mask, token, ink);
  }
  return out;
}

}  // namespace mineru::image
