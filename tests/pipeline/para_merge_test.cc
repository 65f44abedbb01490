// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's truncated-paragraph and ref_text list merges (merge_para_text_blocks): TV-29,
// TV-30 and the edges around them, on hand-built MinerU 3.4.4 middle.json pages.
#include "pipeline/para_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "pipeline/markdown.h"

namespace mineru::pipeline {
namespace {

// A level-1 text block as MinerU 3.4.4's VLM MagicModel writes it: one line over the block box.
Json Text(std::vector<double> bbox, const std::string& text, bool merge_prev = false,
          int index = 0) {
  Json span = {{"bbox", bbox}, {"type", "text"}, {"content", text}};
  Json block = {{"bbox", bbox},
                {"type", "text"},
                {"angle", 0},
                {"lines", Json::array({{{"bbox", bbox}, {"spans", Json::array({span})}}})},
                {"index", index}};
  if (merge_prev) block["merge_prev"] = true;
  return block;
}
Json Typed(const std::string& type, std::vector<double> bbox = {50, 300, 290, 340}) {
  Json block = Text(bbox, "x");
  block["type"] = type;
  return block;
}
Json ImageGroup() {
  return {{"type", "image"},
          {"bbox", {60, 710, 280, 760}},
          {"index", 1},
          {"blocks", Json::array({{{"type", "image_body"},
                                   {"bbox", {60, 710, 280, 760}},
                                   {"lines", Json::array()},
                                   {"index", 1}}})}};
}
Json Page(std::vector<Json> blocks, int idx) {
  Json para = Json(std::move(blocks));
  return {{"preproc_blocks", para},
          {"para_blocks", para},
          {"discarded_blocks", Json::array()},
          {"page_size", {612, 792}},
          {"page_idx", idx}};
}

const std::vector<double> kP = {50, 100, 290, 700};
const std::vector<double> kB = {310, 80, 550, 400};

bool Merged(const Json& p, const Json& b, const Json& b_line) {
  return p["lines"].size() == 2 && p["lines"][1] == b_line && b["lines"].empty() &&
         b.value("lines_deleted", false);
}
bool Untouched(const Json& before, const Json& after) { return before == after; }

TEST(ParaMergeTest, Tv29MergesAColumnBreak) {
  Json doc =
      Json::array({Page({Text(kP, "the method is"), Text(kB, "robust to noise.", true)}, 0)});
  const Json b_line = doc[0]["para_blocks"][1]["lines"][0];
  MergeTruncatedParagraphs(doc);
  const Json& p = doc[0]["para_blocks"][0];
  const Json& b = doc[0]["para_blocks"][1];
  EXPECT_TRUE(Merged(p, b, b_line));
  EXPECT_EQ(b["lines_deleted"], true);
  EXPECT_EQ(MergeParaText(p), "the method is robust to noise.");
  // preproc_blocks are not touched.
  EXPECT_EQ(doc[0]["preproc_blocks"][1]["lines"].size(), 1u);
}

TEST(ParaMergeTest, Tv29Cjk) {
  Json doc = Json::array({Page({Text(kP, "该方法在"), Text(kB, "噪声下稳健。", true)}, 0)});
  MergeTruncatedParagraphs(doc);
  EXPECT_EQ(MergeParaText(doc[0]["para_blocks"][0]), "该方法在噪声下稳健。");
  EXPECT_TRUE(doc[0]["para_blocks"][1]["lines"].empty());
}

TEST(ParaMergeTest, Tv29AcrossVisualBlocks) {
  for (const std::string type : {"image", "table", "chart", "code"}) {
    Json between = ImageGroup();
    between["type"] = type;
    Json doc = Json::array(
        {Page({Text(kP, "the method is"), between, Text(kB, "robust to noise.", true)}, 0)});
    const Json b_line = doc[0]["para_blocks"][2]["lines"][0];
    MergeTruncatedParagraphs(doc);
    EXPECT_TRUE(Merged(doc[0]["para_blocks"][0], doc[0]["para_blocks"][2], b_line)) << type;
    EXPECT_EQ(doc[0]["para_blocks"][1], between) << type;
  }
}

// TV-30: each case leaves both blocks as they were.
TEST(ParaMergeTest, Tv30Rejections) {
  const std::vector<double> short_p = {50, 100, 290, 300};
  struct Case {
    const char* name;
    std::vector<Json> blocks;
  };
  const std::vector<Case> cases = {
      {"B below P", {Text(short_p, "the method is"), Text({50, 310, 290, 400}, "robust", true)}},
      {"P ends with a period", {Text(kP, "the end."), Text(kB, "robust to noise.", true)}},
      {"B starts upper-case", {Text(kP, "the method is"), Text(kB, "Robust to noise.", true)}},
      {"B half as wide", {Text(kP, "the method is"), Text({310, 80, 430, 400}, "robust", true)}},
      {"a title between",
       {Text(kP, "the method is"), Typed("title"), Text(kB, "robust to noise.", true)}},
  };
  for (const Case& c : cases) {
    Json doc = Json::array({Page(c.blocks, 0)});
    const Json before = doc;
    MergeTruncatedParagraphs(doc);
    EXPECT_TRUE(Untouched(before, doc)) << c.name;
  }
  // P on the previous page.
  Json doc = Json::array(
      {Page({Text(kP, "the method is")}, 0), Page({Text(kB, "robust to noise.", true)}, 1)});
  const Json before = doc;
  MergeTruncatedParagraphs(doc);
  EXPECT_TRUE(Untouched(before, doc));
}

TEST(ParaMergeTest, FurtherRejections) {
  auto rejected = [](std::vector<Json> blocks) {
    Json doc = Json::array({Page(std::move(blocks), 0)});
    const Json before = doc;
    MergeTruncatedParagraphs(doc);
    return before == doc;
  };
  EXPECT_TRUE(rejected({Text(kP, "the method is"), Text(kB, "robust", false)}));
  for (const std::string stop :
       {"!", "?", "。", "！", "？", ")", "）", "\"", "”", ":", "：", ";", "；"}) {
    EXPECT_TRUE(rejected({Text(kP, "see " + stop), Text(kB, "robust", true)})) << stop;
  }
  for (const std::string start : {"3 items", "１st", "²x", "Émile", "Ⅱ part"}) {
    EXPECT_TRUE(rejected({Text(kP, "the method is"), Text(kB, start, true)})) << start;
  }
  for (const std::string barrier :
       {"title", "doc_title", "paragraph_title", "interline_equation", "list"}) {
    EXPECT_TRUE(rejected({Text(kP, "the method is"), Typed(barrier), Text(kB, "robust", true)}))
        << barrier;
  }
  // Types that are neither barriers nor stepped over also stop the search.
  for (const std::string other : {"ref_text", "phonetic", "caption"}) {
    EXPECT_TRUE(rejected({Text(kP, "the method is"), Typed(other), Text(kB, "robust", true)}))
        << other;
  }
  // B's first line does not start at its left edge (indented by half its height or more).
  Json indented = Text(kB, "robust", true);
  indented["lines"][0]["bbox"] = {330, 80, 550, 100};
  indented["lines"].push_back({{"bbox", {310, 100, 550, 400}},
                               {"spans", Json::array({{{"type", "text"}, {"content", "more"}}})}});
  EXPECT_TRUE(rejected({Text(kP, "the method is"), indented}));
  // P's last line stops short of its right edge.
  Json short_last = Text(kP, "first");
  short_last["lines"].push_back({{"bbox", {50, 680, 200, 700}},
                                 {"spans", Json::array({{{"type", "text"}, {"content", "is"}}})}});
  EXPECT_TRUE(rejected({short_last, Text(kB, "robust", true)}));
  // Zero-height lines, empty contents.
  EXPECT_TRUE(rejected({Text({50, 100, 290, 100}, "the method is"), Text(kB, "robust", true)}));
  EXPECT_TRUE(rejected({Text(kP, ""), Text(kB, "robust", true)}));
  EXPECT_TRUE(rejected({Text(kP, "the method is"), Text(kB, "", true)}));
}

TEST(ParaMergeTest, ChainsAndLowerCaseStarts) {
  // Three pieces: the last joins the middle, then the middle (with both lines) joins the first.
  Json doc = Json::array({Page(
      {Text({50, 100, 290, 700}, "the method is"), Text({310, 80, 550, 400}, "robust to", true),
       Text({310, 380, 550, 700}, "noise and drift.", true)},
      0)});
  MergeTruncatedParagraphs(doc);
  const Json& blocks = doc[0]["para_blocks"];
  EXPECT_EQ(blocks[0]["lines"].size(), 3u);
  EXPECT_EQ(MergeParaText(blocks[0]), "the method is robust to noise and drift.");
  EXPECT_TRUE(blocks[1]["lines"].empty());
  EXPECT_TRUE(blocks[2]["lines"].empty());
  EXPECT_EQ(blocks[1]["lines_deleted"], true);
  // Appended lines count for the next test: side by side, the middle piece grown to two columns
  // is too wide for the first.
  Json wide = Json::array({Page(
      {Text({50, 100, 290, 700}, "the method is"), Text({310, 80, 550, 700}, "robust to", true),
       Text({570, 60, 810, 400}, "noise and drift.", true)},
      0)});
  MergeTruncatedParagraphs(wide);
  EXPECT_EQ(wide[0]["para_blocks"][0]["lines"].size(), 1u);
  EXPECT_EQ(wide[0]["para_blocks"][1]["lines"].size(), 2u);
}

TEST(ParaMergeTest, RefTextListsJoinAcrossPages) {
  auto list = [](const std::string& sub_type, const std::string& text) {
    return Json{{"type", "list"},
                {"sub_type", sub_type},
                {"bbox", {50, 100, 550, 700}},
                {"index", 3},
                {"blocks", Json::array({Text({50, 100, 550, 120}, text)})}};
  };
  Json doc = Json::array(
      {Page({Text(kP, "intro."), list("ref_text", "[1] a"), list("ref_text", "[2] b")}, 0),
       Page({list("ref_text", "[3] c"), list("text", "- d")}, 1)});
  MergeTruncatedParagraphs(doc);
  const Json& first = doc[0]["para_blocks"][1];
  ASSERT_EQ(first["blocks"].size(), 3u);
  EXPECT_EQ(MergeParaText(first["blocks"][2]), "[3] c");
  // The child moved from the next page has its spans marked; same-page children do not.
  EXPECT_EQ(first["blocks"][2]["lines"][0]["spans"][0]["cross_page"], true);
  EXPECT_FALSE(first["blocks"][1]["lines"][0]["spans"][0].contains("cross_page"));
  for (const Json& absorbed : {doc[0]["para_blocks"][2], doc[1]["para_blocks"][0]}) {
    EXPECT_TRUE(absorbed["blocks"].empty());
    EXPECT_EQ(absorbed["lines_deleted"], true);
  }
  // A plain list is not a ref_text list.
  EXPECT_EQ(doc[1]["para_blocks"][1]["blocks"].size(), 1u);
  // Only the immediately preceding block counts.
  Json gap = Json::array(
      {Page({list("ref_text", "[1] a"), Text(kP, "note"), list("ref_text", "[2] b")}, 0)});
  const Json before = gap;
  MergeTruncatedParagraphs(gap);
  EXPECT_EQ(gap, before);
}

TEST(ParaMergeTest, MalformedShapesNeverThrow) {
  Json docs = Json::array(
      {Json::object(), Json::array({1, "x", nullptr}),
       Json::array({Json{{"para_blocks", "x"}}, Json{{"para_blocks", {1, nullptr, "s"}}}}),
       Json::array({Page({Json{{"type", "text"}, {"merge_prev", true}, {"lines", {1, 2}}},
                          Json{{"type", "text"}, {"merge_prev", "yes"}, {"lines", "x"}}},
                         0)}),
       Json::array({Page({Text(kP, "the method is"),
                          Json{{"type", "text"},
                               {"merge_prev", 1},
                               {"bbox", "x"},
                               {"lines", {{{"bbox", {1, 2}}, {"spans", {{{"content", 5}}}}}}}}},
                         0)}),
       Json::array({Page({Json{{"type", "list"}, {"sub_type", "ref_text"}, {"blocks", {1}}},
                          Json{{"type", "list"}, {"sub_type", "ref_text"}, {"blocks", {2}}}},
                         0)})});
  for (Json& doc : docs) MergeTruncatedParagraphs(doc);
  // The lists are well-formed enough to join.
  EXPECT_EQ(docs.back()[0]["para_blocks"][0]["blocks"], Json::array({1, 2}));
}

}  // namespace
}  // namespace mineru::pipeline
