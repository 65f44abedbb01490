// SPDX-License-Identifier: Apache-2.0
// Reads a document upload: MinerU's multipart form (POST /file_parse, /tasks,
// /v1/document/parse) or a raw document body (POST /v1/document/parse with Content-Type
// application/pdf or image/*), into task inputs and parse options.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/task.h"
#include "service/http_server.h"
#include "service/multipart.h"

namespace mineru::service {

// MinerU's form fields beyond the parse options (spec mineru.md 4.2), with its defaults.
struct ReturnOptions {
  bool md = true;
  bool middle_json = false;
  bool model_output = false;
  bool content_list = false;
  bool images = false;
  bool zip = false;  // response_format_zip
};

struct Upload {
  std::vector<jobs::TaskInput> files;
  jobs::ParseOptions options;
  ReturnOptions returns;
  std::string backend;  // as sent ("" when absent)
};

// MinerU's end_page_id default: "to the last page".
inline constexpr int64_t kMineruLastPage = 99999;

// Errors (kInvalidArgument, with the field named): not multipart or a document type, a
// malformed form, no file part, a field that is not a bool or an integer where one is due,
// negative page ids or start past end. Unknown fields are ignored, as FastAPI does.
Result<Upload> ReadUpload(const HttpRequest& request, const MultipartLimits& limits = {});

}  // namespace mineru::service
