// SPDX-License-Identifier: Apache-2.0
// UTF-8 repair, the byte-level alphabet, NFC (the inert-run shortcut against utf8proc's own
// data) and the whitespace / word-character classes.
#include "text/unicode.h"

#include <gtest/gtest.h>
#include <utf8proc.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "text/byte_level.h"
#include "text/utf8.h"

namespace mineru::text {
namespace {

std::string Utf8(std::u32string_view cps) {
  std::string out;
  for (char32_t cp : cps) AppendUtf8(cp, &out);
  return out;
}

// utf8proc's NFC of the whole string: the reference for NormalizeNfc.
std::string ReferenceNfc(const std::string& s) {
  utf8proc_uint8_t* raw = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
      &raw, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  EXPECT_GE(n, 0);
  std::string out(reinterpret_cast<const char*>(raw), n < 0 ? 0 : static_cast<size_t>(n));
  std::free(raw);
  return out;
}

std::string Nfc(const std::string& s) {
  std::string out;
  auto changed = NormalizeNfc(s, &out);
  EXPECT_TRUE(changed) << changed.error().ToString();
  return changed && *changed ? out : s;
}

// The examples of the Unicode Standard, section 3.9 (U+FFFD substitution of maximal subparts).
TEST(Utf8Test, RepairFollowsMaximalSubparts) {
  const std::string fffd = Utf8(U"\uFFFD");
  // text with each '#' replaced by U+FFFD
  const auto r = [&](std::string_view text) {
    std::string s;
    for (char c : text) s += c == '#' ? fffd : std::string(1, c);
    return s;
  };
  EXPECT_EQ(RepairUtf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"), r("a###b#c##d"));
  EXPECT_EQ(RepairUtf8("\xC0\xAF\xE0\x80\xBF\xF0\x81\x82\x41"), r("########A"));  // overlong
  EXPECT_EQ(RepairUtf8("\xED\xA0\x80\xED\xBF\xBF\xED\xAF\x41"), r("########A"));  // surrogates
  EXPECT_EQ(RepairUtf8("\xF4\x91\x92\x93\xFF\x41\x80\xBF\x42"), r("#####A##B"));
  EXPECT_EQ(RepairUtf8("\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41"), r("####A"));  // truncated
  EXPECT_EQ(RepairUtf8("\xE2\x82"), fffd);  // truncated at the end: one replacement
  EXPECT_EQ(RepairUtf8(std::string("a\0b", 3)), std::string("a\0b", 3));  // NUL is valid
}

TEST(Utf8Test, WellFormedBoundaries) {
  char32_t cp = 0;
  const auto length = [&](std::string_view s) { return WellFormedLength(s, 0, &cp); };
  EXPECT_EQ(length("\x7F"), 1u);
  EXPECT_EQ(length("\xC2\x80"), 2u);
  EXPECT_EQ(cp, 0x80u);
  EXPECT_EQ(length("\xC1\xBF"), 0u);
  EXPECT_EQ(length("\xE0\xA0\x80"), 3u);
  EXPECT_EQ(length("\xE0\x9F\xBF"), 0u);
  EXPECT_EQ(length("\xED\x9F\xBF"), 3u);
  EXPECT_EQ(cp, 0xD7FFu);
  EXPECT_EQ(length("\xED\xA0\x80"), 0u);
  EXPECT_EQ(length("\xF0\x90\x80\x80"), 4u);
  EXPECT_EQ(length("\xF4\x8F\xBF\xBF"), 4u);
  EXPECT_EQ(cp, 0x10FFFFu);
  EXPECT_EQ(length("\xF4\x90\x80\x80"), 0u);
  EXPECT_EQ(length("\xF5\x80\x80\x80"), 0u);
}

TEST(Utf8Test, RepairedTextIsValidAndValidTextIsKept) {
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 12, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? rng() % 128 : 0x80 + rng() % 128);
    const std::string repaired = RepairUtf8(s);
    ASSERT_TRUE(IsValidUtf8(repaired));
    if (IsValidUtf8(s)) {
      ASSERT_EQ(repaired, s);
    } else {
      ASSERT_NE(repaired, s);
    }
  }
}

TEST(ByteLevelTest, Alphabet) {
  std::vector<bool> seen(512, false);
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = ByteLevelChar(static_cast<uint8_t>(b));
    ASSERT_LT(cp, 512u);
    EXPECT_FALSE(seen[cp]) << b;
    seen[cp] = true;
    EXPECT_EQ(ByteLevelByte(cp), static_cast<uint8_t>(b));
  }
  EXPECT_EQ(ByteLevelChar(' '), 0x120u);   // Ġ
  EXPECT_EQ(ByteLevelChar('\n'), 0x10Au);  // Ċ
  EXPECT_EQ(ByteLevelChar(0), 0x100u);
  EXPECT_EQ(ByteLevelChar(0xAD), 0x143u);  // the last of the 68 moved bytes
  EXPECT_EQ(ByteLevelChar('A'), static_cast<char32_t>('A'));
  EXPECT_FALSE(ByteLevelByte(0x144));
  EXPECT_EQ(ToByteLevel("\xC3\xA9 x"), "Ã©Ġx");
}

TEST(ByteLevelTest, DecodeTokenFallsBackToItsOwnBytes) {
  EXPECT_EQ(ByteLevelDecodeToken("Ã©"), "\xC3\xA9");
  EXPECT_EQ(ByteLevelDecodeToken("ĠĊ"), " \n");
  EXPECT_EQ(ByteLevelDecodeToken("<|im_start|>"), "<|im_start|>");
  // One code point outside the alphabet and the token stands for its own UTF-8.
  EXPECT_EQ(ByteLevelDecodeToken("中"), "中");
  EXPECT_EQ(ByteLevelDecodeToken("aĠ中"), "aĠ中");
  EXPECT_EQ(ByteLevelDecodeToken("< b>"), "< b>");  // a plain space is not in the alphabet
}

// Every code point IsNfcInert accepts: no combining class, unchanged by NFC, never the second
// half of a canonical composition, and its decomposition does not start with one either. Taken
// from utf8proc's data: the seconds are the non-initial code points of all canonical
// decompositions.
TEST(NfcTest, InertCodePointsAgreeWithUnicodeData) {
  std::vector<bool> second(0x110000, false);
  utf8proc_int32_t buffer[32];
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp < 0xE000) continue;
    int boundclass = 0;
    const utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buffer,
                                                       32, UTF8PROC_DECOMPOSE, &boundclass);
    ASSERT_GT(n, 0);
    for (utf8proc_ssize_t i = 1; i < n; ++i) second[buffer[i]] = true;
  }
  int inert = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (!IsNfcInert(cp)) continue;
    ++inert;
    ASSERT_EQ(utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class, 0)
        << std::hex << static_cast<uint32_t>(cp);
    ASSERT_FALSE(second[cp]) << std::hex << static_cast<uint32_t>(cp);
    const std::string s = Utf8(std::u32string(1, cp));
    ASSERT_EQ(ReferenceNfc(s), s) << std::hex << static_cast<uint32_t>(cp);
    int boundclass = 0;
    utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buffer, 32, UTF8PROC_DECOMPOSE,
                            &boundclass);
    ASSERT_FALSE(second[buffer[0]]) << std::hex << static_cast<uint32_t>(cp);
  }
  EXPECT_GT(inert, 33000);  // 33,315 with the ranges above
}

// NormalizeNfc (inert runs copied, the rest normalised chunk by chunk) equals utf8proc's NFC of
// the whole string on random mixes of the cases that interact.
TEST(NfcTest, ChunkedNormalisationEqualsWholeString) {
  const std::vector<std::u32string> atoms = {
      U"a",      U"e",      U"A",      U" ",      U"\n",     U"é",          U"\u0301",
      U"\u0323", U"\u0302", U"\u0308", U"\u212B", U"\u2126", U"\u0958",     U"\u0915",
      U"\u093C", U"\u09C7", U"\u09BE", U"\u1100", U"\u1161", U"\u11A8",     U"\uAC00",
      U"\uAC01", U"\u304B", U"\u3099", U"\u309A", U"\u30CF", U"中",         U"\uF900",
      U"\u0344", U"\u0F73", U"\u1E0A", U"\u0307", U"ſ",      U"\U0001D15E", U"\U0001F600",
      U"ǅ",      U"\u0345", U"\u05B0", U"\u0591", U"\u302A", U"\u0300"};
  std::mt19937 rng(11);
  for (int i = 0; i < 20000; ++i) {
    std::u32string cps;
    const int n = 1 + static_cast<int>(rng() % 10);
    for (int j = 0; j < n; ++j) cps += atoms[rng() % atoms.size()];
    const std::string s = Utf8(cps);
    ASSERT_EQ(Nfc(s), ReferenceNfc(s)) << "case " << i;
  }
  std::string unchanged;
  auto changed = NormalizeNfc("plain ASCII, 中文, ひらがな", &unchanged);
  ASSERT_TRUE(changed);
  EXPECT_FALSE(*changed);
}

TEST(UnicodeClassTest, WhiteSpaceIsExactlyUnicodeWhiteSpace) {
  const std::vector<char32_t> expected = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,
                                          0xA0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
                                          0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028,
                                          0x2029, 0x202F, 0x205F, 0x3000};
  std::vector<char32_t> found;
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (IsWhiteSpace(cp)) found.push_back(cp);
  }
  EXPECT_EQ(found, expected);
}

TEST(UnicodeClassTest, WordCharacters) {
  for (char32_t cp : {U'a', U'Z', U'_', U'5', U'é', U'\u0301', U'中', U'\u0663', U'\u2160',
                      U'\u200D', U'\u24B6', U'ǅ'}) {
    EXPECT_TRUE(IsWordCharacter(cp)) << std::hex << static_cast<uint32_t>(cp);
  }
  for (char32_t cp : {U'-', U',', U' ', U'\u00B2', U'\U0001F600', U'<', U'\u3000'}) {
    EXPECT_FALSE(IsWordCharacter(cp)) << std::hex << static_cast<uint32_t>(cp);
  }
}

}  // namespace
}  // namespace mineru::text
