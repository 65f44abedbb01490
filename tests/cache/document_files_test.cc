// SPDX-License-Identifier: Apache-2.0
// The output files that not every document has (content_list_v2.json, the layout PDF) and the
// image types inline table images may have, through the disk layout and the cache codec.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/scratch.h"
#include "cache/document_codec.h"
#include "cache/document_outputs.h"

namespace mineru::jobs {
namespace {

namespace fs = std::filesystem;

DocumentOutputs WithEveryFile() {
  DocumentOutputs o;
  o.name = "doc";
  o.markdown = "# T";
  o.middle_json = R"({"pdf_info":[],"_backend":"vlm","_version_name":"3.4.4"})";
  o.model_json = "[]";
  o.content_list = "[]";
  o.report = R"({"profile":"pro"})";
  o.content_list_v2 = "[[]]";
  o.layout_pdf = "%PDF-1.5\n%%EOF\n";
  o.images = {{"a.jpg", "\xFF\xD8\xFF"}, {"b.png", "\x89PNG"}};
  return o;
}

TEST(DocumentFilesTest, OptionalFilesAndImageTypesRoundTripOnDisk) {
  const std::string dir = testing_support::TestDir() + "/vlm";
  const DocumentOutputs written = WithEveryFile();
  ASSERT_TRUE(WriteDocumentOutputs(written, dir));
  EXPECT_TRUE(fs::is_regular_file(dir + "/doc_content_list_v2.json"));
  EXPECT_TRUE(fs::is_regular_file(dir + "/doc_layout.pdf"));
  auto read = ReadDocumentOutputs(dir, "doc");
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(read->content_list_v2, written.content_list_v2);
  EXPECT_EQ(read->layout_pdf, written.layout_pdf);
  EXPECT_EQ(read->images, written.images);  // every file of images/, not only .jpg
  EXPECT_EQ(read->ByteSize(), written.ByteSize());

  // Outputs without them (an earlier release's): read as empty, not written back.
  DocumentOutputs older = written;
  older.content_list_v2.clear();
  older.layout_pdf.clear();
  const std::string old_dir = testing_support::TestDir() + "/old";
  ASSERT_TRUE(WriteDocumentOutputs(older, old_dir));
  EXPECT_FALSE(fs::exists(old_dir + "/doc_layout.pdf"));
  auto old_read = ReadDocumentOutputs(old_dir, "doc");
  ASSERT_TRUE(old_read);
  EXPECT_TRUE(old_read->content_list_v2.empty());
  EXPECT_TRUE(old_read->layout_pdf.empty());
}

TEST(DocumentFilesTest, TheCodecCarriesThemAndRefusesTheFirstVersion) {
  const DocumentOutputs o = WithEveryFile();
  const std::string bytes = SerializeDocumentOutputs(o);
  auto parsed = ParseDocumentOutputs(bytes);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->content_list_v2, o.content_list_v2);
  EXPECT_EQ(parsed->layout_pdf, o.layout_pdf);
  EXPECT_EQ(SerializeDocumentOutputs(*parsed), bytes);
  std::string first = bytes;
  first[4] = 1;  // what a cache filled by an earlier release holds
  auto refused = ParseDocumentOutputs(first);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kCorrupt);
  // The read budget covers the optional files too.
  const std::string dir = testing_support::TestDir() + "/budget";
  ASSERT_TRUE(WriteDocumentOutputs(o, dir));
  uint64_t file_bytes = o.markdown.size() + o.middle_json.size() + o.model_json.size() +
                        o.content_list.size() + o.report.size() + o.content_list_v2.size() +
                        o.layout_pdf.size();
  for (const auto& [name, bytes] : o.images) file_bytes += bytes.size();
  EXPECT_TRUE(ReadDocumentOutputs(dir, "doc", file_bytes));
  EXPECT_FALSE(ReadDocumentOutputs(dir, "doc", file_bytes - 1));
}

}  // namespace
}  // namespace mineru::jobs
