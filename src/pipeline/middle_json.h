// SPDX-License-Identifier: Apache-2.0
// Guarded reads of middle.json (MinerU 2.7.6 docs/en/reference/output_files.md) for the stages that
// consume it (Markdown, content_list, table merge): a missing key or a value of the wrong type
// reads as empty, so no nlohmann accessor that can throw is ever reached on a malformed page.
#pragma once

#include <cstdint>
#include <string>

#include "base/json.h"

namespace mineru::pipeline {

inline const Json& EmptyJsonArray() {
  static const Json kEmpty = Json::array();
  return kEmpty;
}

// object[key] when it is an array, else an empty array.
inline const Json& ArrayAt(const Json& object, const char* key) {
  if (!object.is_object()) return EmptyJsonArray();
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return EmptyJsonArray();
  return *it;
}

// object[key] when it is a string, else "".
inline std::string StringAt(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

// Title level (MinerU get_title_level): "level" (default 1), above 4 → 4, below 1 → 0.
inline int TitleLevel(const Json& block) {
  int64_t level = 1;
  if (block.is_object()) {
    auto it = block.find("level");
    if (it != block.end()) {
      if (it->is_number_integer()) {
        level = it->get<int64_t>();
      } else if (it->is_number_float()) {
        double d = it->get<double>();
        level = d >= 5 ? 5 : (d < 1 ? 0 : static_cast<int64_t>(d));
      }
    }
  }
  if (level > 4) return 4;
  if (level < 1) return 0;
  return static_cast<int>(level);
}

}  // namespace mineru::pipeline
