// SPDX-License-Identifier: Apache-2.0
// A small, complete DocumentOutputs for the cache and store tests: every file present, one
// image whose bytes include a NUL (the encodings must be binary-safe).
#pragma once

#include <string>
#include <utility>

#include "cache/document_outputs.h"

namespace mineru::jobs::testing {

inline DocumentOutputs SampleOutputs(std::string markdown, std::string name = "") {
  DocumentOutputs o;
  o.name = std::move(name);
  o.markdown = std::move(markdown);
  o.middle_json = "{\"pdf_info\": [{}]}";
  o.model_json = "[]";
  o.content_list = "[]";
  o.report = "{}";
  o.images = {{"crop.jpg", std::string("\xFF\xD8\0\xFF\xD9", 5)}};
  return o;
}

}  // namespace mineru::jobs::testing
