// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/layout_draw.h"

#include <cairo-ft.h>
#include <fontconfig/fontconfig.h>
#include <unistd.h>

#include <algorithm>

namespace mineru::pdf {
namespace {

// MinerU writes the numbers in reportlab's default font (Helvetica); DejaVu Sans is the sans
// serif font Debian installs everywhere (fonts-dejavu-core).
constexpr char kNumberFamily[] = "DejaVu Sans";

// How far outside the page a coordinate may lie before it is clamped: far enough that nothing
// visible moves (a number starts 2 pt right of its box), near enough for cairo's 24.8 fixed
// point.
constexpr double kClampMargin = 1000;

double Clamp(double v, double size) { return std::clamp(v, -kClampMargin, size + kClampMargin); }

}  // namespace

const LayoutNumberFont& LayoutNumberFont::Get() {
  static const LayoutNumberFont* font = [] {
    auto* f = new LayoutNumberFont();
    if (!FcInit()) {
      f->description_ = "fontconfig could not be initialised";
      return f;
    }
    FcPattern* pattern = FcNameParse(reinterpret_cast<const FcChar8*>(kNumberFamily));
    if (pattern == nullptr) {
      f->description_ = "fontconfig could not parse the font name";
      return f;
    }
    FcConfigSubstitute(nullptr, pattern, FcMatchPattern);
    FcDefaultSubstitute(pattern);
    FcResult result = FcResultNoMatch;
    FcPattern* match = FcFontMatch(nullptr, pattern, &result);
    FcPatternDestroy(pattern);
    FcChar8* file = nullptr;
    if (match == nullptr || FcPatternGetString(match, FC_FILE, 0, &file) != FcResultMatch ||
        file == nullptr || ::access(reinterpret_cast<const char*>(file), R_OK) != 0) {
      f->description_ =
          fmt::format("fontconfig has no font for \"{}\" (nor any substitute)", kNumberFamily);
      if (match != nullptr) FcPatternDestroy(match);
      return f;
    }
    f->description_ = reinterpret_cast<const char*>(file);
    // cairo keeps its own reference to the pattern.
    cairo_font_face_t* face = cairo_ft_font_face_create_for_pattern(match);
    FcPatternDestroy(match);
    if (cairo_font_face_status(face) != CAIRO_STATUS_SUCCESS) {
      f->description_ += ": cairo cannot use it";
      cairo_font_face_destroy(face);
      return f;
    }
    f->face_ = face;
    return f;
  }();
  return *font;
}

const LayoutNumberFont& LayoutNumberFont::None() {
  static const LayoutNumberFont* font = [] {
    auto* f = new LayoutNumberFont();
    f->description_ = "no font (numbers disabled)";
    return f;
  }();
  return *font;
}

std::string LayoutNumbersSkippedWarning(const LayoutNumberFont& font) {
  return fmt::format("layout PDF: reading-order numbers not drawn: {}", font.description());
}

Status CairoStatus(cairo_status_t status, const std::string& what) {
  if (status == CAIRO_STATUS_SUCCESS) return OkStatus();
  const ErrorCode code =
      status == CAIRO_STATUS_NO_MEMORY ? ErrorCode::kResourceExhausted : ErrorCode::kInternal;
  return MakeError(code, fmt::format("{}: cairo: {}", what, cairo_status_to_string(status)));
}

Status DrawLayoutOverlay(cairo_t* cr, const LayoutPagePlan& page, double width_pt, double height_pt,
                         const LayoutNumberFont& font, bool* numbers_skipped) {
  cairo_save(cr);
  cairo_set_line_width(cr, kLayoutStrokeWidth);
  for (const LayoutBox& box : page.boxes) {
    const double x0 = Clamp(box.rect[0], width_pt), y0 = Clamp(box.rect[1], height_pt);
    const double x1 = Clamp(box.rect[2], width_pt), y1 = Clamp(box.rect[3], height_pt);
    const double r = box.rgb.r / 255.0, g = box.rgb.g / 255.0, b = box.rgb.b / 255.0;
    cairo_rectangle(cr, x0, y0, x1 - x0, y1 - y0);
    if (box.paint == LayoutPaint::kFill) {
      cairo_set_source_rgba(cr, r, g, b, kLayoutFillAlpha);
      cairo_fill(cr);
    } else {
      cairo_set_source_rgb(cr, r, g, b);
      cairo_stroke(cr);
    }
  }
  if (!page.numbers.empty()) {
    if (font.face() == nullptr) {
      if (numbers_skipped != nullptr) *numbers_skipped = true;
    } else {
      cairo_set_font_face(cr, font.face());
      cairo_set_font_size(cr, kLayoutNumberFontSize);
      cairo_set_source_rgb(cr, kLayoutNumberRgb.r / 255.0, kLayoutNumberRgb.g / 255.0,
                           kLayoutNumberRgb.b / 255.0);
      for (const LayoutNumber& number : page.numbers) {
        const std::string text = std::to_string(number.number);
        cairo_move_to(cr, Clamp(number.rect[2], width_pt) + kLayoutNumberDx,
                      Clamp(number.rect[1], height_pt) + kLayoutNumberDy);
        cairo_show_text(cr, text.c_str());
      }
    }
  }
  cairo_restore(cr);
  return CairoStatus(cairo_status(cr), "drawing the layout boxes");
}

}  // namespace mineru::pdf
