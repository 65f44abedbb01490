// SPDX-License-Identifier: Apache-2.0
// ZipWriter: archives read back entry by entry with libzip and, as an independent reader, with
// Python's zipfile (names, bytes, CRCs, compression methods); refused paths; the empty archive.
#include "service/zip_writer.h"

#include <gtest/gtest.h>
#include <zip.h>

#include <string>
#include <utility>
#include <vector>

#include "../support/scratch.h"
#include "../support/subprocess.h"

namespace mineru::service {
namespace {

struct ReadEntry {
  std::string name;
  std::string bytes;
  int method = -1;  // ZIP_CM_STORE or ZIP_CM_DEFLATE
};

// Every entry of `archive` through libzip, with consistency checks on; an empty list and a test
// failure when libzip refuses the archive.
std::vector<ReadEntry> ReadWithLibzip(const std::string& archive) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(archive.data(), archive.size(), 0, &error);
  EXPECT_NE(source, nullptr);
  if (source == nullptr) return {};
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  EXPECT_NE(zip, nullptr) << zip_error_strerror(&error);
  zip_error_fini(&error);
  if (zip == nullptr) {
    zip_source_free(source);
    return {};
  }
  std::vector<ReadEntry> entries;
  const zip_int64_t count = zip_get_num_entries(zip, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    EXPECT_EQ(zip_stat_index(zip, i, 0, &stat), 0);
    ReadEntry entry{stat.name, std::string(stat.size, '\0'), stat.comp_method};
    zip_file_t* file = zip_fopen_index(zip, i, 0);
    EXPECT_NE(file, nullptr);
    if (file == nullptr) continue;
    EXPECT_EQ(zip_fread(file, entry.bytes.data(), entry.bytes.size()),
              static_cast<zip_int64_t>(entry.bytes.size()));
    EXPECT_EQ(zip_fclose(file), 0);  // checks the CRC
    entries.push_back(std::move(entry));
  }
  zip_discard(zip);
  return entries;
}

// "name method size crc-ok" per entry, by Python's zipfile (an independent reader).
std::string ReadWithPython(const std::string& archive) {
  const std::string path = testing_support::TestDir() + "/a.zip";
  testing_support::WriteFile(path, archive);
  const char* script =
      "import sys, zipfile\n"
      "z = zipfile.ZipFile(sys.argv[1])\n"
      "assert z.testzip() is None\n"
      "for i in z.infolist():\n"
      "    print(i.filename, i.compress_type, len(z.read(i)))\n";
  auto r = testing_support::RunProcess({"/usr/bin/python3", "-c", script, path},
                                       {"PYTHONIOENCODING=utf-8"});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << testing_support::Describe(r);
  return r.out;
}

std::string AllBytes() {
  std::string bytes;
  for (int i = 0; i < 4 * 256; ++i) bytes += static_cast<char>(i * 7);
  return bytes;
}

TEST(ZipWriterTest, ReadsBackEntriesInOrder) {
  const std::string markdown = "# Title\n\nSome text, some text, some text, some text.\n";
  const std::string json = R"({"pdf_info": [], "_backend": "vlm", "_version_name": "2.5.4"})";
  const std::string jpeg = "\xFF\xD8\xFF\xE0" + AllBytes() + "\xFF\xD9";
  ZipWriter zip;
  ASSERT_TRUE(zip.Add("paper/paper.md", markdown));
  ASSERT_TRUE(zip.Add("paper/images/0.jpg", jpeg));
  ASSERT_TRUE(zip.Add("paper_middle.json", json));
  auto archive = zip.Finish();
  ASSERT_TRUE(archive) << archive.error().ToString();

  const std::vector<ReadEntry> entries = ReadWithLibzip(*archive);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].name, "paper/paper.md");
  EXPECT_EQ(entries[0].bytes, markdown);
  EXPECT_EQ(entries[0].method, ZIP_CM_DEFLATE);
  EXPECT_EQ(entries[1].name, "paper/images/0.jpg");
  EXPECT_EQ(entries[1].bytes, jpeg);
  EXPECT_EQ(entries[1].method, ZIP_CM_STORE);
  EXPECT_EQ(entries[2].name, "paper_middle.json");
  EXPECT_EQ(entries[2].bytes, json);
  EXPECT_EQ(entries[2].method, ZIP_CM_DEFLATE);

  // zipfile: 8 = deflated, 0 = stored.
  EXPECT_EQ(ReadWithPython(*archive), "paper/paper.md 8 " + std::to_string(markdown.size()) +
                                          "\npaper/images/0.jpg 0 " + std::to_string(jpeg.size()) +
                                          "\npaper_middle.json 8 " + std::to_string(json.size()) +
                                          "\n");
}

TEST(ZipWriterTest, NonAsciiNamesAreUtf8) {
  ZipWriter zip;
  ASSERT_TRUE(zip.Add("论文/论文.md", "x"));
  auto archive = zip.Finish();
  ASSERT_TRUE(archive) << archive.error().ToString();
  const std::vector<ReadEntry> entries = ReadWithLibzip(*archive);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, "论文/论文.md");
  EXPECT_EQ(ReadWithPython(*archive), "论文/论文.md 8 1\n");
}

TEST(ZipWriterTest, CompressionChoice) {
  const std::string text(100000, 'a');
  ZipWriter zip;
  ASSERT_TRUE(zip.Add("big.json", text));
  ASSERT_TRUE(zip.Add("stored.md", "abc", ZipCompression::kStore));
  ASSERT_TRUE(zip.Add("deflated.JPEG", "abc", ZipCompression::kDeflate));
  ASSERT_TRUE(zip.Add("auto.PNG", "abc"));
  auto archive = zip.Finish();
  ASSERT_TRUE(archive) << archive.error().ToString();
  EXPECT_LT(archive->size(), text.size() / 10);  // deflate really ran
  const std::vector<ReadEntry> entries = ReadWithLibzip(*archive);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].bytes, text);
  EXPECT_EQ(entries[0].method, ZIP_CM_DEFLATE);
  EXPECT_EQ(entries[1].method, ZIP_CM_STORE);
  EXPECT_EQ(entries[2].method, ZIP_CM_DEFLATE);
  EXPECT_EQ(entries[3].method, ZIP_CM_STORE);

  for (const char* stored :
       {"a.jpg", "a.JPG", "x/a.jpeg", "a.png", "a.webp", "a.gif", "a.zip", "a.tar.gz"}) {
    EXPECT_TRUE(IsCompressedFormat(stored)) << stored;
  }
  for (const char* deflated : {"a.md", "a.json", "jpg", "a.jpg/b", "a.jpgx", "a.pdf", "a."}) {
    EXPECT_FALSE(IsCompressedFormat(deflated)) << deflated;
  }
}

TEST(ZipWriterTest, SameInputSameBytes) {
  auto build = [] {
    ZipWriter zip(1700000000);
    EXPECT_TRUE(zip.Add("a/b.md", "text"));
    EXPECT_TRUE(zip.Add("a/c.jpg", AllBytes()));
    auto archive = zip.Finish();
    EXPECT_TRUE(archive);
    return archive ? *archive : std::string();
  };
  const std::string first = build();
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(build(), first);
}

TEST(ZipWriterTest, RefusesBadPaths) {
  ZipWriter zip;
  ASSERT_TRUE(zip.Add("ok/a.md", "1"));
  const std::vector<std::string> bad_paths = {"",         "/abs.md",
                                              "a//b.md",  "dir/",
                                              "../up.md", "a/../b.md",
                                              "./a.md",   "a/./b.md",
                                              ".",        "..",
                                              "a\\b.md",  "C:\\x.md",
                                              "a\nb.md",  std::string("a\0b", 3),
                                              "a\x7f.md", "\xff.md",
                                              "ok/a.md",  std::string(kMaxZipPathBytes + 1, 'a')};
  for (const std::string& bad : bad_paths) {
    auto status = zip.Add(bad, "x");
    ASSERT_FALSE(status) << bad;
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(zip.Add("ok/a.md", "x").error().message.find("added twice"), std::string::npos);
  // The refused entries left the writer as it was.
  auto archive = zip.Finish();
  ASSERT_TRUE(archive) << archive.error().ToString();
  const std::vector<ReadEntry> entries = ReadWithLibzip(*archive);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, "ok/a.md");
  EXPECT_EQ(entries[0].bytes, "1");
  // Dots inside names are fine; only whole "." and ".." segments are refused.
  ZipWriter dots;
  EXPECT_TRUE(dots.Add("a..b/.c/d...md", "x"));
  EXPECT_TRUE(dots.Add(std::string(kMaxZipPathBytes, 'a'), "x"));
}

TEST(ZipWriterTest, EmptyArchiveIsValid) {
  ZipWriter zip;
  auto archive = zip.Finish();
  ASSERT_TRUE(archive) << archive.error().ToString();
  EXPECT_EQ(archive->size(), 22u);
  EXPECT_TRUE(ReadWithLibzip(*archive).empty());
  EXPECT_EQ(ReadWithPython(*archive), "");
}

TEST(ZipWriterTest, FinishOnce) {
  ZipWriter zip;
  ASSERT_TRUE(zip.Add("a.md", "x"));
  ASSERT_TRUE(zip.Finish());
  EXPECT_FALSE(zip.Finish());
  EXPECT_FALSE(zip.Add("b.md", "x"));
}

}  // namespace
}  // namespace mineru::service
