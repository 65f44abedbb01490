// SPDX-License-Identifier: Apache-2.0
// JSON parsing (nlohmann) at the boundary: untrusted text becomes a Result, never an exception.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru {

using Json = nlohmann::json;

// What one parse may cost. Every limit refuses the document with kResourceExhausted and a message
// naming it; the parse stops at the first value past a limit, so a refused text costs no more
// than the limit allows. Time is linear in the text (one pass, no rescans of parents).
//
// Two presets: the defaults, for bodies and messages from the network (HTTP requests, Celery and
// control messages, small values stored in Redis), and JsonFileLimits(), for files and stored
// documents, which may hold more values (a tokenizer.json about 760,000, a long document's
// middle.json millions).

// Deepest nesting: a value (or key) inside d containers is at depth d and refused when
// d >= max_depth (`[[]]` needs 2, `[[1]]` needs 3). Nothing we read nests beyond a few levels.
inline constexpr int kJsonMaxDepth = 64;
// Values in one document: every scalar, array, object and object key counts one. With the
// per-byte bound below, this caps the tree of any body: at most 96 bytes per value, plus the
// strings' characters (no more than the text's bytes).
inline constexpr uint64_t kJsonMaxValues = uint64_t{1} << 20;
inline constexpr uint64_t kJsonFileMaxValues = uint64_t{1} << 24;
// Bytes the parsed tree may hold per byte of text (by JsonDomBytes' accounting), beyond
// kJsonDomAllowanceBytes: the tree of an n-byte text holds at most allowance + 16 n. Tree bytes
// per text byte: base64 and long strings 1, six-digit numbers 2.3, single digits 8, a compact
// tokenizer.json 8.6 (its merges 12), one-letter strings and `[],` 16 (accepted); `""` 21, `[0]`
// 20, `{}` 27, `{"":""}` 28, `{"":{}}` up to 32 (refused past the allowance).
inline constexpr uint64_t kJsonMaxDomBytesPerByte = 16;
inline constexpr uint64_t kJsonDomAllowanceBytes = uint64_t{1} << 20;

struct JsonLimits {
  int max_depth = kJsonMaxDepth;
  uint64_t max_values = kJsonMaxValues;
  uint64_t max_dom_bytes_per_byte = kJsonMaxDomBytesPerByte;
  uint64_t dom_allowance_bytes = kJsonDomAllowanceBytes;
};

// The preset for files and stored documents (tokenizer.json, config.json, safetensors headers,
// middle.json, stored Celery results): kJsonFileMaxValues values.
JsonLimits JsonFileLimits(int max_depth = kJsonMaxDepth);

// The most bytes the tree of a text_bytes-long text may hold under limits (saturating).
uint64_t JsonDomBudget(const JsonLimits& limits, uint64_t text_bytes);

// The bytes a tree holds, by libstdc++'s layout and glibc's malloc (a request of n bytes takes
// max(32, n + 8 rounded up to 16)): 16 per value (the root, an array slot; an object member's
// value lives in its node), an array 32 plus 16 per element and 16 for a non-empty buffer, an
// object 64 plus 96 per member, a string 48; keys and strings longer than the in-place buffer
// (15 bytes) add their heap block. The parser keeps the tree at exactly this size: arrays are
// trimmed when they close and strings hold no spare capacity (while an array is open its buffer
// may hold up to twice its elements). Non-recursive.
uint64_t JsonDomBytes(const Json& json);

// Compact JSON text; bytes that are not UTF-8 (inside strings from outside) become U+FFFD
// rather than an exception.
std::string DumpJson(const Json& json);

// Parses untrusted text under limits in one linear pass; name appears in error messages
// ("config.json"). Syntax errors are kCorrupt ("invalid JSON: ..."), limits kResourceExhausted.
// When repeated_top_level_key is given it receives the first key that the top-level object
// repeats (nlohmann keeps the last value; formats such as safetensors forbid repeats), else "".
// Where an object repeats a key, the earlier value still counts against the limits.
Result<Json> ParseJson(std::string_view text, std::string_view name, const JsonLimits& limits,
                       std::string* repeated_top_level_key = nullptr);
// The network defaults with the given depth.
Result<Json> ParseJson(std::string_view text, std::string_view name, int max_depth = kJsonMaxDepth);

// Containers streamed out of the tree instead of built into it (a tokenizer.json's 151,643
// vocabulary members and merges: building them as a tree costs more than the parse). A container
// found at one of `paths` (object keys from the root: {"model", "vocab"}) appears in the tree
// empty, of its own type; each of its direct children goes to `child` as soon as it is complete,
// with its key (an object member's) or "" (an array element's) and its value built as a tree.
// Children still count against every limit as if the tree held them, so streaming never lets a
// document cost more than the limits say. A path met twice (a repeated key on the way) is
// refused with kCorrupt, as is anything `child` refuses (its error is returned as is). Nothing
// inside a streamed container is streamed again.
struct JsonStream {
  std::vector<std::vector<std::string>> paths;
  std::function<Status(size_t path, std::string&& key, Json&& value)> child;
};
Result<Json> ParseJson(std::string_view text, std::string_view name, const JsonLimits& limits,
                       const JsonStream& stream);
// A file of at most max_bytes, under JsonFileLimits(max_depth) or the given limits.
Result<Json> ReadJsonFile(const std::string& path, size_t max_bytes, int max_depth = kJsonMaxDepth);
Result<Json> ReadJsonFile(const std::string& path, size_t max_bytes, const JsonLimits& limits);

// Field access with errors that name the field: "config.json: 'hidden_size' must be an integer".
// Find* return nullopt when the key is absent and an error when it has the wrong type.
Result<std::optional<int64_t>> FindInt(const Json& object, std::string_view key,
                                       std::string_view where);
Result<std::optional<double>> FindNumber(const Json& object, std::string_view key,
                                         std::string_view where);
Result<std::optional<bool>> FindBool(const Json& object, std::string_view key,
                                     std::string_view where);
Result<std::optional<std::string>> FindString(const Json& object, std::string_view key,
                                              std::string_view where);
Result<std::optional<std::vector<int64_t>>> FindIntArray(const Json& object, std::string_view key,
                                                         std::string_view where);

}  // namespace mineru
