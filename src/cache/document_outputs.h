// SPDX-License-Identifier: Apache-2.0
// The files one parsed document produced (pipeline/document.h), held in memory: what the API
// returns, zips and caches.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace mineru::jobs {

struct DocumentOutputs {
  std::string name;          // the file stem: <name>.md, <name>_middle.json, ...
  std::string markdown;      // <name>.md
  std::string middle_json;   // <name>_middle.json, as written
  std::string model_json;    // <name>_model.json
  std::string content_list;  // <name>_content_list.json
  std::string report;        // <name>_report.json
  // Files a document may lack (outputs of earlier releases, a layout PDF that could not be
  // drawn): empty when absent, and then not written back.
  std::string content_list_v2;  // <name>_content_list_v2.json
  std::string layout_pdf;       // <name>_layout.pdf
  // images/<file name> -> JPEG bytes, sorted by name.
  std::vector<std::pair<std::string, std::string>> images;

  // Bytes held (what a cache entry costs).
  uint64_t ByteSize() const;
};

// A name that stays one file inside its directory: not empty, no '/', no NUL, no leading '.'
// (so neither "." nor ".." nor a hidden file). Names from outside are checked with it before
// they become paths.
bool IsPlainFileName(std::string_view name);

// Largest output set read back from disk: a document whose outputs are bigger is an error
// rather than a memory spike.
inline constexpr uint64_t kDefaultMaxOutputBytes = 1ull << 30;

// Reads <dir>/<name>.md, _middle.json, _model.json, _content_list.json, _report.json, when they
// exist _content_list_v2.json and _layout.pdf, and every file of images/ (as
// pipeline::ParseDocument writes them into <output>/<name>/vlm).
Result<DocumentOutputs> ReadDocumentOutputs(const std::string& dir, const std::string& name,
                                            uint64_t max_bytes = kDefaultMaxOutputBytes);

// Writes them back in the same layout (atomically, file by file).
Status WriteDocumentOutputs(const DocumentOutputs& outputs, const std::string& dir);

}  // namespace mineru::jobs
