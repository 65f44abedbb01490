// SPDX-License-Identifier: Apache-2.0
#include "celery/amqp_options.h"

#include <charconv>

namespace mineru::jobs {
namespace {

// Decodes %XX escapes; a malformed escape is an error rather than kept literally, so a typo in
// a password is reported instead of producing a login failure later.
Result<std::string> PercentDecode(std::string_view text, std::string_view what) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    unsigned value = 0;
    if (i + 2 >= text.size()) {
      return Fail(ErrorCode::kInvalidArgument, "AMQP URL: truncated %-escape in the {}", what);
    }
    auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
    if (ec != std::errc() || end != text.data() + i + 3) {
      return Fail(ErrorCode::kInvalidArgument, "AMQP URL: bad %-escape in the {}", what);
    }
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

}  // namespace

Result<AmqpOptions> ParseAmqpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "amqp://";
  AmqpOptions options;
  if (url.substr(0, 8) == "amqps://") {
    return Fail(ErrorCode::kUnsupported, "AMQP URL: TLS (amqps://) is not supported");
  }
  if (url.substr(0, kScheme.size()) != kScheme) {
    return Fail(ErrorCode::kInvalidArgument, "AMQP URL must start with amqp://: '{}'", url);
  }
  std::string_view rest = url.substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Fail(ErrorCode::kUnsupported, "AMQP URL: query parameters are not supported");
  }
  std::string_view authority = rest.substr(0, rest.find('/'));
  std::string_view path =
      rest.size() > authority.size() ? rest.substr(authority.size() + 1) : std::string_view();
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    size_t colon = userinfo.find(':');
    MINERU_ASSIGN_OR_RETURN(options.user, PercentDecode(userinfo.substr(0, colon), "user"));
    if (colon != std::string_view::npos) {
      MINERU_ASSIGN_OR_RETURN(options.password,
                              PercentDecode(userinfo.substr(colon + 1), "password"));
    }
  }
  std::string_view host = authority;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:5672
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Fail(ErrorCode::kInvalidArgument, "AMQP URL: unterminated IPv6 address");
    }
    host = authority.substr(1, close - 1);
    authority = authority.substr(close + 1);
    if (!authority.empty() && authority.front() != ':') {
      return Fail(ErrorCode::kInvalidArgument, "AMQP URL: junk after the IPv6 address");
    }
  } else {
    host = authority.substr(0, authority.find(':'));
    authority = authority.substr(host.size());
  }
  if (!authority.empty()) {  // ":port"
    std::string_view digits = authority.substr(1);
    int port = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || port < 1 ||
        port > 65535) {
      return Fail(ErrorCode::kInvalidArgument, "AMQP URL: bad port '{}'", digits);
    }
    options.port = port;
  }
  if (!host.empty()) {
    MINERU_ASSIGN_OR_RETURN(options.host, PercentDecode(host, "host"));
  }
  if (!path.empty()) {
    MINERU_ASSIGN_OR_RETURN(options.vhost, PercentDecode(path, "vhost"));
  }
  return options;
}

}  // namespace mineru::jobs
