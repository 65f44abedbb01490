// SPDX-License-Identifier: Apache-2.0
// The web UI's routes: embedded files by path, with the security headers of service/web_ui.h.
#include "service/web_ui.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace mineru::service {
namespace {

constexpr std::string_view kNotBuiltPage =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<title>mineru-cpp</title></head><body><h1>mineru-cpp</h1>"
    "<p>This server was built without the web UI (configured with -DMINERU_WEB_UI=OFF). "
    "The HTTP API is available; see docs/API.md.</p></body></html>\n";

// A strong validator: FNV-1a 64 of the bytes, quoted. Only needs to change when the bytes do.
std::string ETagOf(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

struct ServedFile {
  std::string_view bytes;
  std::string_view content_type;
  std::string etag;
};

// Built once, on first use; read-only afterwards, so handler threads share it without locks.
const std::map<std::string_view, ServedFile>& ServedFiles() {
  static const auto* files = [] {
    auto* m = new std::map<std::string_view, ServedFile>();
    for (const WebAsset& a : EmbeddedWebAssets()) {
      std::string_view type = WebContentType(a.path);
      if (type.empty()) continue;  // not a kind of file the UI serves
      (*m)[a.path] = ServedFile{a.bytes, type, ETagOf(a.bytes)};
    }
    return m;
  }();
  return *files;
}

void AddSecurityHeaders(HttpResponse& r) {
  r.headers["Content-Security-Policy"] = std::string(kWebUiContentSecurityPolicy);
  r.headers["X-Content-Type-Options"] = "nosniff";
  r.headers["Referrer-Policy"] = "no-referrer";
}

HttpResponse NotFound(std::string_view path) {
  HttpResponse r = HttpResponse::Text(404, "no such file: /" + std::string(path) + "\n");
  AddSecurityHeaders(r);
  return r;
}

// If-None-Match holds one or more entity tags, or "*" (RFC 9110 13.1.2; weak comparison).
bool MatchesETag(std::string_view if_none_match, std::string_view etag) {
  if (if_none_match == "*") return true;
  size_t pos = 0;
  while ((pos = if_none_match.find(etag, pos)) != std::string_view::npos) {
    if (pos + etag.size() == if_none_match.size() || if_none_match[pos + etag.size()] == ',' ||
        if_none_match[pos + etag.size()] == ' ')
      return true;
    pos += etag.size();
  }
  return false;
}

HttpResponse Serve(const HttpRequest& request, std::string_view path) {
  const auto& files = ServedFiles();
  auto it = files.find(path);
  if (it == files.end()) {
    if (path == "index.html" && EmbeddedWebAssets().empty()) {
      HttpResponse r;
      r.status = 200;
      r.body = std::string(kNotBuiltPage);
      r.headers["Content-Type"] = "text/html; charset=utf-8";
      r.headers["Cache-Control"] = "no-cache";
      AddSecurityHeaders(r);
      return r;
    }
    return NotFound(path);
  }
  const ServedFile& file = it->second;
  HttpResponse r;
  r.headers["ETag"] = file.etag;
  r.headers["Cache-Control"] = "no-cache";
  AddSecurityHeaders(r);
  if (MatchesETag(request.Header("If-None-Match"), file.etag)) {
    r.status = 304;
    return r;
  }
  r.status = 200;
  r.headers["Content-Type"] = std::string(file.content_type);
  r.body = std::string(file.bytes);
  return r;
}

}  // namespace

std::string_view WebContentType(std::string_view path) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
  };
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) return "";
  std::string_view ext = path.substr(dot);
  for (const auto& [e, type] : kTypes) {
    if (e == ext) return type;
  }
  return "";
}

void AddWebUiRoutes(HttpServer& server) {
  // Public (no API key): static files with no data in them, which a browser loads without
  // headers; the page they make asks for the key.
  const RouteTraits kPublic{.public_access = true};
  server.Route(
      "GET", "/", [](const HttpRequest& r) { return Serve(r, "index.html"); }, kPublic);
  server.Route(
      "GET", "/ui/{file}", [](const HttpRequest& r) { return Serve(r, "ui/" + r.Param("file")); },
      kPublic);
  server.Route(
      "GET", "/ui/vendor/{file}",
      [](const HttpRequest& r) { return Serve(r, "ui/vendor/" + r.Param("file")); }, kPublic);
  server.Route(
      "GET", "/ui/vendor/fonts/{file}",
      [](const HttpRequest& r) { return Serve(r, "ui/vendor/fonts/" + r.Param("file")); }, kPublic);
}

}  // namespace mineru::service
