// SPDX-License-Identifier: Apache-2.0
// What MinerU draws into <stem>_layout.pdf, as a plan of rectangles and numbers per page
// (image/pdf/layout_plan.h), from middle.json's pdf_info. No I/O: the render helper draws the
// plan over the PDF's pages (pdf::PdfDocument::WriteLayoutPdf), WriteImageLayoutPdf over an
// image input.
//
// MinerU's rule (mineru/utils/draw_bbox.py, draw_layout_bbox), per page of pdf_info, from its
// para_blocks (preproc_blocks, which MinerU 3.4.4 pages also carry, are not drawn) and its
// discarded_blocks:
//   1. Boxes filled at 30 % opacity, kind after kind in this order, each kind in block order:
//        code body, code caption, code footnote (3.4.4)        102,0,204 / 204,153,255 /
//        229,204,255 discarded blocks                                      158,158,158 table body,
//        caption, footnote (cross_page ones left)  204,204,0 / 255,255,102 / 229,255,204 image
//        body, caption, footnote                         153,255,51 / 102,178,255 / 255,178,102
//          (3.4.4: chart bodies, captions and footnotes and seal blocks are drawn as images)
//        titles                                                102,102,255
//        texts: text, ref_text (and abstract, 3.4.4)           153,0,76
//        interline equations                                   0,255,0
//        lists                                                 40,169,92
//        list items: every sub-block of a list, outline only   40,169,92
//        index blocks                                          40,169,92
//   2. The reading order: each para block gets the next number (1-based, per page), red; a
//      group (image, table, code; 3.4.4 also chart) numbers each of its sub-blocks instead,
//      leaving out those marked cross_page (table footnotes a cross-page merge moved here).
//      MinerU 2.7.6 numbers a table's sub-blocks captions first, then bodies, then footnotes;
//      3.4.4 in their stored (index) order. Blocks of other types get no number.
// Which blocks count follows the profile's MinerU generation: 2.7.6 for Profile::k2509 (no
// code footnotes, charts, seals or abstracts), 3.4.4 for Profile::kPro.
//
// Hostile JSON never throws: a page that is not an object draws nothing (its page is still in
// the plan), a block without a bbox of four numbers (or with one beyond
// pdf::kMaxLayoutCoordinate) is left out of the boxes and the numbering. Boxes whose corners
// are given in reverse are ordered. A page with more boxes or numbers than the plan's bounds
// keeps the first ones.
#pragma once

#include "base/json.h"
#include "image/pdf/layout_plan.h"
#include "pipeline/profile.h"

namespace mineru::pipeline {

// MinerU's colours (draw_layout_bbox).
inline constexpr pdf::LayoutRgb kLayoutCodeBodyRgb{102, 0, 204};
inline constexpr pdf::LayoutRgb kLayoutCodeCaptionRgb{204, 153, 255};
inline constexpr pdf::LayoutRgb kLayoutCodeFootnoteRgb{229, 204, 255};
inline constexpr pdf::LayoutRgb kLayoutDiscardedRgb{158, 158, 158};
inline constexpr pdf::LayoutRgb kLayoutTableBodyRgb{204, 204, 0};
inline constexpr pdf::LayoutRgb kLayoutTableCaptionRgb{255, 255, 102};
inline constexpr pdf::LayoutRgb kLayoutTableFootnoteRgb{229, 255, 204};
inline constexpr pdf::LayoutRgb kLayoutImageBodyRgb{153, 255, 51};
inline constexpr pdf::LayoutRgb kLayoutImageCaptionRgb{102, 178, 255};
inline constexpr pdf::LayoutRgb kLayoutImageFootnoteRgb{255, 178, 102};
inline constexpr pdf::LayoutRgb kLayoutTitleRgb{102, 102, 255};
inline constexpr pdf::LayoutRgb kLayoutTextRgb{153, 0, 76};
inline constexpr pdf::LayoutRgb kLayoutInterlineEquationRgb{0, 255, 0};
inline constexpr pdf::LayoutRgb kLayoutListRgb{40, 169, 92};  // lists, list items, index

// One plan page per entry of pdf_info, in order, drawn over page first_page + k of the input
// (first_page: the 0-based start of the parsed page range). A pdf_info that is not an array
// gives a plan with no pages.
pdf::LayoutPlan BuildLayoutPlan(const Json& pdf_info, Profile profile, int first_page = 0);

// The plan of one middle.json page, drawn over input page `page_index`.
pdf::LayoutPagePlan BuildLayoutPagePlan(const Json& page, Profile profile, int page_index);

}  // namespace mineru::pipeline
