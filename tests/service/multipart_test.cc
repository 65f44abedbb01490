// SPDX-License-Identifier: Apache-2.0
// The multipart/form-data parser on hand-written bodies (fields, binary files, boundary forms,
// filename*, every error, both limits at their boundary, a seeded random-mutation smoke test),
// the form-field conversions and the file-name sanitiser.
#include "service/multipart.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../support/http_client.h"
#include "text/utf8.h"

namespace mineru::service {
namespace {

using namespace std::string_literals;

constexpr char kType[] = "multipart/form-data; boundary=XyZ-123";

// A part as the body text: "--XyZ-123\r\n" + headers + "\r\n" + data + "\r\n".
std::string Part(const std::string& headers, const std::string& data,
                 const std::string& boundary = "XyZ-123") {
  return "--" + boundary + "\r\n" + headers + "\r\n" + data + "\r\n";
}
std::string Field(const std::string& name, const std::string& value) {
  return Part("Content-Disposition: form-data; name=\"" + name + "\"\r\n", value);
}
std::string Close(const std::string& boundary = "XyZ-123") { return "--" + boundary + "--\r\n"; }

// The error message of a failed parse ("" when it succeeded, which fails the test).
std::string ParseError(std::string_view type, std::string_view body,
                       const MultipartLimits& limits = {}) {
  auto parts = ParseMultipartFormData(type, body, limits);
  EXPECT_FALSE(parts) << "parsed: " << body;
  if (parts) return "";
  EXPECT_EQ(parts.error().code, ErrorCode::kInvalidArgument);
  return parts.error().message;
}

// Binary data holding CRLFs, NULs, "--" and the boundary in every position that is not a
// delimiter line.
const std::string kBinary =
    "\x89PNG\r\n\x1a\n\0\xff\r\n--\r\n--XyZ-12\r\n--XyZ-123X\r\n--XyZ-123 x\r\n"
    "-XyZ-123\r\nx--XyZ-123\r\n\r\n\0--"s;

TEST(MultipartTest, TwoFieldsAndTwoFiles) {
  const std::string body =
      Field("start_page_id", "3") + Field("formula_enable", "false") +
      Part(
          "Content-Disposition: form-data; name=\"files\"; filename=\"a.png\"\r\n"
          "Content-Type: image/png\r\n",
          kBinary) +
      Part(
          "Content-Disposition: form-data; name=\"files\"; filename=\"b.pdf\"\r\n"
          "Content-Type: application/pdf\r\n",
          "%PDF-1.7\r\n--\r\n") +
      Close();
  auto parts = ParseMultipartFormData(kType, body);
  ASSERT_TRUE(parts) << parts.error().ToString();
  ASSERT_EQ(parts->size(), 4u);
  EXPECT_EQ((*parts)[0].name, "start_page_id");
  EXPECT_EQ((*parts)[0].data, "3");
  EXPECT_FALSE((*parts)[0].filename.has_value());
  EXPECT_EQ((*parts)[0].content_type, "text/plain");
  EXPECT_EQ((*parts)[1].name, "formula_enable");
  EXPECT_EQ((*parts)[1].data, "false");
  EXPECT_EQ((*parts)[2].name, "files");
  EXPECT_EQ((*parts)[2].filename, "a.png");
  EXPECT_EQ((*parts)[2].content_type, "image/png");
  EXPECT_EQ((*parts)[2].data, kBinary);
  EXPECT_EQ((*parts)[3].filename, "b.pdf");
  EXPECT_EQ((*parts)[3].content_type, "application/pdf");
  EXPECT_EQ((*parts)[3].data, "%PDF-1.7\r\n--\r\n");
  // The data points into the body (no copy).
  EXPECT_GE((*parts)[2].data.data(), body.data());
  EXPECT_LE((*parts)[2].data.data() + (*parts)[2].data.size(), body.data() + body.size());
}

TEST(MultipartTest, BodiesOfTheTestClientParse) {
  std::string type;
  const std::string body = testing_support::MultipartBody(
      {{.name = "table_enable", .value = "true", .filename = "", .content_type = ""},
       {.name = "file", .value = kBinary, .filename = "x.jpg", .content_type = "image/jpeg"}},
      &type);
  auto parts = ParseMultipartFormData(type, body);
  ASSERT_TRUE(parts) << parts.error().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].data, "true");
  EXPECT_EQ((*parts)[1].filename, "x.jpg");
  EXPECT_EQ((*parts)[1].data, kBinary);
}

TEST(MultipartTest, BoundaryForms) {
  const std::string odd = "a'b(c)+_,-./:=? d";  // every bchar, a space inside
  const std::string body =
      Part("Content-Disposition: form-data; name=x\r\n", "1", odd) + Close(odd);
  for (const std::string& type :
       {"multipart/form-data; boundary=\"" + odd + "\"",
        "Multipart/Form-Data ; BOUNDARY = \"" + odd + "\" ;charset=utf-8"}) {
    auto parts = ParseMultipartFormData(type, body);
    ASSERT_TRUE(parts) << type << ": " << parts.error().ToString();
    ASSERT_EQ(parts->size(), 1u);
    EXPECT_EQ((*parts)[0].name, "x");  // a bare parameter value
    EXPECT_EQ((*parts)[0].data, "1");
  }
  const std::string bare = Field("x", "2") + Close();
  EXPECT_TRUE(ParseMultipartFormData("multipart/form-data;boundary=XyZ-123", bare));
  EXPECT_TRUE(ParseMultipartFormData("multipart/form-data; Boundary=\"XyZ-123\"", bare));
}

TEST(MultipartTest, BoundaryLengthAtItsLimit) {
  const std::string longest(kMaxBoundaryLength, 'b');
  const std::string body =
      Part("Content-Disposition: form-data; name=x\r\n", "v", longest) + Close(longest);
  EXPECT_TRUE(ParseMultipartFormData("multipart/form-data; boundary=" + longest, body));
  const std::string too_long = longest + "b";
  EXPECT_NE(ParseError(
                "multipart/form-data; boundary=" + too_long,
                Part("Content-Disposition: form-data; name=x\r\n", "v", too_long) + Close(too_long))
                .find("1 to 70"),
            std::string::npos);
}

TEST(MultipartTest, BadContentType) {
  const std::string body = Field("x", "1") + Close();
  EXPECT_NE(ParseError("application/json", body).find("not multipart/form-data"),
            std::string::npos);
  EXPECT_NE(ParseError("multipart/mixed; boundary=XyZ-123", body).find("not multipart/form-data"),
            std::string::npos);
  EXPECT_NE(ParseError("multipart/form-data", body).find("no boundary"), std::string::npos);
  EXPECT_NE(ParseError("multipart/form-data; boundary=\"\"", body).find("1 to 70"),
            std::string::npos);
  EXPECT_NE(ParseError("multipart/form-data; boundary=\"ab \"", body).find("forbids"),
            std::string::npos);
  EXPECT_NE(ParseError("multipart/form-data; boundary=a<b", body).find("forbids"),
            std::string::npos);
  EXPECT_NE(ParseError("multipart/form-data; boundary=\"XyZ-123", body).find("unterminated"),
            std::string::npos);
  EXPECT_NE(ParseError("multipart/form-data; boundary=a; boundary=b", body).find("duplicate"),
            std::string::npos);
  EXPECT_NE(ParseError("multipart/form-data; boundary", body).find("no '='"), std::string::npos);
}

TEST(MultipartTest, PreambleEpilogueAndPadding) {
  const std::string body =
      "This is the preamble.\r\n--XyZ-123 \t\r\n"
      "Content-Disposition: form-data; name=\"a\"\r\n\r\n"
      "\r\n--XyZ-123\r\n"  // an empty part
      "Content-Disposition: form-data; name=\"b\"\r\n\r\n"
      "B\r\n--XyZ-123--\r\nepilogue --XyZ-123\r\nignored";
  auto parts = ParseMultipartFormData(kType, body);
  ASSERT_TRUE(parts) << parts.error().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].data, "");
  EXPECT_EQ((*parts)[1].data, "B");
}

TEST(MultipartTest, NoPartsIsAnEmptyList) {
  auto parts = ParseMultipartFormData(kType, Close());
  ASSERT_TRUE(parts) << parts.error().ToString();
  EXPECT_TRUE(parts->empty());
}

TEST(MultipartTest, MissingOrBrokenDelimiters) {
  EXPECT_NE(ParseError(kType, "").find("no boundary line"), std::string::npos);
  EXPECT_NE(ParseError(kType, "just text").find("no boundary line"), std::string::npos);
  // The body was cut off: no closing delimiter, or not even the end of the part's data.
  EXPECT_EQ(ParseError(kType, Field("x", "1")), "multipart body has no closing boundary");
  EXPECT_EQ(ParseError(kType, Field("x", "1") + "--XyZ-123"),
            "multipart body has no closing boundary");
  EXPECT_EQ(ParseError(kType, Field("x", "1") + "--XyZ-123-"),
            "multipart body has no closing boundary");
  EXPECT_EQ(ParseError(kType, "--XyZ-123\r\nContent-Disposition: form-data; name=x\r\n\r\nabc"),
            "multipart body has no closing boundary");
  // Bare LF line ends are not line ends.
  EXPECT_NE(ParseError(kType,
                       "--XyZ-123\nContent-Disposition: form-data; name=x\n\nv\n"
                       "--XyZ-123--\n")
                .find("CRLF"),
            std::string::npos);
  EXPECT_NE(ParseError(kType,
                       "--XyZ-123\r\nContent-Disposition: form-data; name=x\n\nv\r\n"
                       "--XyZ-123--\r\n")
                .find("not followed by an empty line"),
            std::string::npos);
}

TEST(MultipartTest, HeadersAreCaseInsensitive) {
  const std::string body = Part(
                               "content-disposition: FORM-DATA; NAME=\"f\"; FileName=\"a.txt\"\r\n"
                               "CONTENT-TYPE:text/markdown; charset=utf-8\r\n"
                               "X-Other: ignored\r\n",
                               "# hi") +
                           Close();
  auto parts = ParseMultipartFormData(kType, body);
  ASSERT_TRUE(parts) << parts.error().ToString();
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].name, "f");
  EXPECT_EQ((*parts)[0].filename, "a.txt");
  EXPECT_EQ((*parts)[0].content_type, "text/markdown; charset=utf-8");
}

TEST(MultipartTest, FileNames) {
  auto filename = [](const std::string& disposition) -> std::optional<std::string> {
    const std::string body = Part("Content-Disposition: " + disposition + "\r\n", "d") + Close();
    auto parts = ParseMultipartFormData(kType, body);
    EXPECT_TRUE(parts) << disposition << ": " << parts.error().ToString();
    if (!parts || parts->size() != 1) return "<error>";
    return (*parts)[0].filename;
  };
  EXPECT_EQ(filename("form-data; name=f; filename*=UTF-8''%E4%B8%AD%E6%96%87%20a.pdf"),
            "中文 a.pdf");
  EXPECT_EQ(filename("form-data; name=f; filename*=utf-8'zh'%e4%b8%ad.pdf"), "中.pdf");
  // filename* wins over filename, whichever comes first.
  EXPECT_EQ(filename("form-data; name=f; filename=\"fallback.pdf\"; filename*=UTF-8''real.pdf"),
            "real.pdf");
  EXPECT_EQ(filename("form-data; name=f; filename*=UTF-8''real.pdf; filename=\"fallback.pdf\""),
            "real.pdf");
  // Raw UTF-8 as browsers send it; \" and \\ unescaped; other backslashes (Windows paths) kept.
  EXPECT_EQ(filename("form-data; name=f; filename=\"論文.pdf\""), "論文.pdf");
  EXPECT_EQ(filename("form-data; name=f; filename=\"a\\\"b\\\\c.txt\""), "a\"b\\c.txt");
  EXPECT_EQ(filename("form-data; name=f; filename=\"C:\\docs\\paper.pdf\""), "C:\\docs\\paper.pdf");
  EXPECT_EQ(filename("form-data; name=f; filename=\"a;b=c.pdf\""), "a;b=c.pdf");
  EXPECT_EQ(filename("form-data; name=f; filename=\"\""), "");  // an empty file input
  EXPECT_EQ(filename("form-data; name=f"), std::nullopt);

  auto error = [](const std::string& disposition) {
    return ParseError(kType, Part("Content-Disposition: " + disposition + "\r\n", "d") + Close());
  };
  EXPECT_NE(error("form-data; name=f; filename*=ISO-8859-1''a.pdf").find("only UTF-8"),
            std::string::npos);
  EXPECT_NE(error("form-data; name=f; filename*=UTF-8''a%2.pdf").find("percent"),
            std::string::npos);
  EXPECT_NE(error("form-data; name=f; filename*=UTF-8''a%").find("percent"), std::string::npos);
  EXPECT_NE(error("form-data; name=f; filename*=a.pdf").find("charset'language'value"),
            std::string::npos);
  EXPECT_NE(error("form-data; name=f; filename*=UTF-8''%FF.pdf").find("not UTF-8"),
            std::string::npos);
}

TEST(MultipartTest, PartErrors) {
  auto error = [](const std::string& headers) {
    return ParseError(kType, Part(headers, "d") + Close());
  };
  EXPECT_EQ(error("Content-Disposition: form-data\r\n"), "multipart part has no name");
  EXPECT_EQ(error("Content-Disposition: form-data; filename=\"a.pdf\"\r\n"),
            "multipart part has no name");
  EXPECT_EQ(error("Content-Disposition: form-data; name=\"\"\r\n"), "multipart part has no name");
  EXPECT_NE(error("Content-Type: text/plain\r\n").find("no Content-Disposition"),
            std::string::npos);
  EXPECT_NE(ParseError(kType, "--XyZ-123\r\n\r\nd\r\n" + Close()).find("no Content-Disposition"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: attachment; name=x\r\n").find("not form-data"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=x\r\nContent-Disposition: form-data; "
                  "name=y\r\n")
                .find("two Content-Disposition"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=x\r\nContent-Type: a/b\r\n"
                  "Content-Type: c/d\r\n")
                .find("two Content-Type"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=x\r\nContent-Type:\r\n").find("empty"),
            std::string::npos);
  EXPECT_NE(error("X-A: b\r\n c\r\nContent-Disposition: form-data; name=x\r\n").find("folded"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition form-data; name=x\r\n").find("malformed header"),
            std::string::npos);
  EXPECT_NE(error(": form-data\r\nContent-Disposition: form-data; name=x\r\n").find("malformed"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=\"x\x01\"\r\n").find("control"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=x; name=y\r\n").find("duplicate"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=\"x\r\n").find("unterminated"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=\"x\" junk\r\n").find("unexpected"),
            std::string::npos);
  EXPECT_NE(error("Content-Disposition: form-data; name=\r\n").find("no value"), std::string::npos);
}

std::string Fields(size_t count) {
  std::string body;
  for (size_t i = 0; i < count; ++i) {
    const std::string value = std::to_string(i);
    body += Field(std::string("f").append(value), value);  // not "f" + value: GCC 12 -Wrestrict
  }
  return body + Close();
}

TEST(MultipartTest, MaxPartsAtItsLimit) {
  auto parts = ParseMultipartFormData(kType, Fields(kDefaultMaxFormParts));
  ASSERT_TRUE(parts) << parts.error().ToString();
  EXPECT_EQ(parts->size(), kDefaultMaxFormParts);
  EXPECT_EQ(ParseError(kType, Fields(kDefaultMaxFormParts + 1)),
            "multipart body has more than max_parts (64) parts");

  const MultipartLimits three{.max_parts = 3};
  EXPECT_TRUE(ParseMultipartFormData(kType, Fields(3), three));
  EXPECT_NE(ParseError(kType, Fields(4), three).find("max_parts (3)"), std::string::npos);
  const MultipartLimits none{.max_parts = 0};
  EXPECT_TRUE(ParseMultipartFormData(kType, Close(), none));
  EXPECT_NE(ParseError(kType, Fields(1), none).find("max_parts (0)"), std::string::npos);
}

// A part whose header lines take exactly `bytes` bytes (CRLFs included, the empty line not).
std::string PartWithHeaderBytes(size_t bytes) {
  const std::string start = "Content-Disposition: form-data; name=x\r\nX-Pad: ";
  const std::string headers = start + std::string(bytes - start.size() - 2, 'p') + "\r\n";
  EXPECT_EQ(headers.size(), bytes);
  return Part(headers, "data") + Close();
}

TEST(MultipartTest, MaxPartHeaderBytesAtItsLimit) {
  const std::string body = PartWithHeaderBytes(kDefaultMaxPartHeaderBytes);  // parts point into it
  auto parts = ParseMultipartFormData(kType, body);
  ASSERT_TRUE(parts) << parts.error().ToString();
  EXPECT_EQ((*parts)[0].data, "data");
  EXPECT_EQ(ParseError(kType, PartWithHeaderBytes(kDefaultMaxPartHeaderBytes + 1)),
            "multipart part headers exceed max_part_header_bytes (8192 bytes)");

  for (size_t limit : {60, 61, 62, 100}) {
    const MultipartLimits limits{.max_part_header_bytes = limit};
    EXPECT_TRUE(ParseMultipartFormData(kType, PartWithHeaderBytes(limit), limits)) << limit;
    EXPECT_NE(ParseError(kType, PartWithHeaderBytes(limit + 1), limits)
                  .find("max_part_header_bytes (" + std::to_string(limit) + " bytes)"),
              std::string::npos)
        << limit;
    // Headers that never end are refused at the limit, not after reading the rest of the body.
    const std::string endless = "--XyZ-123\r\nX-Pad: " + std::string(limit * 3, 'p');
    EXPECT_NE(ParseError(kType, endless, limits).find("max_part_header_bytes"), std::string::npos);
  }
  const MultipartLimits unlimited{.max_part_header_bytes = SIZE_MAX};
  EXPECT_TRUE(ParseMultipartFormData(kType, PartWithHeaderBytes(100), unlimited));
  EXPECT_NE(ParseError(kType, "--XyZ-123\r\nX-Pad: p", unlimited).find("not followed by an empty"),
            std::string::npos);
  // A part without header lines at all is within any limit (and fails for its missing name).
  const MultipartLimits zero{.max_part_header_bytes = 0};
  EXPECT_NE(ParseError(kType, "--XyZ-123\r\n\r\nd\r\n" + Close(), zero).find("Content-Disposition"),
            std::string::npos);
}

TEST(MultipartTest, FormBool) {
  for (const char* yes : {"true", "True", "TRUE", "1", "yes", "YES", "on", "On", "t", "T", "y"}) {
    auto v = ParseFormBool(yes);
    ASSERT_TRUE(v) << yes;
    EXPECT_TRUE(*v) << yes;
  }
  for (const char* no : {"false", "False", "0", "no", "No", "off", "OFF", "f", "F", "n", "N"}) {
    auto v = ParseFormBool(no);
    ASSERT_TRUE(v) << no;
    EXPECT_FALSE(*v) << no;
  }
  for (const char* bad : {"", " true", "true ", "2", "-1", "truee", "yess", "nope", "oui", "10"}) {
    auto v = ParseFormBool(bad);
    ASSERT_FALSE(v) << bad;
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(MultipartTest, FormInt) {
  const std::vector<std::pair<std::string, int64_t>> good = {
      {"0", 0},
      {"42", 42},
      {"-7", -7},
      {"+5", 5},
      {"007", 7},
      {"9223372036854775807", INT64_MAX},
      {"-9223372036854775808", INT64_MIN},
  };
  for (const auto& [text, value] : good) {
    auto v = ParseFormInt(text);
    ASSERT_TRUE(v) << text << ": " << v.error().ToString();
    EXPECT_EQ(*v, value);
  }
  for (const char* bad :
       {"", " 1", "1 ", "1.0", "0x10", "abc", "+-1", "-+1", "-", "+", "1e3", "١٢"}) {
    auto v = ParseFormInt(bad);
    ASSERT_FALSE(v) << bad;
    EXPECT_NE(v.error().message.find("not an integer"), std::string::npos) << bad;
  }
  for (const char* big : {"9223372036854775808", "-9223372036854775809", "99999999999999999999"}) {
    auto v = ParseFormInt(big);
    ASSERT_FALSE(v) << big;
    EXPECT_NE(v.error().message.find("out of range"), std::string::npos) << big;
  }
}

TEST(MultipartTest, SanitizeFileName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"report.pdf", "report.pdf"},
      {"/etc/passwd", "passwd"},
      {"../../etc/passwd", "passwd"},
      {"..\\..\\windows\\evil.exe", "evil.exe"},
      {"C:\\Users\\me\\paper.pdf", "paper.pdf"},
      {"dir/", "file"},
      {"..", "file"},
      {".", "file"},
      {"", "file"},
      {"...", "file"},
      {".bashrc", "bashrc"},
      {". .hidden.pdf", "hidden.pdf"},
      {"name.pdf. . ", "name.pdf"},
      {"a\x01"
       "b\x7f\nc\td.pdf",
       "abcd.pdf"},
      {"what?<>:|*\".pdf", "what.pdf"},
      {"中文 论文.pdf", "中文 论文.pdf"},
      {"Ünïcödé – ok.pdf", "Ünïcödé – ok.pdf"},
      {"\xff\xfe"
       "ab\xe4\xb8.pdf",
       "ab.pdf"},  // ill-formed UTF-8 dropped
      {"\xe2\x80\xae"
       "fdp.exe",
       "fdp.exe"},           // RIGHT-TO-LEFT OVERRIDE
      {"x\xc2\x85y", "xy"},  // C1 control NEL
      {"\xef\xbb\xbf"
       "bom.txt",
       "bom.txt"},  // BOM
      {" spaced name .pdf", "spaced name .pdf"},
      {"%2e%2e%2fetc", "%2e%2e%2fetc"},
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(SanitizeFileName(in), out) << in;
}

TEST(MultipartTest, SanitizeFileNameCapsLength) {
  const std::string ascii(kMaxFileNameBytes, 'a');
  EXPECT_EQ(SanitizeFileName(ascii), ascii);
  EXPECT_EQ(SanitizeFileName(ascii + "b"), ascii);
  EXPECT_EQ(SanitizeFileName(ascii + ".pdf"), std::string(kMaxFileNameBytes - 4, 'a') + ".pdf");

  std::string cjk;
  for (int i = 0; i < 100; ++i) cjk += "文";  // 3 bytes each
  const std::string with_ext = SanitizeFileName(cjk + ".pdf");
  EXPECT_LE(with_ext.size(), kMaxFileNameBytes);
  EXPECT_TRUE(text::IsValidUtf8(with_ext));
  EXPECT_EQ(with_ext, cjk.substr(0, 65 * 3) + ".pdf");  // 195 + 4 bytes: one more would be 202
  const std::string bare = SanitizeFileName(cjk);
  EXPECT_EQ(bare, cjk.substr(0, 66 * 3));  // 198 bytes: a 67th would split at byte 200
  // An "extension" too long to keep is cut like the rest of the name.
  const std::string long_ext = SanitizeFileName("a." + cjk);
  EXPECT_LE(long_ext.size(), kMaxFileNameBytes);
  EXPECT_TRUE(text::IsValidUtf8(long_ext));
  // No trailing dot or space is left where the cut lands.
  EXPECT_EQ(SanitizeFileName(std::string(kMaxFileNameBytes - 5, 'a') + "  . xxxxxxxx.pdf"),
            std::string(kMaxFileNameBytes - 5, 'a') + ".pdf");
}

void ExpectSafeFileName(const std::string& name, std::string_view from) {
  EXPECT_FALSE(name.empty()) << from;
  EXPECT_NE(name.front(), '.') << from;
  EXPECT_LE(name.size(), kMaxFileNameBytes) << from;
  EXPECT_TRUE(text::IsValidUtf8(name)) << from;
  EXPECT_EQ(name.find_first_of("/\\<>:\"|?*"), std::string::npos) << from;
  for (char c : name) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << from;
}

// Thousands of randomly mutated bodies (fixed seed: the same ones every run): the parser never
// crashes and what it accepts satisfies the invariants. Run under the sanitizers in an ASan
// build; here it guards against crashes and out-of-range views.
TEST(MultipartTest, MutatedBodiesNeverCrash) {
  const std::string seed_body =
      "preamble\r\n" + Field("start_page_id", "1") +
      Part(
          "Content-Disposition: form-data; name=\"files\"; filename=\"a.png\"\r\n"
          "Content-Type: image/png\r\n",
          kBinary) +
      Part("Content-Disposition: form-data; name=f; filename*=UTF-8''%E4%B8%AD.pdf\r\n", "pdf") +
      Close() + "epilogue";
  const std::vector<std::string> snippets = {
      "\r\n", "--XyZ-123", "--XyZ-123--", "\r\n\r\n", "\"",    ";",
      "\\",   "%",         ":",           "\0"s,      "name=", "filename*=UTF-8''"};
  std::mt19937 rng(20240611);  // std::mt19937's output is fixed by the standard
  auto below = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  size_t accepted = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    std::string body = seed_body;
    const size_t mutations = 1 + below(4);
    for (size_t m = 0; m < mutations; ++m) {
      const size_t pos = below(body.size() + 1);
      switch (below(6)) {
        case 0:
          if (pos < body.size()) body[pos] = static_cast<char>(rng());
          break;
        case 1:
          body.insert(pos, 1, static_cast<char>(rng()));
          break;
        case 2:
          body.erase(pos, below(16));
          break;
        case 3:
          body.insert(pos, snippets[below(snippets.size())]);
          break;
        case 4:
          body.resize(pos);
          break;
        case 5:
          body.insert(pos, body.substr(below(body.size()), below(64)));
          break;
      }
    }
    const MultipartLimits limits{.max_parts = 1 + below(4),
                                 .max_part_header_bytes = 40 + below(80)};
    for (const MultipartLimits& l : {MultipartLimits{}, limits}) {
      auto parts = ParseMultipartFormData(kType, body, l);
      if (!parts) {
        EXPECT_EQ(parts.error().code, ErrorCode::kInvalidArgument);
        EXPECT_FALSE(parts.error().message.empty());
        continue;
      }
      ++accepted;
      EXPECT_LE(parts->size(), l.max_parts);
      for (const FormPart& part : *parts) {
        EXPECT_FALSE(part.name.empty());
        EXPECT_FALSE(part.content_type.empty());
        EXPECT_GE(part.data.data(), body.data());
        EXPECT_LE(part.data.data() + part.data.size(), body.data() + body.size());
        if (part.filename) ExpectSafeFileName(SanitizeFileName(*part.filename), *part.filename);
      }
    }
    ExpectSafeFileName(SanitizeFileName(body), "the body as a file name");
    ExpectSafeFileName(SanitizeFileName(body.substr(below(body.size()))), "a body suffix");
  }
  // The mutations leave many bodies valid, so the acceptance path was exercised too.
  EXPECT_GT(accepted, 100u);
}

}  // namespace
}  // namespace mineru::service
