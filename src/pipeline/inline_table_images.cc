// SPDX-License-Identifier: Apache-2.0
#include "pipeline/inline_table_images.h"

#include <algorithm>
#include <array>

#include "base/sha256.h"
#include "image/data_url.h"
#include "pipeline/python_text.h"

namespace mineru::pipeline {
namespace {

constexpr std::string_view kSrcPrefix = "src=\"data:image/";
constexpr size_t kMaxExtensionLength = 16;

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool IsSafeExtension(std::string_view ext) {
  return !ext.empty() && ext.size() <= kMaxExtensionLength &&
         std::all_of(ext.begin(), ext.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
         });
}

}  // namespace

std::string RewriteInlineTableImages(std::string_view html, const InlineImageFn& inline_image) {
  if (!inline_image || html.find("base64,") == std::string_view::npos) return std::string(html);
  std::string out;
  out.reserve(html.size());
  size_t copied = 0;  // html[0, copied) is in `out`
  size_t from = 0;
  while (true) {
    const size_t at = html.find(kSrcPrefix, from);
    if (at == std::string_view::npos) break;
    const size_t uri_begin = at + 5;  // after src="
    const size_t close = html.find('"', at + kSrcPrefix.size());
    if (close == std::string_view::npos) break;  // no later match can close either
    if (close == at + kSrcPrefix.size()) {       // [^"]+ needs one character
      from = at + 1;
      continue;
    }
    const std::string name = inline_image(html.substr(uri_begin, close - uri_begin));
    if (!name.empty()) {
      out.append(html.substr(copied, at - copied));
      out += "src=\"";
      out += name;
      out += '"';
      copied = close + 1;
    }
    from = close + 1;
  }
  out.append(html.substr(copied));
  return out;
}

Result<InlineTableImage> DecodeInlineTableImage(std::string_view data_uri, uint64_t max_bytes) {
  // data:image/([^;]+);base64,(.+)
  constexpr std::string_view kPrefix = "data:image/", kMarker = ";base64,";
  if (!data_uri.starts_with(kPrefix)) {
    return Fail(ErrorCode::kInvalidArgument, "inline table image: not a data:image/ URI");
  }
  const size_t semicolon = data_uri.find(';', kPrefix.size());
  if (semicolon == std::string_view::npos || semicolon == kPrefix.size() ||
      data_uri.substr(semicolon, kMarker.size()) != kMarker ||
      data_uri.size() == semicolon + kMarker.size()) {
    return Fail(ErrorCode::kInvalidArgument,
                "inline table image: not of the form data:image/FMT;base64,DATA");
  }
  const std::string format =
      AsciiLower(data_uri.substr(kPrefix.size(), semicolon - kPrefix.size()));
  const std::string_view trimmed = PythonStrip(format);
  if (trimmed == "wmf" || trimmed == "x-wmf" || trimmed == "emf" || trimmed == "x-emf") {
    return Fail(ErrorCode::kUnsupported,
                "inline table image: WMF/EMF images are not converted (image/{})", trimmed);
  }
  std::string ext = format.substr(0, format.find('+'));
  if (ext == "jpeg") ext = "jpg";
  if (!IsSafeExtension(ext)) {
    return Fail(ErrorCode::kInvalidArgument,
                "inline table image: image type is not a plain file extension");
  }
  MINERU_ASSIGN_OR_RETURN(image::DataUrl decoded, image::ParseDataUrl(data_uri, max_bytes));
  InlineTableImage out;
  out.file_name = HexString(Sha256Of(data_uri)) + "." + ext;
  out.bytes = std::move(decoded.bytes);
  return out;
}

}  // namespace mineru::pipeline
