// SPDX-License-Identifier: Apache-2.0
#include "base/server_paths.h"

namespace mineru {
namespace {

bool StartsPath(std::string_view text, size_t i) {
  if (text[i] != '/') return false;
  if (i == 0) return true;
  switch (text[i - 1]) {
    case ' ':
    case '\t':
    case '\n':
    case '\'':
    case '"':
    case '(':
    case '[':
    case '<':
    case '{':
    case '=':
      return true;
    default:
      return false;
  }
}

bool EndsPath(std::string_view text, size_t j) {
  switch (text[j]) {
    case ' ':
    case '\t':
    case '\n':
    case '\'':
    case '"':
    case ')':
    case ']':
    case '>':
    case '}':
    case ',':
    case ';':
      return true;
    case ':':
      return j + 1 == text.size() || text[j + 1] == ' ';
    default:
      return false;
  }
}

}  // namespace

std::string WithoutServerPaths(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (!StartsPath(text, i)) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    size_t slashes = 0;
    while (end < text.size() && !EndsPath(text, end)) {
      if (text[end] == '/') ++slashes;
      ++end;
    }
    std::string_view token = text.substr(i, end - i);
    if (slashes >= 2) {
      std::string_view trimmed = token;
      while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.remove_suffix(1);
      const size_t last = trimmed.rfind('/');
      if (last + 1 < trimmed.size()) token = trimmed.substr(last + 1);
    }
    out += token;
    i = end;
  }
  return out;
}

}  // namespace mineru
