// SPDX-License-Identifier: Apache-2.0
// The script of scripted_pro_document_test.cc: a two-page document (mineru_demo2.pdf's first two
// pages, 612 x 792 pt, 1700 x 2200 px) whose layout answers hold every block type of the Pro
// client, an image and a chart with analysis, an image block with two panels, an image inside
// a table, a paragraph continued across a column break, and a table continued on the next page;
// and the scripted model that answers it as MinerU2.5-Pro would.
#pragma once

#include <array>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "image/mineru_crops.h"
#include "image/table_mask.h"
#include "image/transform.h"
#include "pipeline/block_requests.h"
#include "pipeline/block_requests_pro.h"
#include "pipeline/content_block.h"
#include "scripted_generator.h"

namespace mineru::pipeline::scripted_pro {

using testing::ScriptedCall;

// One layout region and the model's answer to its step-2 request ("" for regions that get none).
// `tail` is written after the rotate token (the Pro model's continuation mark goes there).
struct Region {
  std::string_view label;
  std::array<int, 4> box;  // 0-1000 grid
  std::string_view tail;
  std::string_view answer;
};

constexpr int kPageWidthPx = 1700, kPageHeightPx = 2200;

// The table on page 0 whose image is masked: its answer names the image by the token the
// pipeline draws (see TableToken); "{TOKEN}" is replaced by it.
constexpr std::string_view kLogoTable = "<fcel>Logo<fcel>{TOKEN}<nl><fcel>\\(a<b\\)<fcel>x<nl>";

// Page 0. The comment is the block's index in the client's list after step 2 deleted the
// caption inside the image block (index 12 of the layout answer).
const std::vector<Region> kPage0 = {
    {"header", {50, 20, 950, 40}, "", "Journal of Tests"},  // 0
    {"doc_title", {100, 50, 900, 72}, "", "A Study"},       // 1 (MagicModel drops it)
    {"title", {100, 75, 900, 95}, "", "1 Introduction"},    // 2
    {"text", {100, 100, 480, 300}, "", "We study \\(x_1\\) and the *method* is"},  // 3
    // Continues block 3 after the column break: merged by MinerU's paragraph merge.
    {"text", {520, 100, 900, 250}, "<|txt_contd_tgt|>", "robust to noise."},  // 4
    {"paragraph_title", {520, 255, 900, 270}, "", "Background"},              // 5 (dropped)
    {"image",
     {520, 275, 900, 400},
     "",
     "<|class_start|>natural_image<|class_end|><|sub_class_start|>photo<|sub_class_end|><|"
     "caption_start|>A red car on a road.<|caption_end|><|content_start|><|content_end|>"},  // 6
    {"image_caption", {520, 402, 900, 415}, "", "Figure 1: A car."},                         // 7
    {"chart",
     {100, 310, 480, 450},
     "",
     "<|class_start|>chart<|class_end|><|sub_class_start|>bar_chart<|sub_class_end|><|caption_"
     "start|><|caption_end|><|content_start|>\n| Year | Sales |\n| --- | --- |\n| 2020 | 10 "
     "|\n<|content_end|>"},                           // 8
    {"image_block", {520, 420, 900, 560}, "", ""},    // 9: a container, never recognised
    {"image", {530, 425, 700, 550}, "", ""},          // 10: a panel of 9
    {"chart", {710, 425, 890, 550}, "", ""},          // 11: a panel of 9
    {"image_caption", {530, 552, 890, 558}, "", ""},  // deleted: inside the image block
    {"code_caption", {100, 455, 480, 465}, "", "Listing 1: Square"},                         // 12
    {"code", {100, 467, 480, 520}, "", "```python\ndef square(x):\n    return x * x\n```"},  // 13
    {"algorithm", {100, 522, 480, 560}, "", "for i in 1..n: \\(a_i < b\\)"},                 // 14
    {"list", {100, 565, 480, 640}, "", ""},                                                  // 15
    {"list_item", {110, 567, 470, 600}, "", "- first item"},                                 // 16
    {"list_item", {110, 602, 470, 638}, "", "second item"},                                  // 17
    {"equation_block", {520, 565, 900, 640}, "", ""},                                        // 18
    {"equation", {525, 567, 895, 600}, "", "\\[a = b \\tag{1}\\]"},                          // 19
    {"equation", {525, 602, 895, 638}, "", "c = d \\tag{2}"},                                // 20
    {"formula_number", {905, 567, 950, 600}, "", "(1)"},            // 21 (dropped)
    {"table_caption", {100, 645, 900, 655}, "", "Table 1: Logos"},  // 22
    {"table", {100, 657, 900, 720}, "", kLogoTable},                // 23
    {"image", {700, 662, 880, 715}, "", ""},  // 24: inside table 23, masked in its crop
    {"table_footnote", {100, 722, 880, 732}, "", "* p<0.05"},        // 25
    {"ref_text", {100, 735, 900, 749}, "", "[1] A. Author."},        // 26
    {"phonetic", {100, 752, 300, 762}, "", "ruby"},                  // 27
    {"index", {310, 752, 500, 762}, "", "Index entry"},              // 28 (dropped)
    {"caption", {520, 752, 890, 762}, "", "Stray caption"},          // 29
    {"footnote", {100, 765, 470, 776}, "", "Stray footnote"},        // 30
    {"aside_text", {960, 100, 990, 400}, "", "arXiv:2604.00001v1"},  // 31
    {"unknown", {910, 700, 990, 740}, "", ""},         // 32: read as an image, too small to analyse
    {"inline_formula", {100, 780, 200, 790}, "", ""},  // dropped by the layout parser
    {"table_caption", {100, 795, 860, 807}, "", "Table 2: Stock"},  // 33
    // The last table of the page, continued on page 1.
    {"table",
     {100, 810, 900, 900},
     "",
     "<fcel>Name<fcel>Qty<nl><fcel>apple<fcel>3<nl><fcel>banana long<fcel>5<nl>"},  // 34
    {"page_footnote", {100, 905, 850, 918}, "", "* Corresponding author."},         // 35
    {"footer", {100, 935, 840, 950}, "", "[Non-Text]"},                             // 36
    {"page_number", {480, 960, 520, 985}, "", "1"},                                 // 37
};

// Page 1: the table continued (its header row repeated), then a paragraph the model marks as
// continuing, which MinerU 3.4.4 never joins across a page.
const std::vector<Region> kPage1 = {
    {"header", {50, 20, 950, 40}, "", "Journal of Tests"},  // 0
    {"table",
     {100, 60, 900, 200},
     "",
     "<fcel>Name<fcel>Qty<nl><fcel>name continued<ecel><nl><fcel>cherry<fcel>7<nl>"},  // 1
    {"text", {100, 220, 900, 300}, "<|txt_contd_tgt|>", "and more text."},             // 2
    {"page_number", {480, 960, 520, 985}, "", " [Non-Text] "},  // 3: deleted by the client
};

// The answer to the cross-page merge request: the first cell of the lower row continues the
// upper row's first cell.
constexpr std::string_view kMergeAnswer = "[1, 0]";
constexpr std::string_view kMergePromptStart = "Please merge the next two tables.";

// The layout answer (Pro grammar: regions separated by newlines, rotate token, then the tail).
inline std::string LayoutAnswer(const std::vector<Region>& regions) {
  std::string out;
  for (const Region& r : regions) {
    if (!out.empty()) out += "\n";
    char box[32];
    std::snprintf(box, sizeof(box), "%03d %03d %03d %03d", r.box[0], r.box[1], r.box[2], r.box[3]);
    out += "<|box_start|>" + std::string(box) + "<|box_end|><|ref_start|>" + std::string(r.label) +
           "<|ref_end|><|rotate_up|>" + std::string(r.tail);
  }
  return out;
}

inline std::array<double, 4> Normalised(const std::array<int, 4>& box) {
  return {box[0] / 1000.0, box[1] / 1000.0, box[2] / 1000.0, box[3] / 1000.0};
}

// The token the pipeline gives the image of page 0's logo table: the first of its seed.
inline std::string TableToken() {
  ContentBlock table;
  table.type = BlockType::kTable;
  table.bbox = Normalised({100, 657, 900, 720});
  table.angle = 0;
  return image::TableImageTokens(TableImageTokenSeed(table, 23), 1).at(0);
}

inline std::string LogoTableAnswer() {
  std::string answer(kLogoTable);
  answer.replace(answer.find("{TOKEN}"), 7, TableToken());
  return answer;
}

// The size of the image a step-2 request carries for `box` (upright blocks only).
inline std::pair<int64_t, int64_t> RequestSize(const std::array<int, 4>& box) {
  image::RgbImage page;
  page.width = kPageWidthPx;
  page.height = kPageHeightPx;
  page.pixels.assign(static_cast<size_t>(page.width * page.height * 3), 255);
  auto crop = image::PrepareBlockImage(page, Normalised(box), 0);
  if (!crop || !*crop) return {0, 0};
  return {(*crop)->width, (*crop)->height};
}

// Answers the layout requests page by page (pages_in_flight 1), each block request by its prompt
// and image size, and the text-only merge request; anything else is recorded as unscripted.
class ProDocumentScript {
 public:
  std::optional<std::string> operator()(const ScriptedCall& call) {
    std::lock_guard lock(mutex_);
    if (call.prompt == kLayoutPrompt) {
      ++layouts_;
      return LayoutAnswer(layouts_ == 1 ? kPage0 : kPage1);
    }
    if (call.image_width == 0 && call.prompt.starts_with(kMergePromptStart)) {
      merge_prompts_.push_back(call.prompt);
      return std::string(kMergeAnswer);
    }
    const int page = layouts_ - 1;
    const std::vector<Region>& regions = page == 0 ? kPage0 : kPage1;
    for (const Region& r : regions) {
      if (r.answer.empty()) continue;
      const auto type = ParseBlockType(r.label);
      if (!type || RecognitionPromptPro(*type) != call.prompt) continue;
      const auto [w, h] = RequestSize(r.box);
      if (w != call.image_width || h != call.image_height) continue;
      ++answered_;
      if (r.answer == kLogoTable) return LogoTableAnswer();
      return std::string(r.answer);
    }
    unscripted_.push_back("page " + std::to_string(page) + " " + call.prompt + " " +
                          std::to_string(call.image_width) + "x" +
                          std::to_string(call.image_height));
    return "UNSCRIPTED";
  }

  int answered() const {
    std::lock_guard lock(mutex_);
    return answered_;
  }
  std::vector<std::string> merge_prompts() const {
    std::lock_guard lock(mutex_);
    return merge_prompts_;
  }
  std::vector<std::string> unscripted() const {
    std::lock_guard lock(mutex_);
    return unscripted_;
  }

 private:
  mutable std::mutex mutex_;
  int layouts_ = 0;
  int answered_ = 0;
  std::vector<std::string> merge_prompts_;
  std::vector<std::string> unscripted_;
};

}  // namespace mineru::pipeline::scripted_pro
