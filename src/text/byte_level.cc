// SPDX-License-Identifier: Apache-2.0
#include "text/byte_level.h"

#include <array>

#include "text/utf8.h"

namespace mineru::text {
namespace {

bool StandsForItself(int b) {
  return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
}

struct Tables {
  std::array<char32_t, 256> chars{};
  std::array<int16_t, 324> bytes{};  // code point -> byte, -1 when not in the alphabet

  Tables() {
    bytes.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      chars[b] = StandsForItself(b) ? static_cast<char32_t>(b) : next++;
      bytes[chars[b]] = static_cast<int16_t>(b);
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

}  // namespace

char32_t ByteLevelChar(uint8_t b) { return GetTables().chars[b]; }

std::optional<uint8_t> ByteLevelByte(char32_t cp) {
  const Tables& t = GetTables();
  if (cp >= t.bytes.size() || t.bytes[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(t.bytes[cp]);
}

std::string ToByteLevel(std::string_view bytes) {
  const Tables& t = GetTables();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) AppendUtf8(t.chars[static_cast<uint8_t>(c)], &out);
  return out;
}

std::string ByteLevelDecodeToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  size_t pos = 0;
  while (pos < token.size()) {
    const std::optional<uint8_t> b = ByteLevelByte(NextCodePoint(token, &pos));
    if (!b) return std::string(token);
    out.push_back(static_cast<char>(*b));
  }
  return out;
}

}  // namespace mineru::text
