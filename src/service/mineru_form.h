// SPDX-License-Identifier: Apache-2.0
// The value rules of MinerU 3.4's mineru-api form fields (MinerU 3.4.4 mineru/cli/api_request.py,
// backend_options.py, mineru/utils/ocr_language.py), with MinerU's error texts:
//
//   backend       pipeline, vlm-engine, hybrid-engine, vlm-http-client, hybrid-http-client;
//                 the 2.x names vlm-auto-engine and hybrid-auto-engine are aliases of
//                 vlm-engine and hybrid-engine; anything else is refused.
//   effort        medium (the default) or high; only hybrid backends use it, and medium turns
//                 image analysis off.
//   parse_method  auto (the default), txt or ocr.
//   lang_list     each entry one of the public OCR languages (kMineruOcrLanguages); en, japan,
//                 chinese_cht and latin are accepted as ch (their OCR model is ch's).
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mineru::service {

inline constexpr std::array<std::string_view, 5> kMineruBackends = {
    "pipeline", "vlm-engine", "hybrid-engine", "vlm-http-client", "hybrid-http-client"};

// The languages MinerU 3.4's API offers for OCR: ch (Chinese, English, Japanese, traditional
// Chinese, Latin scripts), ch_server (the same with the larger model), korean, ta (Tamil), te
// (Telugu), ka (Kannada), th (Thai), el (Greek), arabic (Arabic, Persian, Uyghur, Urdu, Pashto,
// Kurdish, Sindhi, Balochi), east_slavic (Russian, Belarusian, Ukrainian), cyrillic (those and
// the other Cyrillic-script languages) and devanagari (Hindi, Marathi, Nepali, Sanskrit and
// others); most with English too.
inline constexpr std::array<std::string_view, 12> kMineruOcrLanguages = {
    "ch", "ch_server", "korean", "ta",          "te",       "ka",
    "th", "el",        "arabic", "east_slavic", "cyrillic", "devanagari"};

inline constexpr std::string_view kMineruDefaultEffort = "medium";
inline constexpr std::string_view kMineruDefaultParseMethod = "auto";
inline constexpr std::string_view kMineruDefaultLanguage = "ch";

// The backend's current name; kInvalidArgument "Invalid backend. Allowed values: ..." otherwise.
Result<std::string> NormalizeMineruBackend(std::string_view backend);
// kInvalidArgument "Invalid effort. Allowed values: medium, high" unless medium or high.
Status ValidateMineruEffort(std::string_view effort);
// kInvalidArgument "Invalid parse_method. Allowed values: auto, ocr, txt" otherwise.
Status ValidateMineruParseMethod(std::string_view parse_method);
// The OCR language's public name (aliases of ch become "ch"); kInvalidArgument "Language X not
// supported. Allowed values: ..." otherwise.
Result<std::string> NormalizeMineruOcrLanguage(std::string_view lang);

// Names as NormalizeMineruBackend returns them.
bool IsMineruHttpClientBackend(std::string_view backend);  // *-http-client
bool IsMineruHybridBackend(std::string_view backend);      // hybrid-*

}  // namespace mineru::service
