// SPDX-License-Identifier: Apache-2.0
// The cached-document encoding: a byte-exact round trip of binary fields, and every kind of
// malformed value (truncated anywhere, another version, lengths past the end, trailing bytes,
// image names that would leave the output directory) refused as kCorrupt.
#include "cache/document_codec.h"

#include <gtest/gtest.h>

namespace mineru::jobs {
namespace {

DocumentOutputs Sample() {
  DocumentOutputs o;
  o.name = "";
  o.markdown = "# Title\n\nWords.\n";
  o.middle_json = std::string("{\"pdf_info\": []}\0", 17);
  o.model_json = "[]";
  o.content_list = "";
  o.report = "{\"pages\": 1}";
  std::string jpeg;
  for (int i = 0; i < 256; ++i) jpeg += static_cast<char>(255 - i);
  o.images = {{"a.jpg", jpeg}, {"b.jpg", ""}, {"c.jpg", "\r\n"}};
  return o;
}

void ExpectSame(const DocumentOutputs& a, const DocumentOutputs& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.markdown, b.markdown);
  EXPECT_EQ(a.middle_json, b.middle_json);
  EXPECT_EQ(a.model_json, b.model_json);
  EXPECT_EQ(a.content_list, b.content_list);
  EXPECT_EQ(a.report, b.report);
  EXPECT_EQ(a.images, b.images);
}

void ExpectCorrupt(std::string_view bytes, std::string_view reason) {
  auto parsed = ParseDocumentOutputs(bytes);
  ASSERT_FALSE(parsed) << "accepted: " << reason;
  EXPECT_EQ(parsed.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(parsed.error().message.find(reason), std::string::npos) << parsed.error().message;
}

// Offset of the u64 length of the markdown field (after magic, version, name length + name).
constexpr size_t kMarkdownLengthAt = 8 + 8 + 0;

void PutU64At(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

TEST(DocumentCodecTest, RoundTripIsByteExact) {
  const DocumentOutputs sample = Sample();
  const std::string bytes = SerializeDocumentOutputs(sample);
  EXPECT_EQ(bytes.substr(0, 4), "MDOC");
  auto back = ParseDocumentOutputs(bytes);
  ASSERT_TRUE(back) << back.error().ToString();
  ExpectSame(*back, sample);
  EXPECT_EQ(SerializeDocumentOutputs(*back), bytes);

  DocumentOutputs named;
  named.name = "paper";
  auto empty = ParseDocumentOutputs(SerializeDocumentOutputs(named));
  ASSERT_TRUE(empty);
  ExpectSame(*empty, named);
}

TEST(DocumentCodecTest, EveryTruncationIsRefused) {
  const std::string bytes = SerializeDocumentOutputs(Sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE(n);
    auto parsed = ParseDocumentOutputs(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().code, ErrorCode::kCorrupt);
  }
}

TEST(DocumentCodecTest, MalformedHeadersLengthsAndNamesAreRefused) {
  const std::string good = SerializeDocumentOutputs(Sample());
  ExpectCorrupt("", "bad magic");
  ExpectCorrupt("XDOC" + good.substr(4), "bad magic");
  std::string version = good;
  version[4] = 2;
  ExpectCorrupt(version, "version 2");
  std::string too_long = good;
  PutU64At(too_long, kMarkdownLengthAt, uint64_t{1} << 40);
  ExpectCorrupt(too_long, "markdown claims");
  std::string huge = good;
  PutU64At(huge, kMarkdownLengthAt, ~uint64_t{0});
  ExpectCorrupt(huge, "markdown claims");
  ExpectCorrupt(good + "x", "after the last image");

  DocumentOutputs no_images;
  std::string count = SerializeDocumentOutputs(no_images);
  PutU64At(count, count.size() - 8, uint64_t{1} << 60);
  ExpectCorrupt(count, "images cannot fit");

  for (const char* name : {"../x.jpg", "a/b.jpg", ".hidden", ""}) {
    DocumentOutputs bad = Sample();
    bad.images = {{name, "x"}};
    ExpectCorrupt(SerializeDocumentOutputs(bad), "bad file name");
  }
  DocumentOutputs bad_name = Sample();
  bad_name.name = "../escape";
  ExpectCorrupt(SerializeDocumentOutputs(bad_name), "bad name");
  DocumentOutputs unsorted = Sample();
  std::swap(unsorted.images[0], unsorted.images[1]);
  ExpectCorrupt(SerializeDocumentOutputs(unsorted), "sorted and unique");
  DocumentOutputs duplicate = Sample();
  duplicate.images[1].first = duplicate.images[0].first;
  ExpectCorrupt(SerializeDocumentOutputs(duplicate), "sorted and unique");
}

}  // namespace
}  // namespace mineru::jobs
