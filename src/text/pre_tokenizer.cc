// SPDX-License-Identifier: Apache-2.0
#include "text/pre_tokenizer.h"

#include <oniguruma.h>

#include "text/utf8.h"

namespace mineru::text {
namespace {

// Hugging Face tokenizers' ByteLevel pre-tokenizer pattern (GPT-2's), used when use_regex is on.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

void InitOniguruma() {
  static const bool initialized = [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
    return true;
  }();
  (void)initialized;
}

struct RegionDeleter {
  void operator()(OnigRegion* region) const { onig_region_free(region, 1); }
};

void AppendPiece(size_t begin, size_t end, std::vector<Span>* out) {
  if (end > begin) out->push_back({begin, end});
}

Result<std::string> RequireString(const Json& object, std::string_view key,
                                  std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> value, FindString(object, key, where));
  if (!value) return Fail(ErrorCode::kCorrupt, "{}: missing '{}'", where, key);
  return *value;
}

Result<SplitPattern> ParseSplit(const Json& json, std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(std::string behavior, RequireString(json, "behavior", where));
  if (behavior != "Isolated") {
    return Fail(ErrorCode::kUnsupported, "{}: Split behavior '{}' is not supported (only Isolated)",
                where, behavior);
  }
  MINERU_ASSIGN_OR_RETURN(std::optional<bool> invert, FindBool(json, "invert", where));
  if (invert.value_or(false)) {
    return Fail(ErrorCode::kUnsupported, "{}: Split with invert=true is not supported", where);
  }
  const auto pattern = json.find("pattern");
  if (pattern == json.end() || !pattern->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: Split needs a 'pattern' object", where);
  }
  const std::string pattern_where = std::string(where) + ".pattern";
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> regex,
                          FindString(*pattern, "Regex", pattern_where));
  if (regex) return SplitPattern::Regex(*regex, pattern_where);
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> literal,
                          FindString(*pattern, "String", pattern_where));
  if (literal) {
    if (literal->empty()) {
      return Fail(ErrorCode::kCorrupt, "{}: empty String pattern", pattern_where);
    }
    return SplitPattern::Literal(*literal);
  }
  return Fail(ErrorCode::kCorrupt, "{}: needs 'Regex' or 'String'", pattern_where);
}

// Returns whether the ByteLevel step splits with GPT-2's pattern first.
Result<bool> ParseByteLevel(const Json& json, std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(std::optional<bool> prefix, FindBool(json, "add_prefix_space", where));
  if (prefix.value_or(false)) {
    return Fail(ErrorCode::kUnsupported, "{}: ByteLevel add_prefix_space=true is not supported",
                where);
  }
  MINERU_ASSIGN_OR_RETURN(std::optional<bool> use_regex, FindBool(json, "use_regex", where));
  return use_regex.value_or(true);
}

}  // namespace

void SplitPattern::OnigDeleter::operator()(void* regex) const {
  onig_free(static_cast<regex_t*>(regex));
}

Result<SplitPattern> SplitPattern::Regex(std::string_view pattern, std::string_view where) {
  InitOniguruma();
  regex_t* regex = nullptr;
  OnigErrorInfo info;
  const auto* begin = reinterpret_cast<const OnigUChar*>(pattern.data());
  const int r = onig_new(&regex, begin, begin + pattern.size(), ONIG_OPTION_NONE,
                         ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &info);
  if (r != ONIG_NORMAL) {
    OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, r, &info);
    return Fail(ErrorCode::kCorrupt, "{}: bad regex /{}/: {}", where, pattern,
                reinterpret_cast<const char*>(message));
  }
  SplitPattern split;
  split.regex_ = std::shared_ptr<void>(regex, OnigDeleter());
  split.source_ = std::string(pattern);
  return split;
}

SplitPattern SplitPattern::Literal(std::string literal) {
  SplitPattern split;
  split.source_ = std::move(literal);
  return split;
}

Status SplitPattern::Split(std::string_view s, Span span, std::vector<Span>* out) const {
  size_t previous = span.begin;
  if (!regex_) {
    const std::string_view text = s.substr(0, span.end);
    for (size_t at = text.find(source_, span.begin); at != std::string_view::npos;
         at = text.find(source_, previous)) {
      AppendPiece(previous, at, out);
      previous = at + source_.size();
      AppendPiece(at, previous, out);
    }
    AppendPiece(previous, span.end, out);
    return OkStatus();
  }
  auto* regex = static_cast<regex_t*>(regex_.get());
  std::unique_ptr<OnigRegion, RegionDeleter> region(onig_region_new());
  // The subject is the span alone, as in Hugging Face tokenizers (where each piece is its own
  // string): anchors and lookarounds see nothing outside it.
  const auto* str = reinterpret_cast<const OnigUChar*>(s.data()) + span.begin;
  const OnigUChar* end = reinterpret_cast<const OnigUChar*>(s.data()) + span.end;
  const size_t length = span.end - span.begin;
  size_t pos = 0;  // relative to the span
  while (pos <= length) {
    const int r = onig_search(regex, str, end, str + pos, end, region.get(), ONIG_OPTION_NONE);
    if (r == ONIG_MISMATCH) break;
    if (r < 0) {
      OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
      onig_error_code_to_str(message, r);
      return Fail(ErrorCode::kResourceExhausted, "pre-tokenizer regex search failed: {}",
                  reinterpret_cast<const char*>(message));
    }
    const auto match_begin = static_cast<size_t>(region->beg[0]);
    const auto match_end = static_cast<size_t>(region->end[0]);
    if (match_end == match_begin) {
      // An empty match is a split point but no piece; the search then steps over one code
      // point (as the onig crate's iterator does).
      AppendPiece(previous, span.begin + match_begin, out);
      previous = span.begin + match_begin;
      if (match_begin >= length) break;
      size_t next = span.begin + match_begin;
      NextCodePoint(s, &next);
      pos = next - span.begin;
      continue;
    }
    AppendPiece(previous, span.begin + match_begin, out);
    AppendPiece(span.begin + match_begin, span.begin + match_end, out);
    previous = span.begin + match_end;
    pos = match_end;
  }
  AppendPiece(previous, span.end, out);
  return OkStatus();
}

Result<PreTokenizer> PreTokenizer::FromJson(const Json& json, std::string_view where) {
  if (!json.is_object()) {
    return Fail(ErrorCode::kUnsupported,
                "{}: a pre-tokenizer is required (a byte-level BPE needs ByteLevel)", where);
  }
  std::vector<const Json*> items;
  MINERU_ASSIGN_OR_RETURN(std::string type, RequireString(json, "type", where));
  if (type == "Sequence") {
    const auto list = json.find("pretokenizers");
    if (list == json.end() || !list->is_array()) {
      return Fail(ErrorCode::kCorrupt, "{}: Sequence needs a 'pretokenizers' array", where);
    }
    for (const Json& item : *list) items.push_back(&item);
  } else {
    items.push_back(&json);
  }
  PreTokenizer pre;
  bool byte_level = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const Json& item = *items[i];
    const std::string item_where =
        type == "Sequence" ? fmt::format("{}.pretokenizers[{}]", where, i) : std::string(where);
    if (!item.is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected an object", item_where);
    MINERU_ASSIGN_OR_RETURN(std::string item_type, RequireString(item, "type", item_where));
    if (byte_level) {
      return Fail(ErrorCode::kUnsupported, "{}: nothing may follow the ByteLevel pre-tokenizer",
                  item_where);
    }
    if (item_type == "Split") {
      MINERU_ASSIGN_OR_RETURN(SplitPattern split, ParseSplit(item, item_where));
      pre.steps_.push_back(std::move(split));
    } else if (item_type == "ByteLevel") {
      MINERU_ASSIGN_OR_RETURN(bool use_regex, ParseByteLevel(item, item_where));
      if (use_regex) {
        MINERU_ASSIGN_OR_RETURN(SplitPattern gpt2, SplitPattern::Regex(kGpt2Pattern, item_where));
        pre.steps_.push_back(std::move(gpt2));
      }
      byte_level = true;
    } else {
      return Fail(ErrorCode::kUnsupported, "{}: pre-tokenizer type '{}' is not supported",
                  item_where, item_type);
    }
  }
  if (!byte_level) {
    return Fail(ErrorCode::kUnsupported,
                "{}: no ByteLevel pre-tokenizer (only byte-level BPE is supported)", where);
  }
  return pre;
}

Status PreTokenizer::Split(std::string_view s, std::vector<Span>* pieces) const {
  pieces->clear();
  if (!s.empty()) pieces->push_back({0, s.size()});
  std::vector<Span> next;
  for (const SplitPattern& step : steps_) {
    next.clear();
    for (const Span& span : *pieces) MINERU_RETURN_IF_ERROR(step.Split(s, span, &next));
    pieces->swap(next);
  }
  return OkStatus();
}

}  // namespace mineru::text
