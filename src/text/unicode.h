// SPDX-License-Identifier: Apache-2.0
// The Unicode properties the tokenizer needs outside the pre-tokenizer regex (which Oniguruma
// evaluates itself): NFC normalisation (utf8proc), White_Space and "word character" for the
// added-token flags lstrip/rstrip/single_word.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace mineru::text {

// Unicode White_Space (what Rust's \s and char::is_whitespace test): U+0009..000D, U+0020,
// U+0085, U+00A0, U+1680, U+2000..200A, U+2028, U+2029, U+202F, U+205F, U+3000.
bool IsWhiteSpace(char32_t cp);

// Rust regex's Unicode \w (what Hugging Face tokenizers' single_word rule tests): letters,
// letter numbers, marks, decimal digits, connector punctuation, ZWNJ/ZWJ and the few symbols
// that are Other_Alphabetic (circled and squared Latin letters).
bool IsWordCharacter(char32_t cp);

// True for code points that NFC leaves alone wherever they appear and that never combine with
// what precedes them: everything below U+0300, CJK ideographs, Hangul syllables, kana, CJK
// punctuation and fullwidth forms. A run of them needs no normalisation, and normalisation can
// restart at any of them (tests/text/unicode_test.cc checks every one against utf8proc's data).
bool IsNfcInert(char32_t cp);

// Unicode NFC of valid UTF-8 `s`. Returns false (leaving *out untouched) when s is already NFC
// by the inert-run test, so callers can keep using s without a copy.
Result<bool> NormalizeNfc(std::string_view s, std::string* out);

}  // namespace mineru::text
