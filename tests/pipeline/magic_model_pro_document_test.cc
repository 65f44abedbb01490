// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's MagicModel on whole pages: the document of TV-32/TV-34 (page by page, field by
// field), TV-33's page, inline table images, and hostile input.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "magic_model_pro_test_helpers.h"
#include "pipeline/inline_table_images.h"
#include "pipeline/magic_model_pro.h"

namespace mineru::pipeline::pro_test {
namespace {

using enum BlockType;

ContentBlock Frac(BlockType type, std::array<double, 4> bbox,
                  std::optional<std::string> content = std::nullopt) {
  ContentBlock b;
  b.type = type;
  b.bbox = bbox;
  b.angle = 0;
  b.content = std::move(content);
  return b;
}

// The vectors' crop names: "<span type>_<page>_<y0>.jpg".
ImagePathFn VectorPaths(int page, std::vector<std::string>* calls) {
  return [page, calls](std::string_view type, const std::array<int, 4>& b) {
    std::string name =
        std::string(type) + "_" + std::to_string(page) + "_" + std::to_string(b[1]) + ".jpg";
    calls->push_back(name);
    return name;
  };
}

Json VisualBody(std::string_view body_type, std::string_view span_type, Pts p, int index,
                std::string_view path, const Json& span_fields,
                const Json& fields = Json::object()) {
  Json span = {{"bbox", J(p)}, {"type", span_type}, {"image_path", path}};
  for (auto it = span_fields.begin(); it != span_fields.end(); ++it) span[it.key()] = it.value();
  return Simple(body_type, p, Json::array({span}), index, fields);
}

const std::string kUpperHtml =
    "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>banana long</td><td>5</td></tr></table>";
const std::string kLowerHtml =
    "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>name continued</td><td></td></tr><tr><td>"
    "cherry</td><td><eq>x^2</eq></td></tr></table>";
const std::string kChartContent = "| Year | Sales |\n| --- | --- |\n| 2020 | 10 |";

// TV-34's client input, page 0 (600 x 800 points).
std::vector<ContentBlock> Tv34Page0() {
  std::vector<ContentBlock> page = {
      Frac(kHeader, {0.1, 0.02, 0.9, 0.04}, "Journal of Tests"),
      Frac(kTitle, {0.1, 0.06, 0.9, 0.09}, "1 Introduction"),
      Frac(kText, {0.1, 0.1, 0.48, 0.6}, "We study \\(x_1\\) and the *method* is"),
      Frac(kText, {0.52, 0.1, 0.9, 0.3}, "robust to noise."),
      Frac(kImage, {0.52, 0.32, 0.9, 0.5}, "A red car on a road."),
      Frac(kImageCaption, {0.52, 0.51, 0.9, 0.53}, "Figure 1: A car."),
      Frac(kChart, {0.1, 0.62, 0.9, 0.8}, kChartContent),
      Frac(kTable, {0.1, 0.82, 0.9, 0.96}, kUpperHtml),
  };
  page[2].merge_prev = false;  // the client sets it on every text block
  page[3].merge_prev = true;
  page[4].sub_type = "natural_image";
  page[6].sub_type = "bar_chart";
  return page;
}

// Page 1: the table continued from page 0 (cell_merge [1, 0]), an equation, the page number.
std::vector<ContentBlock> Tv34Page1() {
  std::vector<ContentBlock> page = {
      Frac(kTable, {0.1, 0.05, 0.9, 0.2}, kLowerHtml),
      Frac(kEquation, {0.1, 0.22, 0.9, 0.26}, "\\[\nE=mc^2\n\\]"),
      Frac(kPageNumber, {0.45, 0.96, 0.55, 0.98}, "2"),
  };
  page[0].cell_merge = std::vector<int>{1, 0};
  return page;
}

TEST(MagicModelProDocumentTest, Tv34Page0) {
  std::vector<std::string> crops;
  std::vector<std::string> warnings;
  const Json page = MiddlePagePro(Tv34Page0(), 0, 600, 800, VectorPaths(0, &crops), {}, &warnings);
  const Pts title = {60, 48, 540, 72}, left = {60, 80, 288, 480}, right = {312, 80, 540, 240},
            image = {312, 256, 540, 400}, caption = {312, 408, 540, 424},
            chart = {60, 496, 540, 640}, table = {60, 656, 540, 768}, header = {60, 16, 540, 32};
  const Json want =
      Page(Json::array({
               Text(title, "1 Introduction", 1, "title"),
               Simple("text", left,
                      Json::array({Span(left, "We study "), Span(left, "x_1", "inline_equation"),
                                   Span(left, " and the *method* is")}),
                      2, {{"merge_prev", false}}),
               Text(right, "robust to noise.", 3, "text", {{"merge_prev", true}}),
               Group("image", image, 4,
                     Json::array({VisualBody("image_body", "image", image, 4, "image_0_256.jpg",
                                             {{"content", "A red car on a road."}}),
                                  Text(caption, "Figure 1: A car.", 5, "image_caption")}),
                     {{"sub_type", "natural_image"}}),
               Group("chart", chart, 6,
                     Json::array({VisualBody("chart_body", "chart", chart, 6, "chart_0_496.jpg",
                                             {{"content", kChartContent}})}),
                     {{"sub_type", "bar_chart"}}),
               Group("table", table, 7,
                     Json::array({VisualBody("table_body", "table", table, 7, "table_0_656.jpg",
                                             {{"html", kUpperHtml}})})),
           }),
           Json::array({Text(header, "Journal of Tests", 0, "header")}), 600, 800, 0);
  ExpectJson(page, want);
  // Field by field, the parts the later stages read.
  const Json& blocks = page["preproc_blocks"];
  ASSERT_EQ(blocks.size(), 6u);
  EXPECT_EQ(blocks[1]["lines"][0]["spans"][1]["content"], "x_1");
  EXPECT_EQ(blocks[2]["merge_prev"], true);
  EXPECT_EQ(blocks[3]["sub_type"], "natural_image");
  EXPECT_FALSE(blocks[3]["blocks"][0].contains("sub_type"));
  EXPECT_EQ(blocks[3]["blocks"][0]["lines"][0]["spans"][0]["image_path"], "image_0_256.jpg");
  EXPECT_EQ(blocks[3]["blocks"][1]["type"], "image_caption");
  EXPECT_EQ(blocks[4]["blocks"][0]["lines"][0]["spans"][0]["type"], "chart");
  EXPECT_EQ(blocks[5]["blocks"][0]["lines"][0]["spans"][0]["html"], kUpperHtml);
  EXPECT_EQ(crops,
            (std::vector<std::string>{"image_0_256.jpg", "chart_0_496.jpg", "table_0_656.jpg"}));
  EXPECT_TRUE(warnings.empty());
}

TEST(MagicModelProDocumentTest, Tv34Page1) {
  std::vector<std::string> crops;
  const Json page = MiddlePagePro(Tv34Page1(), 1, 600, 800, VectorPaths(1, &crops), {}, nullptr);
  const Pts table = {60, 40, 540, 160}, equation = {60, 176, 540, 208},
            number = {270, 768, 330, 784};
  const Json want =
      Page(Json::array({
               Group("table", table, 0,
                     Json::array({VisualBody("table_body", "table", table, 0, "table_1_40.jpg",
                                             {{"html", kLowerHtml}}, {{"cell_merge", {1, 0}}})}),
                     {{"cell_merge", {1, 0}}}),
               VisualBody("interline_equation", "interline_equation", equation, 1,
                          "interline_equation_1_176.jpg", {{"content", "E=mc^2"}}),
           }),
           Json::array({Text(number, "2", 2, "page_number")}), 600, 800, 1);
  ExpectJson(page, want);
  EXPECT_EQ(crops, (std::vector<std::string>{"table_1_40.jpg", "interline_equation_1_176.jpg"}));
}

// TV-33's page (1000 x 1000 points): table with caption and footnote, code, algorithm, a list
// holding two text blocks, image, chart, text, ref_text.
TEST(MagicModelProDocumentTest, Tv33Page) {
  const std::vector<ContentBlock> blocks = {
      Frac(kTableCaption, {0.1, 0.02, 0.9, 0.04}, "Table 1: Results"),
      Frac(kTable, {0.1, 0.05, 0.9, 0.2},
           "<table><tr><td>a</td><td><img src=\"x.jpg\"/></td></tr></table>"),
      Frac(kTableFootnote, {0.1, 0.21, 0.9, 0.23}, "* p<0.05"),
      Frac(kCode, {0.1, 0.25, 0.9, 0.35}, "```python\ndef f(x):\n    return x\n```"),
      Frac(kAlgorithm, {0.1, 0.36, 0.9, 0.46}, "for i in 1..n: \\(a_i < b\\)"),
      Frac(kList, {0.1, 0.5, 0.9, 0.7}),
      Frac(kText, {0.1, 0.5, 0.9, 0.55}, "- first item"),
      Frac(kText, {0.1, 0.56, 0.9, 0.6}, "# second"),
      Frac(kImage, {0.1, 0.72, 0.5, 0.9}),
      Frac(kChart, {0.5, 0.72, 0.9, 0.9}),
      Frac(kText, {0.1, 0.91, 0.9, 0.95}, "# not a heading and a_b"),
      Frac(kRefText, {0.1, 0.96, 0.9, 0.98}, "[1] A. Author."),
  };
  std::vector<std::string> crops;
  const Json page = MiddlePagePro(blocks, 0, 1000, 1000, VectorPaths(0, &crops), {}, nullptr);
  const Pts cap = {100, 20, 900, 40}, table = {100, 50, 900, 200}, note = {100, 210, 900, 230},
            code = {100, 250, 900, 350}, algo = {100, 360, 900, 460}, list = {100, 500, 900, 700},
            first = {100, 500, 900, 550}, second = {100, 560, 900, 600},
            image = {100, 720, 500, 900}, chart = {500, 720, 900, 900}, text = {100, 910, 900, 950},
            ref = {100, 960, 900, 980};
  const Json want = Page(
      Json::array({
          Group("table", table, 1,
                Json::array({Text(cap, "Table 1: Results", 0, "table_caption"),
                             VisualBody("table_body", "table", table, 1, "table_0_50.jpg",
                                        {{"html", blocks[1].content.value()}}),
                             Text(note, "* p<0.05", 2, "table_footnote")})),
          Group("code", code, 3,
                Json::array({Text(code, "def f(x):\n    return x", 3, "code_body")}),
                {{"sub_type", "code"}, {"guess_lang", "python"}}),
          Group("code", algo, 4,
                Json::array({Simple("code_body", algo,
                                    Json::array({Span(algo, "for i in 1..n: "),
                                                 Span(algo, "a_i < b", "inline_equation")}),
                                    4)}),
                {{"sub_type", "algorithm"}}),
          Json{{"bbox", J(list)},
               {"type", "list"},
               {"angle", 0},
               {"index", 5},
               {"blocks",
                Json::array({Text(first, "- first item", 6), Text(second, "# second", 7)})},
               {"sub_type", "text"}},
          Group("image", image, 8,
                Json::array({VisualBody("image_body", "image", image, 8, "image_0_720.jpg", {})})),
          Group("chart", chart, 9,
                Json::array({VisualBody("chart_body", "chart", chart, 9, "chart_0_720.jpg", {})})),
          Text(text, "# not a heading and a_b", 10),
          Text(ref, "[1] A. Author.", 11, "ref_text"),
      }),
      Json::array(), 1000, 1000, 0);
  ExpectJson(page, want);
}

// ---------------------------------------------------------------------------------------------
// Inline table images.

TEST(InlineTableImagesTest, RewritesDoubleQuotedDataSources) {
  const std::string jpeg = "data:image/jpeg;base64,/9j/", png = "data:image/png;base64,iVBORw==";
  const std::string html = "<table><tr><td><img src=\"" + jpeg + "\"/></td><td><img src=\"" + png +
                           "\"/></td><td><img src=\"x.jpg\"/></td></tr></table>";
  std::vector<std::string> seen;
  const InlineImageFn write = [&](std::string_view uri) {
    seen.emplace_back(uri);
    return uri == jpeg ? std::string("h.jpg") : std::string();
  };
  EXPECT_EQ(RewriteInlineTableImages(html, write),
            "<table><tr><td><img src=\"h.jpg\"/></td><td><img src=\"" + png +
                "\"/></td><td><img src=\"x.jpg\"/></td></tr></table>");
  EXPECT_EQ(seen, (std::vector<std::string>{jpeg, png}));
  EXPECT_EQ(RewriteInlineTableImages(html, {}), html);

  seen.clear();
  for (const std::string& untouched :
       {std::string("<img src=\"data:image/png,AAAA\"/>"),            // no "base64,"
        std::string("<img src='data:image/png;base64,AAAA'/>"),       // single quotes
        std::string("<img src=\"data:image/png;base64,AAAA/>"),       // never closed
        std::string("<img src=\"DATA:image/png;base64,AAAA\"/>")}) {  // case-sensitive
    EXPECT_EQ(RewriteInlineTableImages(untouched, write), untouched);
  }
  EXPECT_TRUE(seen.empty());
  // src="data:image/" holds no character for [^"]+; the next attribute still matches.
  EXPECT_EQ(
      RewriteInlineTableImages("<img src=\"data:image/\"/><img src=\"" + jpeg + "\"/>", write),
      "<img src=\"data:image/\"/><img src=\"h.jpg\"/>");
  EXPECT_EQ(seen, (std::vector<std::string>{jpeg}));
}

TEST(InlineTableImagesTest, DecodesAsMinerUNamesThem) {
  auto jpeg = DecodeInlineTableImage("data:image/jpeg;base64,/9j/", 1 << 20);
  ASSERT_TRUE(jpeg) << jpeg.error().ToString();
  EXPECT_EQ(jpeg->file_name,
            "62c174904d8852c48d106c214323d875394e0fa050efc16070431ac663be2c64.jpg");
  EXPECT_EQ(jpeg->bytes, (std::vector<uint8_t>{0xff, 0xd8, 0xff}));
  auto png = DecodeInlineTableImage("data:image/png;base64,iVBORw==", 1 << 20);
  ASSERT_TRUE(png);
  EXPECT_EQ(png->file_name, "9250ff262f1c8956a017888cb106f68059b41e795d052cc289f1d5e3821dabc6.png");
  EXPECT_EQ(png->bytes, (std::vector<uint8_t>{0x89, 'P', 'N', 'G'}));
  auto svg = DecodeInlineTableImage("data:image/svg+xml;base64,PHN2Zz4=", 1 << 20);
  ASSERT_TRUE(svg);
  EXPECT_EQ(svg->file_name, "175dcf6d3052c9d7e47589d331350c254cadb1405e97d559e71acd0907dcd7a2.svg");

  const std::map<std::string, ErrorCode> refused = {
      {"data:image/x-wmf;base64,AAAA", ErrorCode::kUnsupported},
      {"data:image/EMF;base64,AAAA", ErrorCode::kUnsupported},
      {"data:image/png,AAAA", ErrorCode::kInvalidArgument},
      {"data:image/;base64,AAAA", ErrorCode::kInvalidArgument},
      {"data:image/png;base64,", ErrorCode::kInvalidArgument},
      {"data:image/png;charset=x;base64,AAAA", ErrorCode::kInvalidArgument},
      {"data:image/../x;base64,AAAA", ErrorCode::kInvalidArgument},
      {"data:text/plain;base64,AAAA", ErrorCode::kInvalidArgument},
      {"data:image/png;base64,A A=", ErrorCode::kCorrupt},
      {"data:image/png;base64,AAAAAAAA", ErrorCode::kResourceExhausted},  // 6 bytes > 4
  };
  for (const auto& [uri, code] : refused) {
    auto r = DecodeInlineTableImage(uri, 4);
    ASSERT_FALSE(r) << uri;
    EXPECT_EQ(r.error().code, code) << uri;
  }
}

// Through the MagicModel: the table span's html points at the written file.
TEST(InlineTableImagesTest, MiddlePageRewritesTableHtml) {
  const std::string uri = "data:image/jpeg;base64,/9j/";
  const Pts p = {100, 100, 500, 300};
  std::vector<std::string> written;
  const InlineImageFn write = [&](std::string_view data_uri) {
    auto image = DecodeInlineTableImage(data_uri, 1 << 20);
    if (!image) return std::string();
    written.push_back(image->file_name);
    return image->file_name;
  };
  const Json page =
      Convert({Blk(kTable, p, "<td><img src=\"" + uri + "\"/></td>")}, nullptr, write);
  const std::string name = "62c174904d8852c48d106c214323d875394e0fa050efc16070431ac663be2c64.jpg";
  EXPECT_EQ(page["preproc_blocks"][0]["blocks"][0]["lines"][0]["spans"][0]["html"],
            "<td><img src=\"" + name + "\"/></td>");
  EXPECT_EQ(written, std::vector<std::string>{name});
}

// ---------------------------------------------------------------------------------------------
// Hostile input.

// Content with many unclosed \( on one line and balanced counts elsewhere takes linear time.
TEST(MagicModelProHostileTest, LongContentIsLinear) {
  std::string content;
  for (int i = 0; i < 100000; ++i) content += "\\( a ";
  content += "\n";
  for (int i = 0; i < 100000; ++i) content += "\\)";
  for (int i = 0; i < 50000; ++i) content += "\\[ b ";
  content += "\n";
  for (int i = 0; i < 50000; ++i) content += "\\]";
  // No bound on time here (tests never assert on time): a scan that is quadratic in its input
  // would not finish these inputs within the test timeout.
  const Json page = Convert({Blk(kText, {0, 0, 500, 500}, content)});
  // No formula closes on its line: the text stays whole (as one text span, nothing blank).
  const Json& spans = page["preproc_blocks"][0]["lines"][0]["spans"];
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0]["content"].get<std::string>().size(), content.size());
}

// Random pages of every type with hostile boxes and content: nothing throws, every string
// serialises, and every block that MinerU keeps appears exactly once (image/chart bodies
// absorbed by an image_block as one of its sub_images).
TEST(MagicModelProHostileTest, RandomPagesLoseAndDuplicateNothing) {
  const std::vector<std::string> pieces = {"\\(",
                                           "\\)",
                                           "\\[",
                                           "\\]",
                                           "\n",
                                           " ",
                                           "a",
                                           "B",
                                           "续表",
                                           "(continued)",
                                           "```",
                                           "\xff",
                                           "\xe4\xb8",
                                           "<img src=\"data:image/png;base64,AAAA\"/>",
                                           "src=\"data:image/",
                                           "\"",
                                           "\u3000"};
  const std::set<BlockType> dropped = {kDocTitle, kParagraphTitle, kFormulaNumber, kIndex,
                                       kListItem, kUnknown,        kEquationBlock};
  const std::set<BlockType> cropped = {kImage, kTable, kChart, kEquation, kImageBlock};
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const auto uniform = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    std::vector<ContentBlock> blocks(uniform(60));
    std::vector<bool> valid(blocks.size(), true);
    size_t expected_crops = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
      ContentBlock& b = blocks[i];
      b.type = static_cast<BlockType>(uniform(kProBlockTypeCount));
      for (double& v : b.bbox) v = (uniform(24) - 2) / 20.0 + uniform(5) / 1000.0;
      switch (uniform(25)) {
        case 0:
          b.bbox[uniform(4)] = std::numeric_limits<double>::quiet_NaN();
          valid[i] = false;
          break;
        case 1:
          b.bbox[uniform(4)] = std::numeric_limits<double>::infinity();
          valid[i] = false;
          break;
        case 2:
          b.bbox[uniform(4)] = 1e300;
          valid[i] = false;
          break;
        default:
          break;
      }
      if (uniform(5) > 0) {
        std::string content;
        for (int k = uniform(12); k > 0; --k)
          content += pieces[uniform(static_cast<int>(pieces.size()))];
        b.content = content;
      }
      if (uniform(2) == 0) b.merge_prev = uniform(2) == 0;
      if (uniform(3) == 0) b.sub_type = uniform(2) == 0 ? "natural_image" : "\xc3";
      if (uniform(4) == 0) b.cell_merge = std::vector<int>(uniform(3), 1);
      b.angle = uniform(3) == 0 ? std::optional<int>() : std::optional<int>(90 * uniform(4));
      if (valid[i] && cropped.count(b.type) > 0) ++expected_crops;
    }
    size_t crops = 0;
    const ImagePathFn count = [&](std::string_view type, const std::array<int, 4>& bbox) {
      ++crops;
      return PathOf(type, bbox);
    };
    const InlineImageFn inline_image = [&](std::string_view) {
      return uniform(2) == 0 ? std::string("n.png") : std::string();
    };
    std::vector<std::string> warnings;
    Json page;
    ASSERT_NO_THROW(page = MiddlePagePro(blocks, 0, 612, 792, count, inline_image, &warnings));
    ASSERT_NO_THROW((void)page.dump());  // strict: throws on ill-formed UTF-8
    EXPECT_EQ(crops, expected_crops);
    EXPECT_EQ(warnings.size(), static_cast<size_t>(std::count(valid.begin(), valid.end(), false)));

    std::map<int, int> seen;  // index -> occurrences
    size_t sub_images = 0;
    std::set<int> list_indices;
    int previous_index = -1;
    for (const Json& top : page["preproc_blocks"]) {
      const int index = top["index"].get<int>();
      EXPECT_GT(index, previous_index);  // in index order
      previous_index = index;
      if (top["type"] == "list") {
        ++seen[index];
        list_indices.insert(index);
        ASSERT_FALSE(top["blocks"].empty());
        for (const Json& child : top["blocks"]) ++seen[child["index"].get<int>()];
      } else if (top.contains("blocks")) {
        int bodies = 0;
        for (const Json& member : top["blocks"]) {
          ++seen[member["index"].get<int>()];
          if (member["type"].get<std::string>().ends_with("_body")) {
            ++bodies;
            EXPECT_EQ(member["index"], index);
          }
        }
        EXPECT_EQ(bodies, 1);
        if (top.contains("sub_images")) sub_images += top["sub_images"].size();
      } else {
        ++seen[index];
      }
    }
    for (const Json& d : page["discarded_blocks"]) ++seen[d["index"].get<int>()];
    for (const auto& [index, n] : seen) EXPECT_EQ(n, 1) << "index " << index;

    size_t missing_visuals = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const int index = static_cast<int>(i);
      const BlockType t = blocks[i].type;
      const bool found = seen.count(index) > 0;
      if (!valid[i] || dropped.count(t) > 0) {
        EXPECT_FALSE(found) << "index " << index;
      } else if (t == kList) {
        EXPECT_EQ(found, list_indices.count(index) > 0) << "index " << index;
      } else if ((t == kImage || t == kChart) && !found) {
        ++missing_visuals;
      } else {
        EXPECT_TRUE(found) << "index " << index << " " << BlockTypeName(t);
      }
    }
    EXPECT_EQ(missing_visuals, sub_images);
  }
}

}  // namespace
}  // namespace mineru::pipeline::pro_test
