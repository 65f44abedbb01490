// SPDX-License-Identifier: Apache-2.0
// DocumentOutputs as one binary-safe byte string, for caches outside the process (Redis).
//
// Format, version 3 (integers little-endian; version 2 was never written):
//   "MDOC" | u32 version | eight fields: name, markdown, middle_json, model_json, content_list,
//   report, content_list_v2, layout_pdf, each u64 length + bytes | u64 image count | per image:
//   u64 length + file name, u64 length + bytes.
// Values of another version (version 1 lacked the last two fields) are refused as corrupt, so a
// shared cache filled by an earlier release reads as misses (counted as errors).
// The bytes come from outside the process: parsing checks every length against what is left,
// accepts nothing after the last image, and accepts only plain file names (no '/', NUL or
// leading '.'), images sorted and unique (as ReadDocumentOutputs makes them), since the names
// become paths when the outputs are written back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/document_outputs.h"

namespace mineru::jobs {

inline constexpr uint32_t kDocumentCodecVersion = 3;

std::string SerializeDocumentOutputs(const DocumentOutputs& outputs);

// kCorrupt, with the reason, for bytes that are not a version-1 encoding.
Result<DocumentOutputs> ParseDocumentOutputs(std::string_view bytes);

}  // namespace mineru::jobs
