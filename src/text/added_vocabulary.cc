// SPDX-License-Identifier: Apache-2.0
#include "text/added_vocabulary.h"

#include <algorithm>

#include "text/unicode.h"
#include "text/utf8.h"

namespace mineru::text {

AddedVocabulary::Trie::Trie() : nodes_(1) {
  std::fill(std::begin(root_children_), std::end(root_children_), -1);
}

int32_t AddedVocabulary::Trie::Child(int32_t node, uint8_t byte) const {
  if (node == 0) return root_children_[byte];
  for (const auto& [b, child] : nodes_[node].children) {
    if (b == byte) return child;
  }
  return -1;
}

void AddedVocabulary::Trie::Add(std::string_view pattern, int32_t token) {
  int32_t node = 0;
  for (char c : pattern) {
    const auto byte = static_cast<uint8_t>(c);
    int32_t child = Child(node, byte);
    if (child < 0) {
      child = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
      if (node == 0) {
        root_children_[byte] = child;
      } else {
        nodes_[node].children.emplace_back(byte, child);
      }
    }
    node = child;
  }
  // Two tokens normalising to the same pattern: the first one listed keeps it.
  if (nodes_[node].token < 0) nodes_[node].token = token;
  empty_ = false;
}

int32_t AddedVocabulary::Trie::LongestAt(std::string_view s, size_t pos, size_t* length) const {
  int32_t best = -1;
  int32_t node = 0;
  for (size_t i = pos; i < s.size(); ++i) {
    node = Child(node, static_cast<uint8_t>(s[i]));
    if (node < 0) break;
    if (nodes_[node].token >= 0) {
      best = nodes_[node].token;
      *length = i + 1 - pos;
    }
  }
  return best;
}

Result<AddedVocabulary> AddedVocabulary::Build(
    std::vector<AddedToken> tokens,
    const std::function<Result<std::string>(std::string_view)>& normalize) {
  AddedVocabulary vocabulary;
  vocabulary.tokens_ = std::move(tokens);
  for (size_t i = 0; i < vocabulary.tokens_.size(); ++i) {
    const AddedToken& token = vocabulary.tokens_[i];
    if (token.normalized) {
      MINERU_ASSIGN_OR_RETURN(std::string pattern, normalize(token.content));
      if (!pattern.empty()) vocabulary.normalized_.Add(pattern, static_cast<int32_t>(i));
    } else {
      vocabulary.raw_.Add(token.content, static_cast<int32_t>(i));
    }
  }
  return vocabulary;
}

void AddedVocabulary::Split(std::string_view s, bool normalized_set, bool parse_special,
                            std::vector<Segment>* out) const {
  const Trie& trie = normalized_set ? normalized_ : raw_;
  size_t taken = 0;  // end of the last accepted token (with its stripped whitespace)
  if (!trie.empty()) {
    size_t pos = 0;
    while (pos < s.size()) {
      size_t length = 0;
      const int32_t index = trie.LongestAt(s, pos, &length);
      if (index < 0) {
        ++pos;
        continue;
      }
      const AddedToken& token = tokens_[index];
      size_t begin = pos, end = pos + length;
      pos = end;
      if (token.special && !parse_special) continue;
      if (token.single_word) {
        size_t unused;
        const bool word_before = begin > 0 && IsWordCharacter(PreviousCodePoint(s, begin, &unused));
        size_t after = end;
        const bool word_after = end < s.size() && IsWordCharacter(NextCodePoint(s, &after));
        if (word_before || word_after) continue;
      }
      if (token.lstrip) {
        size_t start;
        while (begin > taken && IsWhiteSpace(PreviousCodePoint(s, begin, &start))) begin = start;
      }
      if (token.rstrip) {
        size_t next = end;
        while (end < s.size() && IsWhiteSpace(NextCodePoint(s, &next))) end = next;
        pos = std::max(pos, end);
      }
      if (begin > taken) out->push_back({taken, begin, -1});
      out->push_back({begin, end, index});
      taken = end;
    }
  }
  if (taken < s.size()) out->push_back({taken, s.size(), -1});
}

}  // namespace mineru::text
