// SPDX-License-Identifier: Apache-2.0
// Python json.dumps / repr() compatible writers (see celery_pyjson.h).
#include "celery/celery_pyjson.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "text/utf8.h"

namespace mineru::jobs {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// The code point at text[*pos]; a malformed sequence yields U+FFFD and consumes its maximal
// subpart (as text::RepairUtf8 does), so every input terminates.
char32_t NextCodePoint(std::string_view text, size_t* pos) {
  char32_t cp = 0;
  if (const size_t n = text::WellFormedLength(text, *pos, &cp); n > 0) {
    *pos += n;
    return cp;
  }
  *pos += std::max<size_t>(1, text::MaximalSubpartLength(text, *pos));
  return kReplacement;
}

void AppendUtf8(std::string* out, char32_t cp) { text::AppendUtf8(cp, out); }

void AppendHex(std::string* out, unsigned value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4)
    out->push_back(kHex[(value >> shift) & 0xF]);
}

void AppendJsonString(std::string* out, std::string_view text) {
  out->push_back('"');
  for (size_t pos = 0; pos < text.size();) {
    const char32_t cp = NextCodePoint(text, &pos);
    switch (cp) {
      case '"':
        *out += "\\\"";
        continue;
      case '\\':
        *out += "\\\\";
        continue;
      case '\n':
        *out += "\\n";
        continue;
      case '\r':
        *out += "\\r";
        continue;
      case '\t':
        *out += "\\t";
        continue;
      case '\b':
        *out += "\\b";
        continue;
      case '\f':
        *out += "\\f";
        continue;
      default:
        break;
    }
    if (cp >= 0x20 && cp <= 0x7E) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x10000) {
      *out += "\\u";
      AppendHex(out, cp, 4);
    } else {
      const char32_t v = cp - 0x10000;
      *out += "\\u";
      AppendHex(out, 0xD800 + (v >> 10), 4);
      *out += "\\u";
      AppendHex(out, 0xDC00 + (v & 0x3FF), 4);
    }
  }
  out->push_back('"');
}

// Python's float repr: shortest round-trip digits; positional notation when the decimal point
// position decpt (value = 0.DIGITS * 10^decpt) satisfies -4 < decpt <= 16, else d.ddde+XX.
std::string PyFloat(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(end - buf));
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(),
                  exponent);
  const int decpt = exponent + 1;
  const int ndigits = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
    } else if (decpt >= ndigits) {
      out += digits + std::string(static_cast<size_t>(decpt - ndigits), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(decpt)) + "." +
             digits.substr(static_cast<size_t>(decpt));
    }
    return out;
  }
  out.push_back(digits[0]);
  if (ndigits > 1) out.append(".").append(digits, 1);
  out.push_back('e');
  out.push_back(exponent < 0 ? '-' : '+');
  const int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude < 10) out.push_back('0');
  out += std::to_string(magnitude);
  return out;
}

bool IsExceptionRecord(const Json& object) {
  return object.size() == 3 && object.contains("exc_type") && object.contains("exc_message") &&
         object.contains("exc_module");
}

void AppendPyJson(std::string* out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      *out += "null";
      return;
    case Json::value_t::boolean:
      *out += value.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer:
      *out += std::to_string(value.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      *out += std::to_string(value.get<uint64_t>());
      return;
    case Json::value_t::number_float: {
      const double d = value.get<double>();
      if (std::isnan(d)) {
        *out += "NaN";
      } else if (std::isinf(d)) {
        *out += d < 0 ? "-Infinity" : "Infinity";
      } else {
        *out += PyFloat(d);
      }
      return;
    }
    case Json::value_t::string:
      AppendJsonString(out, value.get_ref<const std::string&>());
      return;
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& item : value) {
        if (!first) *out += ", ";
        first = false;
        AppendPyJson(out, item);
      }
      out->push_back(']');
      return;
    }
    case Json::value_t::object: {
      out->push_back('{');
      if (IsExceptionRecord(value)) {
        bool first = true;
        for (const char* key : {"exc_type", "exc_message", "exc_module"}) {
          if (!first) *out += ", ";
          first = false;
          AppendJsonString(out, key);
          *out += ": ";
          AppendPyJson(out, value.at(key));
        }
      } else {
        bool first = true;
        for (const auto& [key, item] : value.items()) {
          if (!first) *out += ", ";
          first = false;
          AppendJsonString(out, key);
          *out += ": ";
          AppendPyJson(out, item);
        }
      }
      out->push_back('}');
      return;
    }
    case Json::value_t::binary:
    case Json::value_t::discarded:
      *out += "null";
      return;
  }
}

void AppendPyStr(std::string* out, std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out->push_back(quote);
  for (size_t pos = 0; pos < text.size();) {
    const char32_t cp = NextCodePoint(text, &pos);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(cp));
    } else if (cp == '\n') {
      *out += "\\n";
    } else if (cp == '\r') {
      *out += "\\r";
    } else if (cp == '\t') {
      *out += "\\t";
    } else if (cp < 0x20 || cp == 0x7F) {
      *out += "\\x";
      AppendHex(out, cp, 2);
    } else {
      AppendUtf8(out, cp);
    }
  }
  out->push_back(quote);
}

void AppendPyRepr(std::string* out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      *out += "None";
      return;
    case Json::value_t::boolean:
      *out += value.get<bool>() ? "True" : "False";
      return;
    case Json::value_t::number_float: {
      const double d = value.get<double>();
      if (std::isnan(d)) {
        *out += "nan";
      } else if (std::isinf(d)) {
        *out += d < 0 ? "-inf" : "inf";
      } else {
        *out += PyFloat(d);
      }
      return;
    }
    case Json::value_t::string:
      AppendPyStr(out, value.get_ref<const std::string&>());
      return;
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& item : value) {
        if (!first) *out += ", ";
        first = false;
        AppendPyRepr(out, item);
      }
      out->push_back(']');
      return;
    }
    case Json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) *out += ", ";
        first = false;
        AppendPyStr(out, key);
        *out += ": ";
        AppendPyRepr(out, item);
      }
      out->push_back('}');
      return;
    }
    default:
      AppendPyJson(out, value);
      return;  // integers read the same in both
  }
}

}  // namespace

std::string PyJsonDumps(const Json& value) {
  std::string out;
  AppendPyJson(&out, value);
  return out;
}

std::string PyRepr(const Json& value) {
  std::string out;
  AppendPyRepr(&out, value);
  return out;
}

}  // namespace mineru::jobs
