// SPDX-License-Identifier: Apache-2.0
#include "text/unicode.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "text/utf8.h"

namespace mineru::text {

bool IsWhiteSpace(char32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool IsWordCharacter(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
           cp == '_';
  }
  if (cp == 0x200C || cp == 0x200D) return true;  // Join_Control
  if ((cp >= 0x24B6 && cp <= 0x24E9) || (cp >= 0x1F130 && cp <= 0x1F149) ||
      (cp >= 0x1F150 && cp <= 0x1F169) || (cp >= 0x1F170 && cp <= 0x1F189)) {
    return true;  // Other_Alphabetic symbols
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

bool IsNfcInert(char32_t cp) {
  return cp < 0x300 ||                      // Latin, Greek-free Latin supplements, IPA
         (cp >= 0x4E00 && cp <= 0x9FFF) ||  // CJK Unified Ideographs
         (cp >= 0xAC00 && cp <= 0xD7A3) ||  // Hangul syllables (a T jamo after one is not)
         (cp >= 0x3041 && cp <= 0x3096) ||  // Hiragana (not the combining marks 3099/309A)
         (cp >= 0x30A1 && cp <= 0x30FA) ||  // Katakana
         (cp >= 0x3000 && cp <= 0x3029) ||  // CJK punctuation (302A..302F combine)
         (cp >= 0xFF01 && cp <= 0xFF5E) ||  // fullwidth ASCII
         (cp >= 0x2010 && cp <= 0x2027) ||  // dashes, quotes, bullets, ellipsis
         (cp >= 0x2030 && cp <= 0x205E);    // per mille, primes, more punctuation
}

namespace {

struct FreeDeleter {
  void operator()(utf8proc_uint8_t* p) const { std::free(p); }
};

Status AppendNfc(std::string_view chunk, std::string* out) {
  utf8proc_uint8_t* raw = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(chunk.data()),
                   static_cast<utf8proc_ssize_t>(chunk.size()), &raw,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::unique_ptr<utf8proc_uint8_t, FreeDeleter> owned(raw);
  if (n < 0) {
    return Fail(ErrorCode::kInternal, "NFC normalisation failed: {}", utf8proc_errmsg(n));
  }
  out->append(reinterpret_cast<const char*>(raw), static_cast<size_t>(n));
  return OkStatus();
}

}  // namespace

// Chunks that hold non-inert code points are normalised by utf8proc, the inert runs between
// them are copied. A chunk starts at the inert code point just before its first non-inert one
// (a combining mark composes with it) and ends before the next inert one: canonical reordering
// never crosses a starter and an inert code point never composes with what precedes it, so
// NFC(a + b) = NFC(a) + NFC(b) at every such boundary.
Result<bool> NormalizeNfc(std::string_view s, std::string* out) {
  size_t pos = 0, copied = 0, last_inert = 0;
  bool changed = false;
  std::string result;
  while (pos < s.size()) {
    if (static_cast<uint8_t>(s[pos]) < 0x80) {
      last_inert = pos++;
      continue;
    }
    const size_t start = pos;
    const char32_t cp = NextCodePoint(s, &pos);
    if (IsNfcInert(cp)) {
      last_inert = start;
      continue;
    }
    const size_t chunk_begin = (last_inert >= copied && start > 0) ? last_inert : copied;
    size_t chunk_end = pos;
    while (chunk_end < s.size()) {
      size_t next = chunk_end;
      if (IsNfcInert(NextCodePoint(s, &next))) break;
      chunk_end = next;
    }
    if (!changed) result.reserve(s.size() + 16);
    changed = true;
    result.append(s.substr(copied, chunk_begin - copied));
    MINERU_RETURN_IF_ERROR(AppendNfc(s.substr(chunk_begin, chunk_end - chunk_begin), &result));
    copied = pos = chunk_end;
    last_inert = chunk_end;
  }
  if (!changed) return false;
  result.append(s.substr(copied));
  if (result == s) return false;
  *out = std::move(result);
  return true;
}

}  // namespace mineru::text
