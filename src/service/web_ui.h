// SPDX-License-Identifier: Apache-2.0
// The web UI: static HTML, CSS and JavaScript embedded in the binary (cmake/WebUi.cmake), with
// marked, KaTeX and DOMPurify installed from npm at build time. Nothing is fetched from
// elsewhere at run time.
//
//   GET /                          index.html
//   GET /ui/{file}                 web/src/<file> (app.js, style.css, ...)
//   GET /ui/vendor/{file}          marked.esm.js, katex.mjs, katex.min.css, purify.es.mjs
//   GET /ui/vendor/fonts/{file}    KaTeX's woff2 fonts
//
// Every answer, 404s included, carries kWebUiContentSecurityPolicy, "X-Content-Type-Options:
// nosniff" and "Referrer-Policy: no-referrer". Files are served with "Cache-Control: no-cache"
// and a strong ETag (their URLs carry no version, so browsers must revalidate; an unchanged file
// costs a 304). A build without the UI (-DMINERU_WEB_UI=OFF) answers `/` with a short page
// saying so, and 404 for the rest.
#pragma once

#include <span>
#include <string_view>

#include "service/http_server.h"

namespace mineru::service {

// default-src 'self' and no inline script: scripts only from our own files, nothing from another
// origin. Styles: style sheets and <style> elements only from our files (style-src 'self', which
// style-src-elem falls back to), but inline style *attributes* are allowed (style-src-attr
// 'unsafe-inline'). KaTeX needs them: the UI calls katex.render(), which sets most styles through
// the CSSOM (not restricted by CSP) but a few with setAttribute("style", ...), e.g. the widths
// of the SVG pieces of tall delimiters and stretchy accents, which would otherwise render
// wrongly. Style attributes cannot run script, and url() in them can only reach this origin
// (img-src, font-src); the document's own HTML (tables from the model) is sanitized with style
// attributes removed, so only KaTeX's output carries any. A browser without style-src-attr
// falls back to style-src 'self' (safe; those few KaTeX pieces degrade). img-src also allows
// data: and blob: for images the user picks for the chat. No plugins, no <base>, no form posts,
// no framing (clickjacking).
inline constexpr std::string_view kWebUiContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// One embedded file. `path` is where it is served, without the leading '/' ("index.html",
// "ui/app.js", "ui/vendor/fonts/KaTeX_Main-Regular.woff2").
struct WebAsset {
  std::string_view path;
  std::string_view bytes;
};

// Every embedded file, sorted by path; empty in a build without the UI. Defined in the source
// that cmake/EmbedFiles.cmake generates.
std::span<const WebAsset> EmbeddedWebAssets();

// The Content-Type for a served path, by its extension; "" when the extension is not one the UI
// uses (such a file is never served).
std::string_view WebContentType(std::string_view path);

// Registers the routes above.
void AddWebUiRoutes(HttpServer& server);

}  // namespace mineru::service
