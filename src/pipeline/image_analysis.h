// SPDX-License-Identifier: Apache-2.0
// The Pro model's answer to the "Image Analysis:" prompt for an image or chart crop, parsed and
// normalised as the current client does (mineru-vl-utils 1.2.1
// post_process/image_analysis_postprocess.py, process_image_or_chart). The model writes
//   <|class_start|>CLASS<|class_end|><|sub_class_start|>SUB<|sub_class_end|>
//   <|caption_start|>CAPTION<|caption_end|><|content_start|>CONTENT<|content_end|>
// in any order; what a block becomes for each class is the post-processing's business.
#pragma once

#include <string>
#include <string_view>

namespace mineru::pipeline {

// Class values the client knows; others (and every sub_class) are the model's own.
inline constexpr std::string_view kImageClassNatural = "natural_image";
inline constexpr std::string_view kImageClassChart = "chart";
inline constexpr std::string_view kImageClassFlowchart = "flowchart";
inline constexpr std::string_view kImageClassChemical = "chemical";
inline constexpr std::string_view kImageClassPureTable = "pure_table";
inline constexpr std::string_view kImageClassPureFormula = "pure_formula";

struct ImageAnalysis {
  std::string class_name;  // lower-cased
  std::string sub_class;   // lower-cased
  std::string caption;
  std::string content;  // after the class-specific normalisation
  bool operator==(const ImageAnalysis&) const = default;
};

// Field extraction: each field is the text between the first start tag and the first end tag
// after it, trimmed (Python str.strip()); "" without either. class and sub_class are
// lower-cased (str.lower()). When content is "" and the answer has exactly one
// <|content_start|> and no <|content_end|> (generation cut off), content is everything after
// that tag, untrimmed.
// Then by class: chemical -> content ""; flowchart -> NormalizeFlowchart() (mermaid_fixes.h);
// chart -> RepairChartRepetition() (chart_repair.h), then "" if the result is non-empty and
// HasMalformedMarkdownTable(); any other class -> content unchanged.
ImageAnalysis ParseImageAnalysis(std::string_view raw);

// has_malformed_markdown_table over str.splitlines() lines. A separator line matches
// ^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$; a row line, trimmed, is non-empty, has a
// '|' and >= 2 columns; columns are counted by splitting at every '|' once one leading and one
// trailing '|' are removed (no escapes). Malformed when, for some separator line, the nearest
// non-blank line before it is not a row line or has another column count than the separator,
// or a row line of another count follows it before the first blank or non-row line; or when no
// separator line exists and there are >= 2 row lines.
bool HasMalformedMarkdownTable(std::string_view content);

}  // namespace mineru::pipeline
