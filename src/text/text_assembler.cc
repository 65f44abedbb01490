// SPDX-License-Identifier: Apache-2.0
#include "text/text_assembler.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace mineru::text {
namespace {

// What UTF-8 repair puts where a character is incomplete: U+FFFD.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

}  // namespace

TextAssembler::TextAssembler(const Tokenizer& tokenizer, bool skip_special,
                             std::vector<std::string> stop)
    : tokenizer_(tokenizer), skip_special_(skip_special), stop_(std::move(stop)) {
  for (const std::string& s : stop_) max_stop_ = std::max(max_stop_, s.size());
}

bool TextAssembler::Add(std::span<const int32_t> ids) {
  if (stopped_) return true;
  ids_seen_ += static_cast<int64_t>(ids.size());
  pending_.insert(pending_.end(), ids.begin(), ids.end());
  std::string decoded = Decode(pending_);
  if (decoded.ends_with(kReplacement)) return false;
  Append(decoded);
  return stopped_;
}

void TextAssembler::Finish() {
  if (!stopped_ && !pending_.empty()) Append(Decode(pending_));
  pending_.clear();
  finished_ = true;
}

std::string TextAssembler::TakeDelta() {
  size_t end = text_.size();
  if (!stopped_ && !finished_) end -= Holdback();
  if (end <= released_) return {};
  std::string delta = text_.substr(released_, end - released_);
  released_ = end;
  return delta;
}

std::string DecodeGenerated(const Tokenizer& tokenizer, std::span<const int32_t> ids,
                            bool skip_special) {
  std::vector<int32_t> kept;
  kept.reserve(ids.size());
  for (int32_t id : ids) {
    if (!tokenizer.IdToToken(id)) continue;
    if (skip_special && tokenizer.IsSpecial(id)) continue;
    kept.push_back(id);
  }
  auto text = tokenizer.Decode(kept, skip_special);
  return text ? std::move(*text) : std::string();
}

std::string TextAssembler::Decode(const std::vector<int32_t>& ids) const {
  return DecodeGenerated(tokenizer_, ids, skip_special_);
}

void TextAssembler::Append(const std::string& decoded) {
  pending_.clear();
  const size_t old_size = text_.size();
  text_ += decoded;
  if (max_stop_ == 0) return;
  const size_t from = old_size >= max_stop_ - 1 ? old_size - (max_stop_ - 1) : 0;
  size_t cut = std::string::npos;
  for (const std::string& s : stop_) cut = std::min(cut, text_.find(s, from));
  if (cut != std::string::npos) {
    text_.resize(cut);
    stopped_ = true;
  }
}

size_t TextAssembler::Holdback() const {
  const size_t longest = std::min(text_.size(), max_stop_ == 0 ? 0 : max_stop_ - 1);
  for (size_t k = longest; k > 0; --k) {
    const std::string_view tail = std::string_view(text_).substr(text_.size() - k);
    for (const std::string& s : stop_) {
      if (s.size() > k && std::string_view(s).substr(0, k) == tail) return k;
    }
  }
  return 0;
}

}  // namespace mineru::text
