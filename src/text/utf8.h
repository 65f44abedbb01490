// SPDX-License-Identifier: Apache-2.0
// UTF-8 decoding and the one repair rule the tokenizer applies to bytes that are not UTF-8.
//
// Rule (the same as Rust's String::from_utf8_lossy, Python's bytes.decode("utf-8", "replace")
// and the WHATWG decoder, i.e. Unicode's "substitution of maximal subparts"): every maximal
// prefix of a well-formed sequence that cannot be completed, and every byte that cannot start
// one, becomes a single U+FFFD. Well-formed means Unicode Table 3-7: no overlong forms, no
// surrogates (ED A0..BF), nothing above U+10FFFF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mineru::text {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

// Length (1-4) of the well-formed sequence starting at s[pos], storing its code point in *cp;
// 0 when the bytes there are ill-formed (then *cp is untouched). pos < s.size().
size_t WellFormedLength(std::string_view s, size_t pos, char32_t* cp);

// Length of the maximal subpart at s[pos] when WellFormedLength() is 0: how many bytes one
// U+FFFD replaces (1-3).
size_t MaximalSubpartLength(std::string_view s, size_t pos);

bool IsValidUtf8(std::string_view s);

// s with every maximal ill-formed subpart replaced by U+FFFD (see the rule above).
std::string RepairUtf8(std::string_view s);

// Appends the UTF-8 encoding of a Unicode scalar value.
void AppendUtf8(char32_t cp, std::string* out);

// Decodes the code point at s[*pos] of valid UTF-8 and advances *pos past it.
char32_t NextCodePoint(std::string_view s, size_t* pos);

// The code point that ends at byte offset `end` of valid UTF-8 (end > 0); *start receives its
// first byte.
char32_t PreviousCodePoint(std::string_view s, size_t end, size_t* start);

}  // namespace mineru::text
