// SPDX-License-Identifier: Apache-2.0
// Reads a document upload: MinerU's multipart form (POST /file_parse, /tasks,
// /v1/document/parse) or a raw document body (POST /v1/document/parse with Content-Type
// application/pdf or image/*), into task inputs and parse options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "service/http_server.h"
#include "service/mineru_form.h"
#include "service/multipart.h"
#include "tasks/task.h"

namespace mineru::service {

// MinerU's return flags (mineru-api /file_parse and /tasks), with its defaults.
struct ReturnOptions {
  bool md = true;
  bool middle_json = false;
  bool model_output = false;
  bool content_list = false;
  bool images = false;
  // Ours, for the full ZIP (AllOutputs): files MinerU's form has no flag for.
  bool content_list_v2 = false;
  bool layout_pdf = false;
  bool zip = false;            // response_format_zip
  bool original_file = false;  // return_original_file; only ever set together with zip
};

// MinerU 3.4's other form fields (service/mineru_form.h has their value rules), validated and
// normalised; our pipeline answers every backend alike, so they only shape the answers.
struct MineruFields {
  std::string effort{kMineruDefaultEffort};
  std::string parse_method{kMineruDefaultParseMethod};
  std::vector<std::string> lang_list{std::string(kMineruDefaultLanguage)};  // public names
  std::optional<std::string> server_url;  // as sent, when not blank (never contacted)
  // The client builds Markdown and content lists itself: the return flags are forced to
  // middle JSON, model output and images only (md and content_list off).
  bool client_side_output_generation = false;
};

struct Upload {
  std::vector<jobs::TaskInput> files;
  jobs::ParseOptions options;
  ReturnOptions returns;
  std::string backend;  // normalised (aliases resolved); "" when absent
  MineruFields mineru;
};

// MinerU's end_page_id default: "to the last page".
inline constexpr int64_t kMineruLastPage = 99999;

// Errors (kInvalidArgument, with the field named or MinerU's own text): not multipart or a
// document type, a malformed form, no file part, a field that is not a bool or an integer where
// one is due, negative page ids or start past end, a backend, effort, parse_method or lang_list
// value MinerU refuses. Unknown fields (output_dir among them) are ignored, as FastAPI does.
//
// image_analysis goes to options.image_analysis as sent; a hybrid backend with effort medium
// (MinerU's default effort) sets it false whatever was sent, as MinerU 3.4 does. Neither an
// image_analysis field nor a hybrid backend: unset (the profile decides).
Result<Upload> ReadUpload(const HttpRequest& request, const MultipartLimits& limits = {});

}  // namespace mineru::service
