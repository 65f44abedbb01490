// SPDX-License-Identifier: Apache-2.0
// Added tokens (tokenizer.json "added_tokens"): strings matched in the text before anything
// else and mapped to their id whole, as Hugging Face tokenizers' AddedVocabulary does.
//
// Matching: leftmost-longest, non-overlapping, scanning left to right (its Aho-Corasick
// LeftmostLongest). Tokens with normalized=false are matched on the raw text first; the text
// between them is normalised, and tokens with normalized=true (their content normalised the same
// way) are matched in that. A match then passes the token's flags:
//   special      with parse_special=false (tokenizers' encode_special_tokens) the match is
//                ignored and its text is tokenized like any other;
//   single_word  ignored unless no word character (text/unicode.h) touches either end;
//   lstrip       the whitespace before it joins the token (never text an earlier token took);
//   rstrip       the whitespace after it joins the token.
// An ignored match still consumes its text for matching purposes: the scan resumes after it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru::text {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;  // tokenizers' default when the field is absent
  bool special = false;
};

// A [begin, end) byte range of the text and the added token it is (-1: plain text).
struct Segment {
  size_t begin = 0, end = 0;
  int32_t token = -1;  // index into AddedVocabulary::tokens()
};

class AddedVocabulary {
 public:
  // `normalize` turns a normalized=true token's content into what is matched (identity when the
  // tokenizer has no normalizer).
  static Result<AddedVocabulary> Build(
      std::vector<AddedToken> tokens,
      const std::function<Result<std::string>(std::string_view)>& normalize);

  // Splits s into added-token and text segments (appended to *out, covering s in order, empty
  // text segments omitted) using the raw (normalized=false) or the normalized token set.
  void Split(std::string_view s, bool normalized_set, bool parse_special,
             std::vector<Segment>* out) const;

  const std::vector<AddedToken>& tokens() const { return tokens_; }
  bool empty() const { return tokens_.empty(); }

 private:
  // A byte trie for leftmost-longest matching.
  class Trie {
   public:
    Trie();
    void Add(std::string_view pattern, int32_t token);
    // The longest pattern starting at s[pos]: its token and length, or -1.
    int32_t LongestAt(std::string_view s, size_t pos, size_t* length) const;
    bool empty() const { return empty_; }

   private:
    struct Node {
      int32_t token = -1;
      std::vector<std::pair<uint8_t, int32_t>> children;  // unsorted; fan-out is small
    };
    int32_t Child(int32_t node, uint8_t byte) const;
    std::vector<Node> nodes_;
    int32_t root_children_[256];
    bool empty_ = true;
  };

  std::vector<AddedToken> tokens_;
  Trie raw_, normalized_;
};

}  // namespace mineru::text
