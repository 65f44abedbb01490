// SPDX-License-Identifier: Apache-2.0
// GPT-2's byte-level alphabet: each of the 256 byte values stands for one printable code point,
// so that BPE works on bytes while its vocabulary stays valid text. Bytes 33..126, 161..172 and
// 174..255 stand for themselves; the other 68 (controls, space, DEL, NBSP, soft hyphen) take
// U+0100.. in increasing byte order (space is U+0120 "Ġ", newline U+010A "Ċ").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mineru::text {

// The code point byte b stands for.
char32_t ByteLevelChar(uint8_t b);

// The byte a code point stands for, or nullopt when cp is not in the alphabet.
std::optional<uint8_t> ByteLevelByte(char32_t cp);

// The byte-level spelling of raw bytes: what vocabulary entries look like.
std::string ToByteLevel(std::string_view bytes);

// The bytes a token stands for, as Hugging Face's ByteLevel decoder computes them: when every
// code point of the token is in the alphabet, the bytes they stand for; otherwise (an added token
// such as "<|im_start|>" with a space, or CJK text) the token's own UTF-8 bytes. `token` is valid
// UTF-8.
std::string ByteLevelDecodeToken(std::string_view token);

}  // namespace mineru::text
