// SPDX-License-Identifier: Apache-2.0
#include "service/upload_form.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <span>
#include <utility>

#include "image/decode.h"

namespace mineru::service {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The media type without parameters, lower case.
std::string MediaType(std::string_view content_type) {
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  while (!type.empty() && type.front() == ' ') type.remove_prefix(1);
  return Lower(type);
}

// "key=value&..." -> value of `key`, percent-decoded ("" when absent).
std::string QueryValue(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) != key || eq == std::string_view::npos) continue;
    std::string out;
    std::string_view v = pair.substr(eq + 1);
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '+') {
        out += ' ';
      } else if (v[i] == '%' && i + 2 < v.size() + 0 &&
                 std::isxdigit(static_cast<unsigned char>(v[i + 1])) &&
                 std::isxdigit(static_cast<unsigned char>(v[i + 2]))) {
        out += static_cast<char>(std::stoi(std::string(v.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      } else {
        out += v[i];
      }
    }
    return out;
  }
  return {};
}

Status SetBool(std::string_view field, std::string_view value, bool* out) {
  auto parsed = ParseFormBool(value);
  if (!parsed) {
    return Fail(ErrorCode::kInvalidArgument, "field '{}': '{}' is not a boolean", field, value);
  }
  *out = *parsed;
  return OkStatus();
}

// MinerU 3.4's fields as sent, checked once the whole form is read (in MinerU's order).
struct RawMineruFields {
  std::optional<std::string> backend;
  std::optional<std::string> effort;
  std::optional<std::string> parse_method;
  std::vector<std::string> lang_list;
  std::optional<bool> image_analysis;
  bool return_original_file = false;
};

Status ApplyField(const FormPart& part, Upload& upload, RawMineruFields& raw) {
  const std::string& name = part.name;
  const std::string_view value = part.data;
  if (name == "formula_enable") return SetBool(name, value, &upload.options.formula);
  if (name == "table_enable") return SetBool(name, value, &upload.options.table);
  if (name == "return_md") return SetBool(name, value, &upload.returns.md);
  if (name == "return_middle_json") return SetBool(name, value, &upload.returns.middle_json);
  if (name == "return_model_output") return SetBool(name, value, &upload.returns.model_output);
  if (name == "return_content_list") return SetBool(name, value, &upload.returns.content_list);
  if (name == "return_images") return SetBool(name, value, &upload.returns.images);
  if (name == "response_format_zip") return SetBool(name, value, &upload.returns.zip);
  if (name == "return_original_file") return SetBool(name, value, &raw.return_original_file);
  if (name == "client_side_output_generation") {
    return SetBool(name, value, &upload.mineru.client_side_output_generation);
  }
  if (name == "image_analysis") {
    bool on = true;
    MINERU_RETURN_IF_ERROR(SetBool(name, value, &on));
    raw.image_analysis = on;
    return OkStatus();
  }
  if (name == "backend") {
    raw.backend = std::string(value);
    return OkStatus();
  }
  if (name == "effort") {
    raw.effort = std::string(value);
    return OkStatus();
  }
  if (name == "parse_method") {
    raw.parse_method = std::string(value);
    return OkStatus();
  }
  if (name == "lang_list") {
    raw.lang_list.emplace_back(value);
    return OkStatus();
  }
  if (name == "server_url") {
    // Blank is absent (MinerU tests server_url.strip()).
    if (value.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      upload.mineru.server_url = std::string(value);
    }
    return OkStatus();
  }
  if (name == "start_page_id" || name == "end_page_id") {
    auto page = ParseFormInt(value);
    if (!page || *page < 0) {
      return Fail(ErrorCode::kInvalidArgument, "field '{}': '{}' is not a page number (0 or more)",
                  name, value);
    }
    if (name == "start_page_id") {
      if (*page > 0)
        upload.options.start_page = static_cast<int>(std::min<int64_t>(*page, kMineruLastPage));
    } else if (*page < kMineruLastPage) {
      upload.options.end_page = static_cast<int>(*page);
    }
    return OkStatus();
  }
  // output_dir (gone in MinerU 3.4), model, api_key, ...: accepted, no effect here.
  return OkStatus();
}

// MinerU 3.4's checks and the fields' effects on each other, in MinerU's order: backend, effort,
// client_side_output_generation, return_original_file, lang_list, parse_method.
Status FinishMineruFields(RawMineruFields raw, Upload& upload) {
  if (raw.backend) {
    MINERU_ASSIGN_OR_RETURN(upload.backend, NormalizeMineruBackend(*raw.backend));
  }
  if (raw.effort) {
    MINERU_RETURN_IF_ERROR(ValidateMineruEffort(*raw.effort));
    upload.mineru.effort = std::move(*raw.effort);
  }
  if (upload.mineru.client_side_output_generation) {
    upload.returns.md = false;
    upload.returns.middle_json = true;
    upload.returns.model_output = true;
    upload.returns.content_list = false;
    upload.returns.images = true;
  }
  upload.returns.original_file = raw.return_original_file && upload.returns.zip;
  if (!raw.lang_list.empty()) {
    upload.mineru.lang_list.clear();
    for (const std::string& lang : raw.lang_list) {
      MINERU_ASSIGN_OR_RETURN(std::string name, NormalizeMineruOcrLanguage(lang));
      upload.mineru.lang_list.push_back(std::move(name));
    }
  }
  if (raw.parse_method) {
    MINERU_RETURN_IF_ERROR(ValidateMineruParseMethod(*raw.parse_method));
    upload.mineru.parse_method = std::move(*raw.parse_method);
  }
  upload.options.image_analysis = raw.image_analysis;
  // Hybrid backends analyse images only with effort high.
  if (IsMineruHybridBackend(upload.backend) && upload.mineru.effort == "medium") {
    upload.options.image_analysis = false;
  }
  return OkStatus();
}

Result<Upload> ReadForm(const HttpRequest& request, const MultipartLimits& limits) {
  MINERU_ASSIGN_OR_RETURN(
      std::vector<FormPart> parts,
      ParseMultipartFormData(request.Header("Content-Type"), request.body, limits));
  Upload upload;
  RawMineruFields raw;
  for (const FormPart& part : parts) {
    if (part.filename) {
      if (part.name != "files" && part.name != "file") continue;
      upload.files.push_back({SanitizeFileName(*part.filename), std::string(part.data)});
      continue;
    }
    MINERU_RETURN_IF_ERROR(ApplyField(part, upload, raw));
  }
  if (upload.files.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "no file in the form: send the document as a 'files' (or 'file') part");
  }
  MINERU_RETURN_IF_ERROR(FinishMineruFields(std::move(raw), upload));
  return upload;
}

// The extension a raw upload's name gets from its content.
std::string_view ExtensionFor(std::string_view bytes) {
  if (bytes.substr(0, 1024).find("%PDF-") != std::string_view::npos) return ".pdf";
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  switch (image::SniffFormat(std::span(data, bytes.size()))) {
    case image::ImageFormat::kPng:
      return ".png";
    case image::ImageFormat::kJpeg:
      return ".jpg";
    case image::ImageFormat::kWebp:
      return ".webp";
    case image::ImageFormat::kTiff:
      return ".tiff";
    case image::ImageFormat::kBmp:
      return ".bmp";
    case image::ImageFormat::kGif:
      return ".gif";
    case image::ImageFormat::kUnknown:
      break;
  }
  return "";
}

}  // namespace

Result<Upload> ReadUpload(const HttpRequest& request, const MultipartLimits& limits) {
  const std::string type = MediaType(request.Header("Content-Type"));
  Upload upload;
  if (type == "multipart/form-data") {
    MINERU_ASSIGN_OR_RETURN(upload, ReadForm(request, limits));
  } else if (type == "application/pdf" || type.rfind("image/", 0) == 0 ||
             type == "application/octet-stream") {
    if (request.body.empty()) return Fail(ErrorCode::kInvalidArgument, "the body is empty");
    std::string name = QueryValue(request.query, "filename");
    name = name.empty() ? "document" + std::string(ExtensionFor(request.body))
                        : SanitizeFileName(name);
    upload.files.push_back({std::move(name), request.body});
  } else {
    return Fail(ErrorCode::kUnsupported,
                "Content-Type '{}' is not accepted: send multipart/form-data, application/pdf "
                "or image/*",
                type.empty() ? "(none)" : type);
  }
  if (upload.options.start_page && upload.options.end_page &&
      *upload.options.start_page > *upload.options.end_page) {
    return Fail(ErrorCode::kInvalidArgument, "start_page_id {} is past end_page_id {}",
                *upload.options.start_page, *upload.options.end_page);
  }
  return upload;
}

}  // namespace mineru::service
