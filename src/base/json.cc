// SPDX-License-Identifier: Apache-2.0
#include "base/json.h"

#include <cmath>

namespace mineru {

std::string DumpJson(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

namespace {

Result<const Json*> Lookup(const Json& object, std::string_view key, std::string_view where) {
  if (!object.is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected a JSON object", where);
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return static_cast<const Json*>(nullptr);
  return &*it;
}

}  // namespace

Result<std::optional<int64_t>> FindInt(const Json& object, std::string_view key,
                                       std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(const Json* value, Lookup(object, key, where));
  if (value == nullptr) return std::optional<int64_t>();
  if (value->is_number_integer()) return std::optional<int64_t>(value->get<int64_t>());
  // 3.0 is accepted as 3 (some configs are written by tools that emit floats).
  if (value->is_number_float()) {
    const double d = value->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      return std::optional<int64_t>(static_cast<int64_t>(d));
    }
  }
  return Fail(ErrorCode::kCorrupt, "{}: '{}' must be an integer, got {}", where, key,
              value->dump());
}

Result<std::optional<double>> FindNumber(const Json& object, std::string_view key,
                                         std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(const Json* value, Lookup(object, key, where));
  if (value == nullptr) return std::optional<double>();
  if (!value->is_number()) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' must be a number, got {}", where, key,
                value->dump());
  }
  return std::optional<double>(value->get<double>());
}

Result<std::optional<bool>> FindBool(const Json& object, std::string_view key,
                                     std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(const Json* value, Lookup(object, key, where));
  if (value == nullptr) return std::optional<bool>();
  if (!value->is_boolean()) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' must be true or false, got {}", where, key,
                value->dump());
  }
  return std::optional<bool>(value->get<bool>());
}

Result<std::optional<std::string>> FindString(const Json& object, std::string_view key,
                                              std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(const Json* value, Lookup(object, key, where));
  if (value == nullptr) return std::optional<std::string>();
  if (!value->is_string()) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' must be a string, got {}", where, key,
                value->dump());
  }
  return std::optional<std::string>(value->get<std::string>());
}

Result<std::optional<std::vector<int64_t>>> FindIntArray(const Json& object, std::string_view key,
                                                         std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(const Json* value, Lookup(object, key, where));
  if (value == nullptr) return std::optional<std::vector<int64_t>>();
  if (!value->is_array()) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' must be an array of integers, got {}", where, key,
                value->dump());
  }
  std::vector<int64_t> out;
  for (const Json& item : *value) {
    if (!item.is_number_integer()) {
      return Fail(ErrorCode::kCorrupt, "{}: '{}' must be an array of integers, got {}", where, key,
                  value->dump());
    }
    out.push_back(item.get<int64_t>());
  }
  return std::optional<std::vector<int64_t>>(std::move(out));
}

}  // namespace mineru
