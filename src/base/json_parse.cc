// SPDX-License-Identifier: Apache-2.0
// The bounded JSON parser: nlohmann's SAX events build the tree in one pass, counting depth,
// values and the tree's bytes as they go.
//
// nlohmann's own depth-limited parse (a parser callback) is quadratic: after every object that
// closes inside a container, json_sax_dom_callback_parser::end_object scans the whole parent for
// a discarded value (nlohmann/json 3.11 detail/input/json_sax.hpp), so an array of n `{}` costs
// O(n^2). This builder never looks back at a parent.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include "base/json.h"
#include "base/mapped_file.h"

namespace mineru {
namespace {

// glibc's malloc: a request of n bytes takes n plus its 8-byte size field, rounded up to 16,
// and at least 32 bytes.
constexpr uint64_t HeapBlock(uint64_t n) { return std::max<uint64_t>(32, (n + 8 + 15) / 16 * 16); }

constexpr uint64_t kSlotBytes = sizeof(Json);
constexpr uint64_t kArrayBytes = HeapBlock(sizeof(Json::array_t));
constexpr uint64_t kObjectBytes = HeapBlock(sizeof(Json::object_t));
// libstdc++'s red-black tree node: its colour and three links, then the key and the value.
constexpr uint64_t kMemberBytes = HeapBlock(4 * sizeof(void*) + sizeof(Json::object_t::value_type));
constexpr uint64_t kStringBytes = HeapBlock(sizeof(Json::string_t));
// A non-empty element buffer: its elements and the block's own overhead (HeapBlock(16 k) is
// 16 k + 16 for every k >= 1).
constexpr uint64_t kBufferBytes = HeapBlock(sizeof(Json)) - sizeof(Json);

// Strings at least this long are taken from the lexer rather than copied (its buffer would
// otherwise stay at up to twice the longest string until the parse ends) and trimmed.
constexpr size_t kTakeStringBytes = 4096;

// The heap block of a string's characters; 0 while they fit in the object itself.
uint64_t CharsBytes(const std::string& s) {
  const char* self = reinterpret_cast<const char*>(&s);
  const bool in_place = s.data() >= self && s.data() < self + sizeof(s);
  return in_place ? 0 : HeapBlock(uint64_t{s.capacity()} + 1);
}

uint64_t SaturatingMulAdd(uint64_t a, uint64_t b, uint64_t c) {
  if (b != 0 && a > (std::numeric_limits<uint64_t>::max() - c) / b) {
    return std::numeric_limits<uint64_t>::max();
  }
  return a * b + c;
}

enum class Refusal { kNone, kDepth, kValues, kDomBytes };

// nlohmann's SAX interface (json_sax in detail/input/json_sax.hpp); every event returns false to
// stop the parse at once.
class BoundedDomBuilder {
 public:
  BoundedDomBuilder(const JsonLimits& limits, uint64_t text_bytes, std::string* repeated_key,
                    const JsonStream* stream)
      : limits_(limits),
        dom_budget_(JsonDomBudget(limits, text_bytes)),
        repeated_key_(repeated_key),
        stream_(stream),
        streamed_(stream == nullptr ? 0 : stream->paths.size(), false) {}

  bool null() { return Scalar(Json(nullptr), 0); }
  bool boolean(bool value) { return Scalar(Json(value), 0); }
  bool number_integer(Json::number_integer_t value) { return Scalar(Json(value), 0); }
  bool number_unsigned(Json::number_unsigned_t value) { return Scalar(Json(value), 0); }
  bool number_float(Json::number_float_t value, const Json::string_t& /*text*/) {
    return Scalar(Json(value), 0);
  }
  bool string(Json::string_t& value) {
    if (!Room()) return false;
    Json json;
    if (value.size() >= kTakeStringBytes) {
      json = Json(std::move(value));
      json.get_ref<Json::string_t&>().shrink_to_fit();
    } else {
      json = Json(value);
    }
    const uint64_t bytes = kStringBytes + CharsBytes(json.get_ref<const Json::string_t&>());
    return Scalar(std::move(json), bytes);
  }
  bool binary(Json::binary_t& /*value*/) {  // never produced from JSON text
    syntax_error_ = "a binary value";
    return false;
  }

  bool start_object(std::size_t /*elements*/) {
    return Open(Json(Json::value_t::object), kObjectBytes);
  }
  bool key(Json::string_t& key) {
    if (!Room()) return false;
    if (ChildOfStream()) {  // the member is the stream's, not the tree's
      if (!Count(kMemberBytes + HeapCharsBytes(key.size()))) return false;
      child_key_ = std::move(key);
      member_ = &child_;
      last_key_ = nullptr;
      return true;
    }
    auto& members = open_.back()->get_ref<Json::object_t&>();
    auto [member, inserted] = members.try_emplace(key);
    if (!inserted && open_.size() == 1 && repeated_key_ != nullptr && repeated_key_->empty()) {
      *repeated_key_ = key;
    }
    if (!Count(inserted ? kMemberBytes + CharsBytes(member->first) : 0)) return false;
    member_ = &member->second;
    last_key_ = &member->first;  // map nodes never move
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(std::size_t /*elements*/) {
    return Open(Json(Json::value_t::array), kArrayBytes);
  }
  bool end_array() {
    open_.back()->get_ref<Json::array_t&>().shrink_to_fit();
    return Close();
  }

  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const Json::exception& error) {
    syntax_error_ = error.what();
    return false;
  }

  Json TakeRoot() { return std::move(root_); }
  // The error that stopped a streamed parse (a repeated stream path, or the sink's own).
  const std::optional<Error>& stream_error() const { return stream_error_; }
  Refusal refusal() const { return refusal_; }
  const std::string& syntax_error() const { return syntax_error_; }
  uint64_t dom_budget() const { return dom_budget_; }

 private:
  // Whether a value may start where the parse stands: its depth is the number of open containers.
  bool Room() {
    if (open_.size() >= static_cast<size_t>(std::max(limits_.max_depth, 0))) {
      refusal_ = Refusal::kDepth;
      return false;
    }
    return true;
  }

  // Counts one more value holding bytes of the tree.
  bool Count(uint64_t bytes) {
    if (++values_ > limits_.max_values) {
      refusal_ = Refusal::kValues;
      return false;
    }
    dom_bytes_ += bytes;
    if (dom_bytes_ > dom_budget_) {
      refusal_ = Refusal::kDomBytes;
      return false;
    }
    return true;
  }

  // Puts value where the document's next value goes (the root, the end of the open array, the
  // member of the last key) and returns where it now lives; nullptr when a limit refuses it.
  // Pointers to open containers stay valid: a parent array grows only after its child closed,
  // and map nodes never move.
  Json* Place(Json&& value, uint64_t payload_bytes) {
    if (!Room()) return nullptr;
    if (open_.empty()) {
      if (!Count(kSlotBytes + payload_bytes)) return nullptr;
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      auto& items = parent.get_ref<Json::array_t&>();
      if (!Count(kSlotBytes + (items.empty() ? kBufferBytes : 0) + payload_bytes)) return nullptr;
      items.push_back(std::move(value));
      return &items.back();
    }
    if (!Count(payload_bytes)) return nullptr;  // the member's node was counted with its key
    *member_ = std::move(value);
    return member_;
  }

  // Streaming (JsonStream): stream_depth_ is open_.size() while the streamed container is the
  // innermost open one (0 when none is open); its children are built in child_, one at a time.
  bool ChildOfStream() const { return stream_depth_ != 0 && open_.size() == stream_depth_; }

  // A scalar value; handed to the stream at once when it is a streamed container's child.
  bool Scalar(Json&& value, uint64_t payload_bytes) {
    const bool child = ChildOfStream();
    if (child) return PlaceChild(std::move(value), payload_bytes) && Emit();
    return Place(std::move(value), payload_bytes) != nullptr;
  }

  bool PlaceChild(Json&& value, uint64_t payload_bytes) {
    if (!Room()) return false;
    const bool element = open_.back()->is_array();  // a member's node was counted with its key
    if (!Count((element ? kSlotBytes : 0) + payload_bytes)) return false;
    if (element) child_key_.clear();
    child_ = std::move(value);
    return true;
  }

  bool Open(Json&& container, uint64_t payload_bytes) {
    if (ChildOfStream()) {
      if (!PlaceChild(std::move(container), payload_bytes)) return false;
      open_.push_back(&child_);
      path_.push_back(nullptr);
      return true;
    }
    // The key this container sits under: an object member's, else none (the root, an element).
    const std::string* key = !open_.empty() && open_.back()->is_object() ? last_key_ : nullptr;
    Json* at = Place(std::move(container), payload_bytes);
    if (at == nullptr) return false;
    open_.push_back(at);
    path_.push_back(key);
    if (stream_ == nullptr || stream_depth_ != 0) return true;
    for (size_t p = 0; p < stream_->paths.size(); ++p) {
      const std::vector<std::string>& want = stream_->paths[p];
      if (want.size() + 1 != path_.size()) continue;
      bool match = true;
      for (size_t i = 0; i < want.size() && match; ++i) {
        match = path_[i + 1] != nullptr && *path_[i + 1] == want[i];
      }
      if (!match) continue;
      if (streamed_[p]) {
        stream_error_ =
            Error{ErrorCode::kCorrupt, fmt::format("'{}' appears twice", fmt::join(want, "."))};
        return false;
      }
      streamed_[p] = true;
      stream_depth_ = open_.size();
      stream_path_ = p;
      break;
    }
    return true;
  }

  bool Close() {
    const bool stream_closes = stream_depth_ != 0 && open_.size() == stream_depth_;
    open_.pop_back();
    path_.pop_back();
    if (stream_closes) {
      stream_depth_ = 0;
      return true;
    }
    return !ChildOfStream() || Emit();  // a streamed container's child completed
  }

  bool Emit() {
    Status status = stream_->child(stream_path_, std::move(child_key_), std::move(child_));
    child_ = Json();
    child_key_.clear();
    if (!status) {
      stream_error_ = status.error();
      return false;
    }
    return true;
  }

  // The heap block of a copied string of n characters; 0 while they fit in place (15).
  static uint64_t HeapCharsBytes(size_t n) { return n <= 15 ? 0 : HeapBlock(uint64_t{n} + 1); }

  const JsonLimits& limits_;
  const uint64_t dom_budget_;
  std::string* repeated_key_;
  Json root_;
  std::vector<Json*> open_;  // the containers around the parse position, outermost first
  Json* member_ = nullptr;   // where the value of the last key goes
  const std::string* last_key_ = nullptr;  // the last key of the tree (for stream paths)
  std::vector<const std::string*> path_;   // the key of each open container, null if none
  const JsonStream* stream_;
  std::vector<bool> streamed_;  // per stream path: met already
  size_t stream_depth_ = 0;
  size_t stream_path_ = 0;
  std::string child_key_;
  Json child_;
  std::optional<Error> stream_error_;
  uint64_t values_ = 0;
  uint64_t dom_bytes_ = 0;
  Refusal refusal_ = Refusal::kNone;
  std::string syntax_error_;
};

}  // namespace

JsonLimits JsonFileLimits(int max_depth) {
  JsonLimits limits;
  limits.max_depth = max_depth;
  limits.max_values = kJsonFileMaxValues;
  return limits;
}

uint64_t JsonDomBudget(const JsonLimits& limits, uint64_t text_bytes) {
  return SaturatingMulAdd(text_bytes, limits.max_dom_bytes_per_byte, limits.dom_allowance_bytes);
}

uint64_t JsonDomBytes(const Json& json) {
  // The root's slot; every other value's slot is in its array's buffer or its member's node.
  uint64_t total = kSlotBytes;
  std::vector<const Json*> pending = {&json};
  while (!pending.empty()) {
    const Json& value = *pending.back();
    pending.pop_back();
    switch (value.type()) {
      case Json::value_t::array: {
        const auto& items = value.get_ref<const Json::array_t&>();
        total += kArrayBytes;
        if (items.capacity() > 0) total += HeapBlock(items.capacity() * sizeof(Json));
        for (const Json& item : items) pending.push_back(&item);
        break;
      }
      case Json::value_t::object:
        total += kObjectBytes;
        for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
          total += kMemberBytes + CharsBytes(key);  // the node holds the member's value
          pending.push_back(&member);
        }
        break;
      case Json::value_t::string:
        total += kStringBytes + CharsBytes(value.get_ref<const Json::string_t&>());
        break;
      case Json::value_t::binary:
        total += HeapBlock(sizeof(Json::binary_t)) + HeapBlock(value.get_binary().capacity());
        break;
      default:
        break;
    }
  }
  return total;
}

namespace {
Result<Json> Parse(std::string_view text, std::string_view name, const JsonLimits& limits,
                   std::string* repeated_top_level_key, const JsonStream* stream) {
  if (repeated_top_level_key != nullptr) repeated_top_level_key->clear();
  BoundedDomBuilder builder(limits, text.size(), repeated_top_level_key, stream);
  try {
    Json::sax_parse(text.data(), text.data() + text.size(), &builder);
  } catch (const std::bad_alloc&) {
    return Fail(ErrorCode::kResourceExhausted, "{}: out of memory parsing {} bytes of JSON", name,
                text.size());
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kCorrupt, "{}: invalid JSON: {}", name, e.what());
  }
  switch (builder.refusal()) {
    case Refusal::kDepth:
      return Fail(ErrorCode::kResourceExhausted,
                  "{}: JSON nested deeper than the limit of {} (JsonLimits::max_depth)", name,
                  limits.max_depth);
    case Refusal::kValues:
      return Fail(ErrorCode::kResourceExhausted,
                  "{}: JSON holds more values than the limit of {} (JsonLimits::max_values)", name,
                  limits.max_values);
    case Refusal::kDomBytes:
      return Fail(ErrorCode::kResourceExhausted,
                  "{}: {} bytes of JSON parse to more than the limit of {} bytes (allowance {} + "
                  "{} per byte of text: JsonLimits::max_dom_bytes_per_byte)",
                  name, text.size(), builder.dom_budget(), limits.dom_allowance_bytes,
                  limits.max_dom_bytes_per_byte);
    case Refusal::kNone:
      break;
  }
  if (builder.stream_error()) {
    Error error = *builder.stream_error();
    if (error.code == ErrorCode::kCorrupt && !error.message.starts_with(name)) {
      error.message = fmt::format("{}: {}", name, error.message);
    }
    return tl::unexpected(std::move(error));
  }
  if (!builder.syntax_error().empty()) {
    return Fail(ErrorCode::kCorrupt, "{}: invalid JSON: {}", name, builder.syntax_error());
  }
  return builder.TakeRoot();
}
}  // namespace

Result<Json> ParseJson(std::string_view text, std::string_view name, const JsonLimits& limits,
                       std::string* repeated_top_level_key) {
  return Parse(text, name, limits, repeated_top_level_key, nullptr);
}

Result<Json> ParseJson(std::string_view text, std::string_view name, const JsonLimits& limits,
                       const JsonStream& stream) {
  return Parse(text, name, limits, nullptr, &stream);
}

Result<Json> ParseJson(std::string_view text, std::string_view name, int max_depth) {
  JsonLimits limits;
  limits.max_depth = max_depth;
  return ParseJson(text, name, limits);
}

Result<Json> ReadJsonFile(const std::string& path, size_t max_bytes, const JsonLimits& limits) {
  MINERU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, max_bytes));
  return ParseJson(text, path, limits);
}

Result<Json> ReadJsonFile(const std::string& path, size_t max_bytes, int max_depth) {
  return ReadJsonFile(path, max_bytes, JsonFileLimits(max_depth));
}

}  // namespace mineru
