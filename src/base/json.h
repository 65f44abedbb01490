// SPDX-License-Identifier: Apache-2.0
// JSON parsing (nlohmann) at the boundary: untrusted text becomes a Result, never an exception.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru {

using Json = nlohmann::json;

// Default nesting limit: deeper documents are refused (nothing we read nests beyond a few levels).
inline constexpr int kJsonMaxDepth = 64;

// Compact JSON text; bytes that are not UTF-8 (inside strings from outside) become U+FFFD
// rather than an exception.
std::string DumpJson(const Json& json);

// name appears in error messages ("config.json").
Result<Json> ParseJson(std::string_view text, std::string_view name, int max_depth = kJsonMaxDepth);
Result<Json> ReadJsonFile(const std::string& path, size_t max_bytes, int max_depth = kJsonMaxDepth);

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
