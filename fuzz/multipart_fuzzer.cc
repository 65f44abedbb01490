// SPDX-License-Identifier: Apache-2.0
// multipart/form-data bodies, the form-field conversions and the clean-up of upload file names
// (service/multipart.h). Input: the Content-Type header value, a '\n', then the body.
// Invariants: parts keep to the limits, their data lies inside the body, names are non-empty;
// a sanitized file name is a safe, plain, valid UTF-8 file name of at most kMaxFileNameBytes,
// and sanitizing it again changes nothing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "service/multipart.h"
#include "text/utf8.h"

namespace {

using namespace mineru;

void CheckFileName(std::string_view raw) {
  const std::string name = service::SanitizeFileName(raw);
  MINERU_CHECK(!name.empty() && name.size() <= service::kMaxFileNameBytes);
  MINERU_CHECK(name.front() != '.' && name.front() != ' ' && name.back() != '.' &&
               name.back() != ' ');
  MINERU_CHECK(name.find_first_of("/\\<>:\"|?*") == std::string::npos, "{}", name);
  MINERU_CHECK(text::IsValidUtf8(name));
  for (unsigned char c : name) MINERU_CHECK(c >= 0x20 && c != 0x7F);
  MINERU_CHECK(service::SanitizeFileName(name) == name, "not idempotent: {}", name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [content_type, body] = fuzz::SplitOnce(fuzz::AsText(data, size), '\n');
  service::MultipartLimits limits;
  limits.max_parts = 16;  // small enough for the fuzzer to reach
  limits.max_part_header_bytes = 512;
  auto parts = service::ParseMultipartFormData(content_type, body, limits);
  CheckFileName(content_type);
  if (!parts) return 0;
  MINERU_CHECK(parts->size() <= limits.max_parts);
  for (const service::FormPart& part : *parts) {
    MINERU_CHECK(!part.name.empty());
    MINERU_CHECK(!part.content_type.empty());
    MINERU_CHECK(fuzz::IsWithin(part.data, body));
    if (part.filename) CheckFileName(*part.filename);
    (void)service::ParseFormBool(part.data);
    if (auto number = service::ParseFormInt(part.data)) {
      MINERU_CHECK(std::to_string(*number).size() <= part.data.size());
    }
  }
  return 0;
}
