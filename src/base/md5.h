// SPDX-License-Identifier: Apache-2.0
// MD5 (OpenSSL's implementation), only where a format we reproduce names it: MinerU names the
// image files it writes after the MD5 of a page's pixels. Never for integrity or security.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace mineru {

// Lowercase hex digest (32 characters), as Python's hashlib.md5(...).hexdigest().
std::string Md5Hex(std::span<const uint8_t> bytes);

}  // namespace mineru
