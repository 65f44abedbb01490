// SPDX-License-Identifier: Apache-2.0
// multipart/form-data request bodies (RFC 7578 on RFC 2046) held in memory, the form-field
// conversions FastAPI applies to them, and the clean-up of untrusted upload file names.
//
//   MINERU_ASSIGN_OR_RETURN(std::vector<FormPart> parts,
//                           ParseMultipartFormData(request.Header("content-type"), request.body));
//   for (const FormPart& part : parts) {
//     if (part.name == "files" && part.filename) Save(SanitizeFileName(*part.filename), part.data);
//   }
//
// The parser is strict; each departure from the grammar is an ErrorCode::kInvalidArgument error
// whose message says what is wrong, so that the endpoint can answer 400 with it:
// * Content-Type must be multipart/form-data with a boundary parameter ("boundary=" in any case,
//   quoted or bare) of 1-70 characters from RFC 2046's bchars (no trailing space).
// * Lines end in CRLF. A bare LF is not a line end: every client (browsers, curl, requests,
//   httpx) sends CRLF, and accepting LF too would make a body's meaning depend on guessing.
// * A delimiter is CRLF "--" boundary at the start of a line, followed by optional spaces/tabs
//   and CRLF, or by "--" for the closing one. "--boundary" followed by anything else is part
//   data (RFC 2046 defines the delimiter as the whole line). The preamble before the first
//   delimiter and the epilogue after the closing one are ignored; a body without the closing
//   delimiter is an error (it was cut off). A body with no part at all ("--b--") is valid and
//   gives an empty list; whether that is acceptable is the endpoint's call.
// * Each part's header lines are "Name: value" (names case-insensitive; folded lines, control
//   characters and duplicate Content-Disposition/Content-Type lines are errors; other headers are
//   ignored). Content-Disposition must be form-data with a non-empty name. filename* (RFC 5987,
//   charset UTF-8 only, percent-decoded) wins over filename. In quoted values only \" and \\ are
//   unescaped: browsers send backslashes of Windows paths raw and encode '"' as %22, which is
//   left as sent (only filename* is percent-decoded). A part without Content-Type is text/plain
//   (RFC 7578 4.4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru::service {

// RFC 2046 5.1.1: a boundary is 1 to 70 characters. A format rule, not a setting.
inline constexpr size_t kMaxBoundaryLength = 70;
// Defaults of MultipartLimits: far above what any of our forms holds (a few fields and files).
inline constexpr size_t kDefaultMaxFormParts = 64;
inline constexpr size_t kDefaultMaxPartHeaderBytes = 8 * 1024;

struct MultipartLimits {
  // The most parts a body may have; one more is an error.
  size_t max_parts = kDefaultMaxFormParts;
  // The most bytes of one part's header lines, counting each line's CRLF but not the empty line
  // that ends them.
  size_t max_part_header_bytes = kDefaultMaxPartHeaderBytes;
};

struct FormPart {
  std::string name;                     // Content-Disposition name, never empty
  std::optional<std::string> filename;  // as sent (decoded filename*); set even when empty
  std::string content_type;             // the part's Content-Type value, trimmed; "text/plain"
  std::string_view data;                // into the body passed to the parser
};

// Parses `body` as multipart/form-data with the boundary of `content_type_header` (see the
// rules above). The parts' data point into `body`, which must outlive them.
Result<std::vector<FormPart>> ParseMultipartFormData(std::string_view content_type_header,
                                                     std::string_view body,
                                                     const MultipartLimits& limits = {});

// A form field as a bool, with pydantic's (so FastAPI's) spellings, case-insensitive, no
// surrounding spaces: true/false, 1/0, yes/no, on/off, t/f, y/n.
Result<bool> ParseFormBool(std::string_view value);

// A form field as an int64: optional sign then decimal digits, the whole string, in range.
Result<int64_t> ParseFormInt(std::string_view value);

// Upload file names are untrusted (they become paths on disk and names in archives and
// answers). SanitizeFileName keeps only the last path component (after the last '/' or '\');
// drops ill-formed UTF-8, control characters (C0, DEL, C1), bidirectional-text controls and the
// characters that are unsafe in file names on common systems (< > : " / \ | ? *); strips
// leading dots and spaces and trailing dots and spaces; and caps the length at
// kMaxFileNameBytes without splitting a UTF-8 sequence, keeping a short extension (".pdf") when
// it cuts. Letters of every script survive. The result is never empty, ".", ".." nor starts
// with '.': when nothing is left it is kFallbackFileName.
inline constexpr size_t kMaxFileNameBytes = 200;
inline constexpr std::string_view kFallbackFileName = "file";
std::string SanitizeFileName(std::string_view name);

}  // namespace mineru::service
