// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's MagicModel: the three caption fall-backs at and across their boundaries, the
// attachment of captions and footnotes to visual bodies (candidates, effective index distance,
// the tie rules) and the image_block groups with sub_images.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "magic_model_pro_test_helpers.h"
#include "pipeline/caption_fallbacks.h"
#include "pipeline/magic_model_pro.h"
#include "pipeline/visual_groups.h"

namespace mineru::pipeline::pro_test {
namespace {

using enum BlockType;

ContentBlock WithMergePrev(ContentBlock b, bool merge_prev) {
  b.merge_prev = merge_prev;
  return b;
}

Json ImageGroup(Pts body, int index, Json before, Json after = Json::array(),
                const Json& fields = Json::object()) {
  Json blocks = std::move(before);
  blocks.push_back(Body("image_body", "image", body, index));
  for (const Json& b : after) blocks.push_back(b);
  return Group("image", body, index, std::move(blocks), fields);
}

Json TableGroup(Pts body, int index, Json before, std::string_view html = "<t>") {
  Json blocks = std::move(before);
  blocks.push_back(Body("table_body", "table", body, index, {{"html", html}}));
  return Group("table", body, index, std::move(blocks));
}

// The types of the blocks of the last preproc group.
size_t CaptionsOfLastGroup(const Json& page) {
  const Json& last = page["preproc_blocks"].back();
  size_t n = 0;
  for (const Json& b : last["blocks"]) {
    if (b["type"].get<std::string>().ends_with("_caption")) ++n;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Inline caption fragments.

// "Figure 1:" and "A cat." on one line above an image (a header between them in index order is
// skipped): the text becomes a caption (and loses merge_prev); both attach to the image.
TEST(MagicModelProFallbackTest, InlineFragmentBecomesCaption) {
  const Pts cap = {100, 100, 300, 120}, head = {0, 0, 1000, 20}, text = {310, 100, 500, 120},
            image = {100, 150, 500, 400};  // gap 30 = max(12, 1.5 * 20)
  const Json page = Convert({Blk(kImageCaption, cap, "Figure 1:"), Blk(kHeader, head, "Journal"),
                             WithMergePrev(Blk(kText, text, "A cat."), true), Blk(kImage, image)});
  ExpectJson(
      page, Page(Json::array({ImageGroup(image, 3,
                                         Json::array({Text(cap, "Figure 1:", 0, "image_caption"),
                                                      Text(text, "A cat.", 2, "image_caption")}))}),
                 Json::array({Text(head, "Journal", 1, "header")})));
}

// One point further from the image the text stays text; the caption still attaches, since the
// text lies beside it, outside the band between caption and image.
TEST(MagicModelProFallbackTest, InlineFragmentGapBoundary) {
  const Pts cap = {100, 100, 300, 120}, text = {310, 100, 500, 120}, image = {100, 151, 500, 400};
  const Json page = Convert({Blk(kImageCaption, cap, "Figure 1:"),
                             WithMergePrev(Blk(kText, text, "A cat."), true), Blk(kImage, image)});
  ExpectJson(page,
             Page(Json::array({
                 Text(text, "A cat.", 1, "text", {{"merge_prev", true}}),
                 ImageGroup(image, 2, Json::array({Text(cap, "Figure 1:", 0, "image_caption")})),
             })));
}

// Same line: vertical overlap >= 0.6 of the smaller height or centre-y difference <= 0.5 of the
// larger. Text 10 points lower (overlap 0.5, centre difference 10) is on the caption's line;
// 11 points lower it is not, stays text, and then lies in the band between caption and image,
// so the caption takes no body and becomes text too.
TEST(MagicModelProFallbackTest, InlineFragmentSameLineBoundary) {
  const Pts cap = {100, 100, 300, 120}, image = {100, 150, 500, 400};
  const Pts on_line = {310, 110, 500, 130}, below = {310, 111, 500, 131};
  ExpectJson(
      Convert({Blk(kImageCaption, cap, "Fig."), Blk(kText, on_line, "x"), Blk(kImage, image)}),
      Page(Json::array({ImageGroup(image, 2,
                                   Json::array({Text(cap, "Fig.", 0, "image_caption"),
                                                Text(on_line, "x", 1, "image_caption")}))})));
  ExpectJson(Convert({Blk(kImageCaption, cap, "Fig."), Blk(kText, below, "x"), Blk(kImage, image)}),
             Page(Json::array({Text(cap, "Fig.", 0), Text(below, "x", 1),
                               ImageGroup(image, 2, Json::array())})));
}

// A footnote fragment counts too; the next effective block must be a visual body.
TEST(MagicModelProFallbackTest, InlineFragmentNeedsVisualNext) {
  const Pts cap = {100, 100, 300, 120}, frag = {310, 100, 500, 120}, text = {100, 125, 500, 140},
            image = {100, 150, 500, 400};
  // caption, text fragment, text, image: the fragment's next block is text -> unchanged; the
  // caption's way to the image is blocked by the second text (in the band), so all are text.
  const Json page = Convert({Blk(kImageCaption, cap, "Fig."), Blk(kImageFootnote, frag, "a"),
                             Blk(kText, text, "b"), Blk(kImage, image)});
  ExpectJson(page, Page(Json::array({Text(cap, "Fig.", 0), Text(frag, "a", 1), Text(text, "b", 2),
                                     ImageGroup(image, 3, Json::array())})));
}

// ---------------------------------------------------------------------------------------------
// Stacked table captions.

// Caption, then a text line, stacked above a table: the text after the cluster's last caption
// becomes a caption.
TEST(MagicModelProFallbackTest, StackedTableCaption) {
  const Pts cap = {100, 240, 500, 260}, text = {100, 265, 500, 285};
  for (const int table_top : {300, 315}) {  // text gap 15, and 30 = max(12, 1.5 * 20)
    SCOPED_TRACE(table_top);
    const Pts table = {100, table_top, 500, 600};
    const Json page =
        Convert({Blk(kTableCaption, cap, "Table 1"),
                 WithMergePrev(Blk(kText, text, "Results"), false), Blk(kTable, table, "<t>")});
    ExpectJson(
        page,
        Page(Json::array({TableGroup(table, 2,
                                     Json::array({Text(cap, "Table 1", 0, "table_caption"),
                                                  Text(text, "Results", 1, "table_caption")}))})));
  }
}

// A gap of 31 points ends the cluster before it starts: nothing changes, and the text in the
// band keeps the caption from the table.
TEST(MagicModelProFallbackTest, StackedTableCaptionGapBoundary) {
  const Pts cap = {100, 240, 500, 260}, text = {100, 265, 500, 285}, table = {100, 316, 500, 600};
  const Json page =
      Convert({Blk(kTableCaption, cap, "Table 1"),
               WithMergePrev(Blk(kText, text, "Results"), false), Blk(kTable, table, "<t>")});
  ExpectJson(page, Page(Json::array({Text(cap, "Table 1", 0),
                                     Text(text, "Results", 1, "text", {{"merge_prev", false}}),
                                     TableGroup(table, 2, Json::array())})));
}

// Horizontal nearness: tolerance max(12, 0.03 * 400) = 12 points left of the table's x0 = 100.
TEST(MagicModelProFallbackTest, StackedTableCaptionHorizontalTolerance) {
  const Pts cap = {100, 240, 500, 260}, table = {100, 300, 500, 600};
  const Pts near = {0, 265, 88, 285}, far = {0, 265, 87, 285};
  EXPECT_EQ(CaptionsOfLastGroup(Convert({Blk(kTableCaption, cap, "Table 1"), Blk(kText, near, "x"),
                                         Blk(kTable, table, "<t>")})),
            2u);
  EXPECT_EQ(CaptionsOfLastGroup(Convert({Blk(kTableCaption, cap, "Table 1"), Blk(kText, far, "x"),
                                         Blk(kTable, table, "<t>")})),
            0u);
}

// A footnote above the cluster's last caption (the previous table's) stays a footnote.
TEST(MagicModelProFallbackTest, StackedTableCaptionKeepsEarlierFootnote) {
  const Pts note = {100, 200, 500, 220}, cap = {100, 240, 500, 260}, text = {100, 265, 500, 285},
            table = {100, 300, 500, 600};
  const Json page = Convert({Blk(kTableFootnote, note, "Note"), Blk(kTableCaption, cap, "Table 1"),
                             Blk(kText, text, "Results"), Blk(kTable, table, "<t>")});
  // The footnote precedes every body, so it takes none and becomes text.
  ExpectJson(
      page,
      Page(Json::array({Text(note, "Note", 0),
                        TableGroup(table, 3,
                                   Json::array({Text(cap, "Table 1", 1, "table_caption"),
                                                Text(text, "Results", 2, "table_caption")}))})));
}

// ---------------------------------------------------------------------------------------------
// Leading continuation captions.

Json LeadingPage(std::string_view text, int table_top, bool title_first = false) {
  std::vector<ContentBlock> blocks = {Blk(kHeader, {0, 0, 1000, 20}, "H")};
  if (title_first) blocks.push_back(Blk(kTitle, {100, 25, 500, 45}, "T"));
  blocks.push_back(WithMergePrev(Blk(kText, {100, 50, 500, 70}, std::string(text)), true));
  blocks.push_back(Blk(kTable, {100, table_top, 500, 400}, "<t>"));
  return Convert(blocks);
}

TEST(MagicModelProFallbackTest, LeadingContinuationCaption) {
  const Pts text = {100, 50, 500, 70}, table = {100, 75, 500, 400};
  ExpectJson(
      LeadingPage("Table 3 (continued)", 75),
      Page(Json::array({TableGroup(
               table, 2, Json::array({Text(text, "Table 3 (continued)", 1, "table_caption")}))}),
           Json::array({Text({0, 0, 1000, 20}, "H", 0, "header")})));
}

TEST(MagicModelProFallbackTest, LeadingContinuationBoundaries) {
  // Gap up to max(12, 1.5 * 20) = 30; overlap up to max(2, 0.3 * 20) = 6.
  EXPECT_EQ(CaptionsOfLastGroup(LeadingPage("（续表）", 100)), 1u);
  EXPECT_EQ(CaptionsOfLastGroup(LeadingPage("（续表）", 101)), 0u);
  EXPECT_EQ(CaptionsOfLastGroup(LeadingPage("续表", 64)), 1u);
  EXPECT_EQ(CaptionsOfLastGroup(LeadingPage("续表", 63)), 0u);
  // Not a continuation marker; not at the top of the page.
  EXPECT_EQ(CaptionsOfLastGroup(LeadingPage("Table 3", 75)), 0u);
  EXPECT_EQ(CaptionsOfLastGroup(LeadingPage("Table 3 (continued)", 75, true)), 0u);
  // The text stays text with its merge_prev.
  const Json page = LeadingPage("discontinued", 75);
  ExpectJson(page["preproc_blocks"][0],
             Text({100, 50, 500, 70}, "discontinued", 1, "text", {{"merge_prev", true}}));
}

TEST(MagicModelProFallbackTest, ContinuationMarkers) {
  for (const char* yes :
       {"Table 3 (continued)", "表 1（续表）", "表1 续表", "(Cont.)", "TABLE 2 (CONT’D)",
        "Table 2 (…continued)", "continued", "Table 1 - continued", "1continued", "  (续)  ",
        "Table 1 (continued) from page 2", "（续上表）", "Table (continued"}) {
    EXPECT_TRUE(magic::IsTableContinuationText(yes)) << yes;
  }
  for (const char* no : {"", "   ", "Table 3", "discontinued", "écontinued", "表continued",
                         "continued here", "续表 1"}) {
    EXPECT_FALSE(magic::IsTableContinuationText(no)) << no;
  }
  EXPECT_FALSE(magic::IsTableContinuationText("\xff\xfe"));
}

// ---------------------------------------------------------------------------------------------
// Captions and footnotes to bodies.

// A caption between two images, one index position from each: the nearer edge wins when the
// edge distances differ by more than 2 points (5 vs 10) ...
TEST(MagicModelProGroupTest, CaptionTieNearerEdge) {
  const Pts a = {100, 100, 500, 300}, cap = {100, 305, 500, 320}, b = {100, 330, 500, 500};
  ExpectJson(Convert({Blk(kImage, a), Blk(kImageCaption, cap, "c"), Blk(kImage, b)}),
             Page(Json::array({ImageGroup(a, 0, Json::array(),
                                          Json::array({Text(cap, "c", 1, "image_caption")})),
                               ImageGroup(b, 2, Json::array())})));
}

// ... else the nearer centre (edges 5 and 3; centres 112.5 and 99 away) ...
TEST(MagicModelProGroupTest, CaptionTieNearerCentre) {
  const Pts a = {100, 100, 500, 300}, cap = {100, 305, 500, 320}, b = {100, 323, 500, 500};
  ExpectJson(
      Convert({Blk(kImage, a), Blk(kImageCaption, cap, "c"), Blk(kImage, b)}),
      Page(Json::array({ImageGroup(a, 0, Json::array()),
                        ImageGroup(b, 2, Json::array({Text(cap, "c", 1, "image_caption")}))})));
}

// ... except that a caption between two tables goes to the later one, even with the nearer
// centre above (centres 62.5 and 199 away).
TEST(MagicModelProGroupTest, CaptionTieBetweenTablesTakesLater) {
  const Pts a = {100, 200, 500, 300}, cap = {100, 305, 500, 320}, b = {100, 323, 500, 700};
  ExpectJson(
      Convert({Blk(kTable, a, "<t>"), Blk(kTableCaption, cap, "c"), Blk(kTable, b, "<t>")}),
      Page(Json::array({TableGroup(a, 0, Json::array()),
                        TableGroup(b, 2, Json::array({Text(cap, "c", 1, "table_caption")}))})));
  // With images the centre decides: the upper one.
  ExpectJson(Convert({Blk(kImage, a), Blk(kImageCaption, cap, "c"), Blk(kImage, b)}),
             Page(Json::array({ImageGroup(a, 0, Json::array(),
                                          Json::array({Text(cap, "c", 1, "image_caption")})),
                               ImageGroup(b, 2, Json::array())})));
  // A table and an image: not "only tables", so the centre decides too.
  ExpectJson(Convert({Blk(kImage, a), Blk(kTableCaption, cap, "c"), Blk(kTable, b, "<t>")}),
             Page(Json::array({ImageGroup(a, 0, Json::array(),
                                          Json::array({Text(cap, "c", 1, "image_caption")})),
                               TableGroup(b, 2, Json::array())})));
}

// Footnotes take only bodies at or before them: the earlier image, although the later one is 5
// points away; a footnote before every body becomes text.
TEST(MagicModelProGroupTest, FootnotesLookBackOnly) {
  const Pts note0 = {100, 50, 500, 70}, a = {100, 100, 500, 300}, note = {100, 400, 500, 420},
            b = {100, 425, 500, 600};
  ExpectJson(Convert({Blk(kImageFootnote, note0, "n0"), Blk(kImage, a),
                      Blk(kImageFootnote, note, "n"), Blk(kImage, b)}),
             Page(Json::array({Text(note0, "n0", 0),
                               ImageGroup(a, 1, Json::array(),
                                          Json::array({Text(note, "n", 2, "image_footnote")})),
                               ImageGroup(b, 3, Json::array())})));
}

// Captions of the child's kind between child and body do not count towards the distance:
// c1 is one effective position from both images and goes to the nearer edge, the lower one.
TEST(MagicModelProGroupTest, EffectiveIndexDistance) {
  const Pts a = {100, 100, 500, 200}, c1 = {100, 600, 500, 620}, c2 = {100, 625, 500, 640},
            b = {100, 645, 500, 800};
  ExpectJson(Convert({Blk(kImage, a), Blk(kImageCaption, c1, "c1"), Blk(kImageCaption, c2, "c2"),
                      Blk(kImage, b)}),
             Page(Json::array({ImageGroup(a, 0, Json::array()),
                               ImageGroup(b, 3,
                                          Json::array({Text(c1, "c1", 1, "image_caption"),
                                                       Text(c2, "c2", 2, "image_caption")}))})));
}

// A block between child and body in index order blocks the relation when it lies in the band
// between them or overlaps either; one elsewhere on the page (below both) does not; when child
// and body overlap vertically any such block blocks.
TEST(MagicModelProGroupTest, BlocksInBetween) {
  const Pts cap = {100, 100, 500, 120}, image = {100, 160, 500, 400};
  const Pts in_band = {100, 130, 500, 150}, elsewhere = {600, 800, 900, 850};
  ExpectJson(Convert({Blk(kImageCaption, cap, "c"), Blk(kText, in_band, "t"), Blk(kImage, image)}),
             Page(Json::array(
                 {Text(cap, "c", 0), Text(in_band, "t", 1), ImageGroup(image, 2, Json::array())})));
  ExpectJson(
      Convert({Blk(kImageCaption, cap, "c"), Blk(kText, elsewhere, "t"), Blk(kImage, image)}),
      Page(Json::array({Text(elsewhere, "t", 1),
                        ImageGroup(image, 2, Json::array({Text(cap, "c", 0, "image_caption")}))})));
  // Overlapping the caption (but outside the band): blocked.
  const Pts over_caption = {400, 90, 600, 110};
  ExpectJson(
      Convert({Blk(kImageCaption, cap, "c"), Blk(kText, over_caption, "t"), Blk(kImage, image)}),
      Page(Json::array(
          {Text(cap, "c", 0), Text(over_caption, "t", 1), ImageGroup(image, 2, Json::array())})));
  // Overlapping the image (but outside the band): blocked.
  const Pts over_image = {400, 300, 600, 350};
  ExpectJson(
      Convert({Blk(kImageCaption, cap, "c"), Blk(kText, over_image, "t"), Blk(kImage, image)}),
      Page(Json::array(
          {Text(cap, "c", 0), Text(over_image, "t", 1), ImageGroup(image, 2, Json::array())})));
  // Caption beside the image (vertical overlap): the text elsewhere now blocks ...
  const Pts side_cap = {550, 200, 700, 220};
  ExpectJson(
      Convert({Blk(kImageCaption, side_cap, "c"), Blk(kText, elsewhere, "t"), Blk(kImage, image)}),
      Page(Json::array(
          {Text(side_cap, "c", 0), Text(elsewhere, "t", 1), ImageGroup(image, 2, Json::array())})));
  // ... while with nothing in between it attaches.
  ExpectJson(Convert({Blk(kImageCaption, side_cap, "c"), Blk(kImage, image)}),
             Page(Json::array(
                 {ImageGroup(image, 1, Json::array({Text(side_cap, "c", 0, "image_caption")}))})));
}

// Lists without children are ignored by the relation; a list with children is in the way.
TEST(MagicModelProGroupTest, EmptyListsAreTransparent) {
  const Pts cap = {100, 100, 500, 120}, list = {100, 125, 500, 155}, item = {100, 130, 500, 150},
            image = {100, 160, 500, 400};
  ExpectJson(
      Convert({Blk(kImageCaption, cap, "c"), Blk(kList, list), Blk(kImage, image)}),
      Page(Json::array({ImageGroup(image, 2, Json::array({Text(cap, "c", 0, "image_caption")}))})));
  ExpectJson(Convert({Blk(kImageCaption, cap, "c"), Blk(kList, list), Blk(kText, item, "- a"),
                      Blk(kImage, image)}),
             Page(Json::array({Text(cap, "c", 0),
                               Json{{"bbox", J(list)},
                                    {"type", "list"},
                                    {"angle", 0},
                                    {"index", 1},
                                    {"blocks", Json::array({Text(item, "- a", 2)})},
                                    {"sub_type", "text"}},
                               ImageGroup(image, 3, Json::array())})));
}

// Charts group like images: chart_caption, chart_body, chart_footnote.
TEST(MagicModelProGroupTest, ChartGroup) {
  const Pts cap = {100, 80, 500, 95}, chart = {100, 100, 500, 400}, note = {100, 405, 500, 420};
  ContentBlock c = Blk(kChart, chart, "| a | b |");
  c.sub_type = "bar_chart";
  ExpectJson(Convert({Blk(kImageCaption, cap, "Figure 2"), c, Blk(kImageFootnote, note, "Source")}),
             Page(Json::array({Group(
                 "chart", chart, 1,
                 Json::array({Text(cap, "Figure 2", 0, "chart_caption"),
                              Body("chart_body", "chart", chart, 1, {{"content", "| a | b |"}}),
                              Text(note, "Source", 2, "chart_footnote")}),
                 {{"sub_type", "bar_chart"}})})));
}

// ---------------------------------------------------------------------------------------------
// image_block.

// Image and chart bodies >= 90% inside an image_block vanish into its sub_images (relative,
// index order); one 25% inside stays. Their crops are still cut.
TEST(MagicModelProGroupTest, ImageBlockAbsorbsMembers) {
  const Pts block = {100, 100, 500, 500}, left = {100, 100, 300, 300}, chart = {300, 300, 500, 500},
            outside = {400, 400, 600, 600};
  ContentBlock member = Blk(kImage, left, "left");
  member.sub_type = "natural_image";
  std::vector<std::string> crops;
  const ImagePathFn record = [&](std::string_view type, const std::array<int, 4>& b) {
    crops.push_back(PathOf(type, b));
    return PathOf(type, b);
  };
  const Json page =
      MiddlePagePro({Blk(kImageBlock, block), member, Blk(kChart, chart), Blk(kImage, outside)}, 0,
                    kPage, kPage, record, {}, nullptr);
  ExpectJson(page,
             Page(Json::array({
                 ImageGroup(block, 0, Json::array(), Json::array(),
                            {{"sub_images", Json::array({
                                                {{"type", "image"}, {"bbox", {0.0, 0.0, 0.5, 0.5}}},
                                                {{"type", "chart"}, {"bbox", {0.5, 0.5, 1.0, 1.0}}},
                                            })}}),
                 ImageGroup(outside, 3, Json::array()),
             })));
  EXPECT_EQ(crops, (std::vector<std::string>{"image_100.jpg", "image_100.jpg", "chart_300.jpg",
                                             "image_400.jpg"}));
  EXPECT_EQ(page.dump().find("\"sub_images\":[{\"bbox\":[0.0,0.0,0.5,0.5]"),
            page.dump().find("\"sub_images\""));
}

// Relative boxes are clamped to 0-1 and rounded to 3 decimals, half to even on the exact value
// (50/800 = 0.0625 -> 0.062; 100/300 -> 0.333; 10/300 -> 0.033; 320/300 -> 1.0).
TEST(MagicModelProGroupTest, SubImageBoxesRounded) {
  const Pts block = {100, 100, 400, 900}, a = {200, 150, 400, 900}, b = {110, 100, 420, 900};
  const Json page = Convert({Blk(kImageBlock, block), Blk(kImage, a), Blk(kImage, b)});
  ExpectJson(page["preproc_blocks"][0]["sub_images"],
             Json::array({{{"type", "image"}, {"bbox", {0.333, 0.062, 1.0, 1.0}}},
                          {{"type", "image"}, {"bbox", {0.033, 0.0, 1.0, 1.0}}}}));
  EXPECT_EQ(magic::ClampRound3(0.0625), 0.062);
  EXPECT_EQ(magic::ClampRound3(0.0005), 0.001);  // 0.0005 is slightly above in binary
  EXPECT_EQ(magic::ClampRound3(-0.2), 0.0);
  EXPECT_EQ(magic::ClampRound3(2.0 / 3.0), 0.667);
}

// The best image_block: the highest ratio, then the smaller area, then the lower index; a
// caption after an image_block reaches it across its absorbed members.
TEST(MagicModelProGroupTest, ImageBlockBestParentAndCaption) {
  const Pts big = {0, 0, 1000, 1000}, small = {100, 100, 500, 500}, member = {150, 150, 250, 250};
  const Json page = Convert({Blk(kImageBlock, big), Blk(kImageBlock, small), Blk(kImage, member)});
  EXPECT_FALSE(page["preproc_blocks"][0].contains("sub_images"));
  ExpectJson(page["preproc_blocks"][1]["sub_images"],
             Json::array({{{"type", "image"}, {"bbox", {0.125, 0.125, 0.375, 0.375}}}}));
  const Json twins =
      Convert({Blk(kImageBlock, small), Blk(kImageBlock, small), Blk(kImage, member)});
  EXPECT_TRUE(twins["preproc_blocks"][0].contains("sub_images"));
  EXPECT_FALSE(twins["preproc_blocks"][1].contains("sub_images"));

  const Pts cap = {100, 510, 500, 530};
  const Json captioned =
      Convert({Blk(kImageBlock, small), Blk(kImage, member), Blk(kImageCaption, cap, "Figure 3")});
  ExpectJson(
      captioned,
      Page(Json::array({ImageGroup(
          small, 0, Json::array(), Json::array({Text(cap, "Figure 3", 2, "image_caption")}),
          {{"sub_images",
            Json::array({{{"type", "image"}, {"bbox", {0.125, 0.125, 0.375, 0.375}}}})}})})));
}

}  // namespace
}  // namespace mineru::pipeline::pro_test
