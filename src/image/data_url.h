// SPDX-License-Identifier: Apache-2.0
// Base64 (RFC 4648, standard alphabet, '=' padding) and data: URLs, how images travel inside
// JSON requests ("data:image/png;base64,..."). Kept here until a second layer needs base64.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru::image {

std::string Base64Encode(std::span<const uint8_t> bytes);

// Strict decoding: the standard alphabet, padding to a multiple of four, no whitespace.
// kCorrupt otherwise.
Result<std::vector<uint8_t>> Base64Decode(std::string_view text);

// "data:<mime>;base64,<payload>".
std::string MakeDataUrl(std::string_view mime_type, std::span<const uint8_t> bytes);

struct DataUrl {
  std::string mime_type;
  std::vector<uint8_t> bytes;
};

// Parses "data:<mime>;base64,<payload>" (parameters before ";base64" are kept in mime_type).
// Fails with kInvalidArgument for other URLs, kResourceExhausted when the payload would
// decode to more than max_bytes.
Result<DataUrl> ParseDataUrl(std::string_view url, uint64_t max_bytes);

}  // namespace mineru::image
