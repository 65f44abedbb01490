// SPDX-License-Identifier: Apache-2.0
#include "text/utf8.h"

#include <cstring>

namespace mineru::text {
namespace {

// Allowed range of the second byte for each lead byte (Unicode Table 3-7); the third and fourth
// bytes are always 80..BF.
struct LeadInfo {
  uint8_t length;  // 0: cannot start a sequence
  uint8_t second_lo, second_hi;
};

constexpr LeadInfo Lead(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b < 0xC2) return {0, 0, 0};
  if (b < 0xE0) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b < 0xF0) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b < 0xF4) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// How many leading bytes of the sequence at s[pos] are valid (a full sequence when equal to
// its length).
size_t ValidPrefix(std::string_view s, size_t pos, const LeadInfo& lead) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data()) + pos;
  const size_t available = s.size() - pos;
  size_t n = 1;
  if (n < lead.length && n < available && p[1] >= lead.second_lo && p[1] <= lead.second_hi) {
    ++n;
    while (n < lead.length && n < available && (p[n] & 0xC0) == 0x80) ++n;
  }
  return n;
}

}  // namespace

size_t WellFormedLength(std::string_view s, size_t pos, char32_t* cp) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data()) + pos;
  const LeadInfo lead = Lead(p[0]);
  if (lead.length == 1) {
    *cp = p[0];
    return 1;
  }
  if (lead.length == 0 || ValidPrefix(s, pos, lead) != lead.length) return 0;
  char32_t c = p[0] & (0xFF >> (lead.length + 1));
  for (size_t i = 1; i < lead.length; ++i) c = (c << 6) | (p[i] & 0x3F);
  *cp = c;
  return lead.length;
}

size_t MaximalSubpartLength(std::string_view s, size_t pos) {
  const LeadInfo lead = Lead(static_cast<uint8_t>(s[pos]));
  if (lead.length == 0) return 1;
  return ValidPrefix(s, pos, lead);
}

bool IsValidUtf8(std::string_view s) {
  size_t pos = 0;
  const size_t n = s.size();
  while (pos < n) {
    // Eight ASCII bytes at a time: the common case in documents.
    if (pos + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, s.data() + pos, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        pos += 8;
        continue;
      }
    }
    char32_t cp;
    const size_t len = WellFormedLength(s, pos, &cp);
    if (len == 0) return false;
    pos += len;
  }
  return true;
}

std::string RepairUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp;
    const size_t len = WellFormedLength(s, pos, &cp);
    if (len > 0) {
      out.append(s.substr(pos, len));
      pos += len;
    } else {
      AppendUtf8(kReplacementCharacter, &out);
      pos += MaximalSubpartLength(s, pos);
    }
  }
  return out;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

char32_t NextCodePoint(std::string_view s, size_t* pos) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data()) + *pos;
  if (p[0] < 0x80) {
    *pos += 1;
    return p[0];
  }
  const size_t len = p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : 4;
  char32_t c = p[0] & (0xFF >> (len + 1));
  for (size_t i = 1; i < len; ++i) c = (c << 6) | (p[i] & 0x3F);
  *pos += len;
  return c;
}

char32_t PreviousCodePoint(std::string_view s, size_t end, size_t* start) {
  size_t begin = end - 1;
  while (begin > 0 && (static_cast<uint8_t>(s[begin]) & 0xC0) == 0x80) --begin;
  *start = begin;
  size_t pos = begin;
  return NextCodePoint(s, &pos);
}

}  // namespace mineru::text
