// SPDX-License-Identifier: Apache-2.0
#include "service/mineru_form.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <span>

namespace mineru::service {
namespace {

bool Contains(std::span<const std::string_view> values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

std::string Joined(std::span<const std::string_view> values) {
  return fmt::format("{}", fmt::join(values, ", "));
}

// Written like ch's, read by ch's OCR model.
constexpr std::array<std::string_view, 4> kChAliases = {"en", "japan", "chinese_cht", "latin"};

}  // namespace

Result<std::string> NormalizeMineruBackend(std::string_view backend) {
  if (backend == "vlm-auto-engine") return std::string("vlm-engine");
  if (backend == "hybrid-auto-engine") return std::string("hybrid-engine");
  if (!Contains(kMineruBackends, backend)) {
    return Fail(ErrorCode::kInvalidArgument, "Invalid backend. Allowed values: {}",
                Joined(kMineruBackends));
  }
  return std::string(backend);
}

Status ValidateMineruEffort(std::string_view effort) {
  if (effort != "medium" && effort != "high") {
    return Fail(ErrorCode::kInvalidArgument, "Invalid effort. Allowed values: medium, high");
  }
  return OkStatus();
}

Status ValidateMineruParseMethod(std::string_view parse_method) {
  if (parse_method != "auto" && parse_method != "txt" && parse_method != "ocr") {
    return Fail(ErrorCode::kInvalidArgument,
                "Invalid parse_method. Allowed values: auto, ocr, txt");
  }
  return OkStatus();
}

Result<std::string> NormalizeMineruOcrLanguage(std::string_view lang) {
  if (Contains(kChAliases, lang)) return std::string(kMineruDefaultLanguage);
  if (!Contains(kMineruOcrLanguages, lang)) {
    return Fail(ErrorCode::kInvalidArgument, "Language {} not supported. Allowed values: {}", lang,
                Joined(kMineruOcrLanguages));
  }
  return std::string(lang);
}

bool IsMineruHttpClientBackend(std::string_view backend) {
  return backend.ends_with("-http-client");
}

bool IsMineruHybridBackend(std::string_view backend) { return backend.starts_with("hybrid-"); }

}  // namespace mineru::service
