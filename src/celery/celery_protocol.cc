// SPDX-License-Identifier: Apache-2.0
// Celery protocol v2 codec and result-backend records (see celery_protocol.h).
#include "celery/celery_protocol.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <tuple>

#include "celery/celery_pyjson.h"

namespace mineru::jobs {
namespace {

using std::chrono::microseconds;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Status CheckContentType(const CeleryEnvelope& in) {
  std::string type = Lower(in.content_type);
  if (const size_t semi = type.find(';'); semi != std::string::npos) type.resize(semi);
  while (!type.empty() && type.back() == ' ') type.pop_back();
  if (type == kCeleryContentType) {
    const std::string encoding = Lower(in.content_encoding);
    if (encoding.empty() || encoding == "utf-8" || encoding == "utf8") return OkStatus();
    return Fail(ErrorCode::kUnsupported,
                "celery message: content_encoding '{}' is not supported (only utf-8)",
                in.content_encoding);
  }
  std::string_view what = "";
  if (type == "application/x-python-serialize") what = " (pickle is never accepted)";
  if (type == "application/x-yaml") what = " (yaml)";
  if (type == "application/x-msgpack") what = " (msgpack)";
  if (type.empty()) what = " (no content_type)";
  return Fail(ErrorCode::kUnsupported,
              "celery message: content_type '{}'{} is not supported; use the json serializer",
              in.content_type, what);
}

// A header that must be a string or null/absent; returns "" for null/absent.
Result<std::string> OptionalStringHeader(const Json& headers, const char* key, size_t max_bytes) {
  auto it = headers.find(key);
  if (it == headers.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return Fail(ErrorCode::kCorrupt, "celery message: header '{}' must be a string, got {}", key,
                it->type_name());
  }
  const auto& value = it->get_ref<const std::string&>();
  if (value.size() > max_bytes) {
    return Fail(ErrorCode::kResourceExhausted,
                "celery message: header '{}' is {} bytes, over the limit of {}", key, value.size(),
                max_bytes);
  }
  return value;
}

Result<std::optional<double>> TimeLimit(const Json& value) {
  if (value.is_null()) return std::optional<double>();
  if (!value.is_number() || value.get<double>() < 0) {
    return Fail(ErrorCode::kCorrupt, "celery message: 'timelimit' entries must be seconds or null");
  }
  return std::optional<double>(value.get<double>());
}

Status ReadHeaders(const Json& h, const CeleryLimits& limits, CeleryTaskMessage* out) {
  MINERU_ASSIGN_OR_RETURN(out->task, OptionalStringHeader(h, "task", limits.max_field_bytes));
  MINERU_ASSIGN_OR_RETURN(out->id, OptionalStringHeader(h, "id", limits.max_field_bytes));
  if (out->id.empty()) return Fail(ErrorCode::kCorrupt, "celery message: no 'id' header");
  MINERU_ASSIGN_OR_RETURN(out->root_id, OptionalStringHeader(h, "root_id", limits.max_field_bytes));
  MINERU_ASSIGN_OR_RETURN(out->parent_id,
                          OptionalStringHeader(h, "parent_id", limits.max_field_bytes));
  MINERU_ASSIGN_OR_RETURN(out->group, OptionalStringHeader(h, "group", limits.max_field_bytes));
  MINERU_ASSIGN_OR_RETURN(out->origin, OptionalStringHeader(h, "origin", limits.max_field_bytes));
  for (auto [key, text, time] : {std::tuple{"eta", &out->eta, &out->eta_time},
                                 std::tuple{"expires", &out->expires, &out->expires_time}}) {
    MINERU_ASSIGN_OR_RETURN(std::string value,
                            OptionalStringHeader(h, key, limits.max_field_bytes));
    if (value.empty()) continue;
    auto parsed = ParseCeleryTime(value);
    if (!parsed)
      return tl::unexpected(WithContext(parsed.error(), fmt::format("celery message: '{}'", key)));
    *text = value;
    *time = *parsed;
  }
  if (auto it = h.find("retries"); it != h.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > INT32_MAX) {
      return Fail(ErrorCode::kCorrupt,
                  "celery message: header 'retries' must be a non-negative integer, got {}",
                  DumpJson(*it));
    }
    out->retries = static_cast<int>(it->get<int64_t>());
  }
  if (auto it = h.find("timelimit"); it != h.end() && !it->is_null()) {
    if (!it->is_array() || it->size() != 2) {
      return Fail(ErrorCode::kCorrupt, "celery message: 'timelimit' must be a two-element list");
    }
    MINERU_ASSIGN_OR_RETURN(out->time_limit, TimeLimit((*it)[0]));
    MINERU_ASSIGN_OR_RETURN(out->soft_time_limit, TimeLimit((*it)[1]));
  }
  if (auto it = h.find("ignore_result"); it != h.end() && it->is_boolean()) {
    out->ignore_result = it->get<bool>();
  }
  return OkStatus();
}

Status ReadEmbed(const Json& embed, const CeleryLimits& limits, CeleryTaskMessage* out) {
  if (embed.is_null()) return OkStatus();
  if (!embed.is_object()) {
    return Fail(ErrorCode::kCorrupt, "celery message: body[2] (embed) must be an object, got {}",
                embed.type_name());
  }
  out->embed = embed;
  std::string present;
  for (const char* key : {"callbacks", "errbacks", "chain", "chord"}) {
    auto it = embed.find(key);
    if (it == embed.end() || it->is_null() || (it->is_array() && it->empty())) continue;
    if (!present.empty()) present += ", ";
    present += key;
  }
  if (present.empty()) return OkStatus();
  out->has_callbacks_or_chain = true;
  if (limits.refuse_workflows) {
    return Fail(ErrorCode::kUnsupported,
                "celery message: task {} carries {} (canvas workflows are not supported by this "
                "worker; send single tasks)",
                out->id, present);
  }
  return OkStatus();
}

// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool ReadDigits(std::string_view text, size_t* pos, size_t count, int* value) {
  if (*pos + count > text.size()) return false;
  int v = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += count;
  *value = v;
  return true;
}

std::string FormatTime(CeleryTime time, bool aware) {
  const auto us = std::chrono::floor<microseconds>(time).time_since_epoch().count();
  int64_t days = us / 86'400'000'000;
  int64_t rem = us % 86'400'000'000;
  if (rem < 0) rem += 86'400'000'000, --days;
  // civil_from_days
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  const int64_t secs = rem / 1'000'000;
  const int64_t frac = rem % 1'000'000;
  std::string out = fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}", y, m, d, secs / 3600,
                                secs / 60 % 60, secs % 60);
  if (frac != 0) out += fmt::format(".{:06d}", frac);
  if (aware) out += "+00:00";
  return out;
}

}  // namespace

Result<CeleryTime> ParseCeleryTime(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Fail(ErrorCode::kCorrupt, "'{}' is not an ISO-8601 time: {}", text, why);
  };
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(text, &pos, 4, &year) || pos >= text.size() || text[pos++] != '-' ||
      !ReadDigits(text, &pos, 2, &month) || pos >= text.size() || text[pos++] != '-' ||
      !ReadDigits(text, &pos, 2, &day)) {
    return bad("expected YYYY-MM-DD");
  }
  static constexpr std::array<int, 12> kDays = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1] ||
      (month == 2 && day == 29 && !leap)) {
    return bad("date out of range");
  }
  int64_t micros = 0;
  int64_t offset_seconds = 0;
  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ') return bad("expected 'T'");
    ++pos;
    if (!ReadDigits(text, &pos, 2, &hour) || pos >= text.size() || text[pos++] != ':' ||
        !ReadDigits(text, &pos, 2, &minute)) {
      return bad("expected HH:MM");
    }
    if (pos < text.size() && text[pos] == ':') {
      ++pos;
      if (!ReadDigits(text, &pos, 2, &second)) return bad("expected seconds");
      if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
        ++pos;
        int digits = 0;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
          if (digits < 6) micros = micros * 10 + (text[pos] - '0');
          ++digits, ++pos;
        }
        if (digits == 0 || digits > 9) return bad("fraction must have 1 to 9 digits");
        for (int i = digits; i < 6; ++i) micros *= 10;
      }
    }
    if (hour > 23 || minute > 59 || second > 59) return bad("time out of range");
    if (pos < text.size()) {
      const char sign = text[pos++];
      if (sign == 'Z' || sign == 'z') {
        if (pos != text.size()) return bad("text after 'Z'");
      } else if (sign == '+' || sign == '-') {
        int oh = 0, om = 0;
        if (!ReadDigits(text, &pos, 2, &oh)) return bad("bad offset");
        if (pos < text.size() && text[pos] == ':') ++pos;
        if (!ReadDigits(text, &pos, 2, &om) || pos != text.size() || oh > 23 || om > 59) {
          return bad("bad offset");
        }
        offset_seconds = (sign == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      } else {
        return bad("unexpected text after the time");
      }
    }
  }
  const int64_t seconds =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + minute * 60 + second - offset_seconds;
  // Python's datetime spans the years 1-9999, CeleryTime (int64 nanoseconds) only 1677-2262:
  // a time beyond saturates at the last whole microsecond it can hold, so an eta or expiry of
  // datetime.max still lies in the far future instead of overflowing. Years 0-9999 in
  // microseconds stay below 3.2e17, far inside int64.
  constexpr int64_t kLatest =
      std::chrono::floor<microseconds>(CeleryTime::max().time_since_epoch()).count();
  constexpr int64_t kEarliest =
      std::chrono::ceil<microseconds>(CeleryTime::min().time_since_epoch()).count();
  const int64_t total = std::clamp(seconds * 1'000'000 + micros, kEarliest, kLatest);
  return CeleryTime(std::chrono::duration_cast<CeleryTime::duration>(microseconds(total)));
}

std::string FormatCeleryTime(CeleryTime time) { return FormatTime(time, /*aware=*/true); }
std::string FormatCeleryDateDone(CeleryTime time) { return FormatTime(time, /*aware=*/false); }

bool ExpiresPassed(const CeleryTaskMessage& message, CeleryTime now) {
  return message.expires_time.has_value() && now > *message.expires_time;
}

bool EtaPending(const CeleryTaskMessage& message, CeleryTime now) {
  return message.eta_time.has_value() && *message.eta_time > now;
}

Result<CeleryTaskMessage> DecodeCeleryMessage(const CeleryEnvelope& in,
                                              const CeleryLimits& limits) {
  if (!in.headers.is_object() || !in.headers.contains("task")) {
    return Fail(ErrorCode::kCorrupt,
                "celery message: no 'task' header (not a Celery protocol v2 message)");
  }
  if (auto it = in.headers.find("compression"); it != in.headers.end() && !it->is_null()) {
    return Fail(ErrorCode::kUnsupported,
                "celery message: compressed bodies ('{}') are not "
                "supported; publish without compression",
                it->is_string() ? it->get<std::string>() : DumpJson(*it));
  }
  MINERU_RETURN_IF_ERROR(CheckContentType(in));
  CeleryTaskMessage out;
  MINERU_RETURN_IF_ERROR(ReadHeaders(in.headers, limits, &out));
  if (out.task.empty()) return Fail(ErrorCode::kCorrupt, "celery message: empty 'task' header");
  if (out.root_id.empty()) out.root_id = out.id;
  if (in.body.size() > limits.max_body_bytes) {
    return Fail(ErrorCode::kResourceExhausted,
                "celery message {}: body is {} bytes, over the limit of {}", out.id, in.body.size(),
                limits.max_body_bytes);
  }
  auto parsed = ParseJson(in.body, "celery message body", limits.max_json_depth);
  if (!parsed) return tl::unexpected(WithContext(parsed.error(), out.id));
  Json body = std::move(*parsed);
  if (!body.is_array() || body.size() != 3) {
    return Fail(ErrorCode::kCorrupt,
                "celery message {}: body must be [args, kwargs, embed], got {}", out.id,
                body.is_array() ? fmt::format("{} elements", body.size()) : body.type_name());
  }
  if (!body[0].is_array()) {
    return Fail(ErrorCode::kCorrupt, "celery message {}: args must be a list, got {}", out.id,
                body[0].type_name());
  }
  if (!body[1].is_object()) {
    return Fail(ErrorCode::kCorrupt, "celery message {}: kwargs must be an object, got {}", out.id,
                body[1].type_name());
  }
  MINERU_RETURN_IF_ERROR(ReadEmbed(body[2], limits, &out));
  out.args = std::move(body[0]);
  out.kwargs = std::move(body[1]);
  if (in.priority) {
    if (*in.priority < 0 || *in.priority > 255) {
      return Fail(ErrorCode::kCorrupt, "celery message {}: priority {} outside 0..255", out.id,
                  *in.priority);
    }
    out.priority = in.priority;
  }
  out.reply_to = in.reply_to;
  return out;
}

CeleryEnvelope EncodeCeleryMessage(std::string_view task, std::string_view id, const Json& args,
                                   const Json& kwargs, const CeleryPublishOptions& options) {
  MINERU_CHECK(args.is_array() && kwargs.is_object(), "args must be a list, kwargs an object");
  const auto or_null = [](const std::string& s) { return s.empty() ? Json() : Json(s); };
  const auto repr = [](std::string text) {
    if (text.size() > kCeleryReprMaxBytes) text = text.substr(0, kCeleryReprMaxBytes - 3) + "...";
    return text;
  };
  std::string origin = options.origin;
  if (origin.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    origin = fmt::format("gen{}@{}", getpid(), host);
  }
  CeleryEnvelope out;
  out.content_type = std::string(kCeleryContentType);
  out.content_encoding = "utf-8";
  out.correlation_id = std::string(id);
  out.reply_to = options.reply_to;
  out.priority = options.priority.value_or(0);
  out.headers = {
      {"lang", "py"},
      {"task", std::string(task)},
      {"id", std::string(id)},
      {"shadow", nullptr},
      {"eta", options.eta ? Json(*options.eta) : Json()},
      {"expires", options.expires ? Json(*options.expires) : Json()},
      {"group", or_null(options.group)},
      {"group_index", nullptr},
      {"retries", options.retries},
      {"timelimit", Json::array({nullptr, nullptr})},
      {"root_id", options.root_id.empty() ? std::string(id) : options.root_id},
      {"parent_id", or_null(options.parent_id)},
      // Celery turns empty args into () before taking the repr.
      {"argsrepr", args.empty() ? std::string("()") : repr(PyRepr(args))},
      {"kwargsrepr", repr(PyRepr(kwargs))},
      {"origin", origin},
      {"ignore_result", options.ignore_result},
  };
  out.body = "[" + PyJsonDumps(args) + ", " + PyJsonDumps(kwargs) +
             ", {\"callbacks\": null, \"errbacks\": null, \"chain\": null, \"chord\": null}]";
  return out;
}

std::string CeleryMetaKey(std::string_view task_id) {
  return std::string(kCeleryMetaKeyPrefix) + std::string(task_id);
}

std::string CeleryResultMeta(std::string_view status, const Json& result,
                             const std::optional<std::string>& traceback, std::string_view task_id,
                             CeleryTime date_done, const CeleryResultExtras& extras) {
  // celery.states.READY_STATES: only these carry a date_done.
  const bool ready = status == "SUCCESS" || status == "FAILURE" || status == "REVOKED";
  std::string out = "{\"status\": " + PyJsonDumps(std::string(status));
  out += ", \"result\": " + PyJsonDumps(result);
  out += ", \"traceback\": " + (traceback ? PyJsonDumps(*traceback) : std::string("null"));
  out += ", \"children\": " + PyJsonDumps(extras.children);
  out += ", \"date_done\": " +
         (ready ? PyJsonDumps(FormatCeleryDateDone(date_done)) : std::string("null"));
  if (extras.group_id) out += ", \"group_id\": " + PyJsonDumps(*extras.group_id);
  if (extras.parent_id) out += ", \"parent_id\": " + PyJsonDumps(*extras.parent_id);
  out += ", \"task_id\": " + PyJsonDumps(std::string(task_id)) + "}";
  return out;
}

Json CeleryExceptionResult(std::string_view exc_type, std::string_view message,
                           std::string_view exc_module) {
  return Json{{"exc_type", std::string(exc_type)},
              {"exc_message", Json::array({std::string(message)})},
              {"exc_module", std::string(exc_module)}};
}

Json CeleryRevokedResult(std::string_view reason) {
  return CeleryExceptionResult("TaskRevokedError", reason, "celery.exceptions");
}

std::string StoredCeleryStatus(std::string_view existing_json) {
  auto parsed = ParseJson(existing_json, "stored celery meta", JsonFileLimits());
  if (!parsed || !parsed->is_object()) return "";
  auto it = parsed->find("status");
  return it != parsed->end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace mineru::jobs
