// SPDX-License-Identifier: Apache-2.0
// The embedded web UI (service/web_ui.h) on a real server: every embedded file is served
// byte-identical to its source with the right Content-Type and the security headers, unknown
// paths are 404, index.html has no inline script, and every file the UI references is embedded.
#include "service/web_ui.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "../support/http_client.h"
#include "../support/scratch.h"

namespace mineru::service {
namespace {

using testing_support::Exchange;
using testing_support::HttpReply;
using testing_support::ReadFile;

// served path -> source file, from the manifest that cmake/EmbedFiles.cmake writes.
std::map<std::string, std::string> Manifest() {
  std::map<std::string, std::string> out;
  std::ifstream in(MINERU_WEB_UI_MANIFEST);
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) out[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return out;
}

std::string UrlOf(const std::string& served_path) {
  return served_path == "index.html" ? "/" : "/" + served_path;
}

class WebUiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddWebUiRoutes(server_);
    ServerOptions options;
    options.port = 0;
    ASSERT_TRUE(server_.Start(options).has_value());
  }
  void TearDown() override { server_.Stop(std::chrono::milliseconds(0)); }

  HttpReply Get(const std::string& url, const std::string& extra_headers = "") {
    std::optional<HttpReply> r = Exchange(server_.port(), "GET", url, "", "", extra_headers);
    EXPECT_TRUE(r.has_value()) << url;
    return r.value_or(HttpReply{});
  }

  static void ExpectSecurityHeaders(const HttpReply& r, const std::string& url) {
    EXPECT_EQ(r.Header("content-security-policy"), kWebUiContentSecurityPolicy) << url;
    EXPECT_EQ(r.Header("x-content-type-options"), "nosniff") << url;
    EXPECT_EQ(r.Header("referrer-policy"), "no-referrer") << url;
  }

  HttpServer server_;
};

TEST(WebUiPolicyTest, PolicyIsStrict) {
  const std::string csp(kWebUiContentSecurityPolicy);
  for (const char* directive :
       {"default-src 'self'", "script-src 'self';", "style-src 'self';", "object-src 'none'",
        "base-uri 'none'", "frame-ancestors 'none'", "connect-src 'self'", "font-src 'self'",
        "img-src 'self' data: blob:"}) {
    EXPECT_NE(csp.find(directive), std::string::npos) << directive;
  }
  // The one relaxation: style attributes (KaTeX), never scripts, style elements or eval.
  EXPECT_NE(csp.find("; style-src-attr 'unsafe-inline';"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe"), csp.find("unsafe-inline'; img-src"));
  EXPECT_EQ(csp.rfind("unsafe"), csp.find("unsafe"));
  EXPECT_EQ(csp.find("http"), std::string::npos);
  EXPECT_EQ(csp.find('*'), std::string::npos);
}

TEST(WebUiPolicyTest, ContentTypesByExtension) {
  EXPECT_EQ(WebContentType("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(WebContentType("ui/app.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(WebContentType("ui/vendor/katex.mjs"), "text/javascript; charset=utf-8");
  EXPECT_EQ(WebContentType("ui/style.css"), "text/css; charset=utf-8");
  EXPECT_EQ(WebContentType("ui/vendor/fonts/KaTeX_Main-Regular.woff2"), "font/woff2");
  EXPECT_EQ(WebContentType("ui/README"), "");
  EXPECT_EQ(WebContentType("ui.d/README"), "");
  EXPECT_EQ(WebContentType("ui/app.js.map"), "");
}

#if MINERU_WEB_UI_ENABLED

TEST_F(WebUiTest, IndexIsServedWithThePolicy) {
  HttpReply r = Get("/");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(r.Header("cache-control"), "no-cache");
  ExpectSecurityHeaders(r, "/");
  EXPECT_EQ(r.body, ReadFile(MINERU_WEB_DIR "/src/index.html"));
}

TEST_F(WebUiTest, EveryEmbeddedFileIsServedByteIdentical) {
  const auto manifest = Manifest();
  ASSERT_FALSE(manifest.empty()) << MINERU_WEB_UI_MANIFEST;
  ASSERT_EQ(manifest.size(), EmbeddedWebAssets().size());
  for (const auto& [path, source] : manifest) {
    const std::string url = UrlOf(path);
    HttpReply r = Get(url);
    EXPECT_EQ(r.status, 200) << url;
    EXPECT_FALSE(WebContentType(path).empty()) << path;
    EXPECT_EQ(r.Header("content-type"), WebContentType(path)) << url;
    ExpectSecurityHeaders(r, url);
    const std::string expected = ReadFile(source);
    EXPECT_FALSE(expected.empty()) << source;
    EXPECT_TRUE(r.body == expected) << url << " differs from " << source;
  }
}

TEST_F(WebUiTest, EverySourceFileAndLibraryIsEmbedded) {
  const auto manifest = Manifest();
  std::set<std::string> sources;
  for (const auto& [path, source] : manifest) sources.insert(source);
  const std::filesystem::path src_dir = MINERU_WEB_DIR "/src";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src_dir)) {
    if (!entry.is_regular_file()) continue;
    EXPECT_TRUE(sources.count(entry.path().string())) << entry.path() << " is not embedded";
  }
  for (const char* lib : {"ui/vendor/marked.esm.js", "ui/vendor/katex.mjs",
                          "ui/vendor/katex.min.css", "ui/vendor/purify.es.mjs"}) {
    EXPECT_TRUE(manifest.count(lib)) << lib;
  }
  // katex.min.css lists woff2, woff and ttf for each font; browsers take the first format they
  // support, and every browser that runs ES modules supports woff2.
  const std::string css = ReadFile(manifest.at("ui/vendor/katex.min.css"));
  const std::regex font(R"(url\((fonts/[A-Za-z0-9_-]+\.woff2)\))");
  int fonts = 0;
  for (auto it = std::sregex_iterator(css.begin(), css.end(), font); it != std::sregex_iterator();
       ++it, ++fonts) {
    EXPECT_TRUE(manifest.count("ui/vendor/" + (*it)[1].str())) << (*it)[1];
  }
  EXPECT_GT(fonts, 10);
}

TEST_F(WebUiTest, IndexHasNoInlineScriptAndOnlyEmbeddedReferences) {
  const std::string html = ReadFile(MINERU_WEB_DIR "/src/index.html");
  ASSERT_FALSE(html.empty());
  const std::regex script_tag(R"(<script\b([^>]*)>([\s\S]*?)</script>)", std::regex::icase);
  int scripts = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), script_tag);
       it != std::sregex_iterator(); ++it, ++scripts) {
    EXPECT_NE((*it)[1].str().find("src="), std::string::npos) << "inline script: " << it->str();
    EXPECT_EQ((*it)[2].str(), "") << it->str();
  }
  EXPECT_GT(scripts, 0);
  // Inline event handlers (onclick=...) would be blocked by the policy anyway.
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(\son[a-z]+\s*=)", std::regex::icase)));
  EXPECT_EQ(html.find("style="), std::string::npos);
  EXPECT_EQ(html.find("<style"), std::string::npos);

  const auto manifest = Manifest();
  const std::regex ref(R"re((?:src|href)="([^"#]+)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), ref); it != std::sregex_iterator();
       ++it) {
    EXPECT_TRUE(manifest.count((*it)[1].str())) << "index.html refers to " << (*it)[1];
  }
}

TEST_F(WebUiTest, ModulesImportOnlyEmbeddedFilesAndNothingRemote) {
  const auto manifest = Manifest();
  const std::regex import(R"(\bfrom\s+'(\.[^']+)')");
  int imports = 0;
  for (const auto& [path, source] : manifest) {
    if (path.rfind("ui/vendor/", 0) == 0) continue;  // the libraries are checked by the e2e test
    const std::string_view type = WebContentType(path);
    if (type.find("image/") == 0) continue;  // an SVG names its XML namespace by URL
    const std::string text = ReadFile(source);
    EXPECT_EQ(text.find("http://"), std::string::npos) << path;
    EXPECT_EQ(text.find("https://"), std::string::npos) << path;
    if (type.find("javascript") == std::string::npos) continue;
    const std::string dir = path.substr(0, path.rfind('/') + 1);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), import);
         it != std::sregex_iterator(); ++it, ++imports) {
      const std::string target =
          std::filesystem::path(dir + (*it)[1].str()).lexically_normal().generic_string();
      EXPECT_TRUE(manifest.count(target)) << path << " imports " << (*it)[1];
    }
  }
  EXPECT_GT(imports, 0);
}

TEST_F(WebUiTest, UnknownPathsAre404WithThePolicy) {
  for (const char* url : {"/ui/nope.js", "/ui/vendor/nope.mjs", "/ui/vendor/fonts/nope.woff2",
                          "/ui/index.html", "/ui/vendor/marked.esm.js.map", "/ui/..%2Fweb_ui.cc",
                          "/ui/vendor/fonts/..%2F..%2Fapp.js"}) {
    HttpReply r = Get(url);
    EXPECT_EQ(r.status, 404) << url;
    ExpectSecurityHeaders(r, url);
  }
}

TEST_F(WebUiTest, UnchangedFileIsNotModified) {
  HttpReply first = Get("/ui/vendor/katex.min.css");
  ASSERT_EQ(first.status, 200);
  const std::string etag = first.Header("etag");
  ASSERT_EQ(etag.size(), 18u) << etag;
  HttpReply again = Get("/ui/vendor/katex.min.css", "If-None-Match: " + etag + "\r\n");
  EXPECT_EQ(again.status, 304);
  EXPECT_EQ(again.body, "");
  ExpectSecurityHeaders(again, "304");
  HttpReply other = Get("/ui/vendor/katex.min.css", "If-None-Match: \"0000000000000000\"\r\n");
  EXPECT_EQ(other.status, 200);
  HttpReply index = Get("/");
  EXPECT_NE(index.Header("etag"), etag);
}

#else

TEST_F(WebUiTest, WithoutTheUiTheRootSaysSo) {
  EXPECT_TRUE(EmbeddedWebAssets().empty());
  HttpReply r = Get("/");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("without the web UI"), std::string::npos);
  ExpectSecurityHeaders(r, "/");
  EXPECT_EQ(Get("/ui/app.js").status, 404);
}

#endif

}  // namespace
}  // namespace mineru::service
