// SPDX-License-Identifier: Apache-2.0
#include "pipeline/retry_policy.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <ctime>
#include <limits>

namespace mineru::pipeline {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

// A broken-down UTC time as the three HTTP date forms spell it.
struct HttpDate {
  int year = 0;
  int month = 0;  // 1-12
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
};

// Reads a fixed-width field of ASCII digits (or, with leading_space, one space then a digit:
// asctime's day of the month). False when the text does not match.
bool ReadDigits(std::string_view text, size_t pos, size_t width, int& out,
                bool leading_space = false) {
  if (pos + width > text.size()) return false;
  int value = 0;
  for (size_t i = 0; i < width; ++i) {
    const char c = text[pos + i];
    if (leading_space && i == 0 && c == ' ') continue;
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  out = value;
  return true;
}

bool ReadLiteral(std::string_view text, size_t pos, std::string_view literal) {
  return text.substr(pos, literal.size()) == literal;
}

// "Jan".."Dec", case-sensitive as the grammar is.
bool ReadMonth(std::string_view text, size_t pos, int& month) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::string_view name = text.substr(pos, 3);
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (name == kMonths[i]) {
      month = static_cast<int>(i) + 1;
      return true;
    }
  }
  return false;
}

// "Mon".."Sun" (the short names) or "Monday".."Sunday" (RFC 850's long ones); the length read.
size_t ReadDayName(std::string_view text, bool long_name) {
  static constexpr std::array<std::string_view, 7> kShort = {"Mon", "Tue", "Wed", "Thu",
                                                             "Fri", "Sat", "Sun"};
  static constexpr std::array<std::string_view, 7> kLong = {
      "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
  for (std::string_view name : long_name ? kLong : kShort) {
    if (text.starts_with(name)) return name.size();
  }
  return 0;
}

// "HH:MM:SS".
bool ReadTimeOfDay(std::string_view text, size_t pos, HttpDate& date) {
  return ReadDigits(text, pos, 2, date.hour) && ReadLiteral(text, pos + 2, ":") &&
         ReadDigits(text, pos + 3, 2, date.minute) && ReadLiteral(text, pos + 5, ":") &&
         ReadDigits(text, pos + 6, 2, date.second);
}

// IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
bool ParseImfFixdate(std::string_view text, HttpDate& date) {
  const size_t day_name = ReadDayName(text, false);
  if (day_name == 0 || text.size() != 29) return false;
  return ReadLiteral(text, 3, ", ") && ReadDigits(text, 5, 2, date.day) &&
         ReadLiteral(text, 7, " ") && ReadMonth(text, 8, date.month) &&
         ReadLiteral(text, 11, " ") && ReadDigits(text, 12, 4, date.year) &&
         ReadLiteral(text, 16, " ") && ReadTimeOfDay(text, 17, date) &&
         ReadLiteral(text, 25, " GMT");
}

// RFC 850 (obsolete): "Sunday, 06-Nov-94 08:49:37 GMT". The two-digit year is the most recent
// year with those digits that is not more than 50 years after `now_year`, as RFC 9110 asks.
bool ParseRfc850Date(std::string_view text, int now_year, HttpDate& date) {
  const size_t n = ReadDayName(text, true);
  if (n == 0 || text.size() != n + 24) return false;
  int yy = 0;
  if (!(ReadLiteral(text, n, ", ") && ReadDigits(text, n + 2, 2, date.day) &&
        ReadLiteral(text, n + 4, "-") && ReadMonth(text, n + 5, date.month) &&
        ReadLiteral(text, n + 8, "-") && ReadDigits(text, n + 9, 2, yy) &&
        ReadLiteral(text, n + 11, " ") && ReadTimeOfDay(text, n + 12, date) &&
        ReadLiteral(text, n + 20, " GMT"))) {
    return false;
  }
  int year = now_year - now_year % 100 + yy;
  if (year > now_year + 50) year -= 100;
  date.year = year;
  return true;
}

// asctime (obsolete): "Sun Nov  6 08:49:37 1994".
bool ParseAsctimeDate(std::string_view text, HttpDate& date) {
  if (ReadDayName(text, false) == 0 || text.size() != 24) return false;
  return ReadLiteral(text, 3, " ") && ReadMonth(text, 4, date.month) && ReadLiteral(text, 7, " ") &&
         ReadDigits(text, 8, 2, date.day, true) && ReadLiteral(text, 10, " ") &&
         ReadTimeOfDay(text, 11, date) && ReadLiteral(text, 19, " ") &&
         ReadDigits(text, 20, 4, date.year);
}

bool IsLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

bool IsValidDate(const HttpDate& date) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (date.month < 1 || date.month > 12 || date.day < 1) return false;
  const int days = kDays[date.month - 1] + (date.month == 2 && IsLeapYear(date.year) ? 1 : 0);
  // Second 60: a leap second, which the grammar allows (timegm carries it into the next minute).
  return date.day <= days && date.hour <= 23 && date.minute <= 59 && date.second <= 60;
}

// Any of the three forms as seconds since the epoch, or nullopt. timegm reads the fields as UTC
// (mktime would apply the local zone) and no locale is involved anywhere. Seconds, not a
// time_point: year 9999 is past what system_clock's nanoseconds hold.
std::optional<int64_t> ParseHttpDate(std::string_view text, system_clock::time_point now) {
  std::tm now_tm{};
  const std::time_t now_t = system_clock::to_time_t(now);
  if (gmtime_r(&now_t, &now_tm) == nullptr) return std::nullopt;
  HttpDate date;
  if (!ParseImfFixdate(text, date) && !ParseRfc850Date(text, now_tm.tm_year + 1900, date) &&
      !ParseAsctimeDate(text, date)) {
    return std::nullopt;
  }
  if (!IsValidDate(date)) return std::nullopt;
  std::tm tm{};
  tm.tm_year = date.year - 1900;
  tm.tm_mon = date.month - 1;
  tm.tm_mday = date.day;
  tm.tm_hour = date.hour;
  tm.tm_min = date.minute;
  tm.tm_sec = date.second;
  const std::time_t when = timegm(&tm);
  if (when == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<int64_t>(when);
}

std::string_view TrimWhitespace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

}  // namespace

bool IsRetryableStatus(long status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

std::optional<milliseconds> ParseRetryAfter(std::string_view value, system_clock::time_point now,
                                            milliseconds cap) {
  const std::string_view text = TrimWhitespace(value);
  if (text.empty()) return std::nullopt;
  if (cap <= milliseconds(0)) return std::nullopt;  // nothing may be waited: the backoff applies
  // Anything more than this many whole seconds away is the cap; comparing in seconds first
  // keeps the millisecond arithmetic below far from overflow, whatever the cap or the digits.
  const int64_t cap_seconds = cap.count() / 1000 + 1;
  milliseconds wait{0};
  if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // delta-seconds, saturated so that any number of digits is safe.
    int64_t seconds = 0;
    for (char c : text) seconds = std::min(cap_seconds, seconds * 10 + (c - '0'));
    if (seconds == 0) return std::nullopt;
    if (seconds >= cap_seconds) return cap;
    wait = std::chrono::seconds(seconds);
  } else {
    // The date has whole seconds (at most year 9999), `now` keeps its milliseconds.
    const std::optional<int64_t> when_s = ParseHttpDate(text, now);
    if (!when_s) return std::nullopt;
    const int64_t now_s = std::chrono::floor<std::chrono::seconds>(now.time_since_epoch()).count();
    if (*when_s - now_s > cap_seconds) return cap;
    const int64_t now_ms = std::chrono::floor<milliseconds>(now.time_since_epoch()).count();
    wait = milliseconds(*when_s * 1000 - now_ms);
  }
  if (wait <= milliseconds(0)) return std::nullopt;
  return std::min(wait, cap);
}

milliseconds BackoffDelay(int retry, milliseconds backoff_base, std::mt19937_64& rng) {
  if (backoff_base <= milliseconds(0)) return milliseconds(0);
  // bound = base * 2^retry, doubling only while the next doubling still fits in int64.
  int64_t bound = backoff_base.count();
  for (int k = 0; k < retry && bound <= std::numeric_limits<int64_t>::max() / 2; ++k) bound *= 2;
  std::uniform_int_distribution<int64_t> uniform(0, bound - 1);
  return milliseconds(uniform(rng));
}

}  // namespace mineru::pipeline
