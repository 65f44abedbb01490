// SPDX-License-Identifier: Apache-2.0
#include "cache/redis_client.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <algorithm>
#include <charconv>
#include <ctime>

namespace mineru::jobs {
namespace {

using std::chrono::milliseconds;

timeval ToTimeval(milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// hiredis writes with write(2): a peer that closed the connection would raise SIGPIPE and kill
// the process. While an object of this class lives, SIGPIPE is blocked on this thread; one the
// write raised is consumed before the old mask comes back, so the failure is only an error.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~ScopedSigpipeBlock() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{};
        sigtimedwait(&pipe_, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
};

RedisReply Convert(const redisReply& r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.reserve(r.elements);
      for (size_t i = 0; i < r.elements; ++i) out.elements.push_back(Convert(*r.element[i]));
      break;
    default:  // REDIS_REPLY_NIL
      out.type = RedisReply::Type::kNil;
      break;
  }
  return out;
}

// "%41" -> "A"; kInvalidArgument for a broken escape.
Result<std::string> PercentDecode(std::string_view s, std::string_view what) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned value = 0;
    const char* first = s.data() + i + 1;
    if (i + 2 >= s.size() || std::from_chars(first, first + 2, value, 16).ptr != first + 2) {
      return Fail(ErrorCode::kInvalidArgument, "the Redis URL's {} has a bad %-escape", what);
    }
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

// A decimal number within [lo, hi] taking all of `s`.
bool ParseBoundedInt(std::string_view s, int lo, int hi, int* out) {
  int value = 0;
  if (s.empty() || s[0] == '+' || s[0] == '-') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < lo || value > hi) return false;
  *out = value;
  return true;
}

}  // namespace

std::string RedisOptions::Describe() const {
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("redis://{}{}{}:{}/{}", v6 ? "[" : "", host, v6 ? "]" : "", port, db);
}

Result<RedisOptions> ParseRedisUrl(std::string_view url) {
  constexpr std::string_view kScheme = "redis://";
  if (url.substr(0, 9) == "rediss://") {
    return Fail(ErrorCode::kInvalidArgument,
                "rediss:// (Redis over TLS) is not supported: hiredis 0.14 has no TLS; use "
                "redis:// on a loopback or private network");
  }
  if (url.substr(0, kScheme.size()) != kScheme) {
    return Fail(ErrorCode::kInvalidArgument,
                "'{}' is not a Redis URL (expected redis://[[user]:password@]host[:port][/db])",
                url);
  }
  std::string_view rest = url.substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Fail(ErrorCode::kInvalidArgument, "the Redis URL may not have a query or fragment");
  }
  RedisOptions options;
  // The userinfo ends at the last '@' before the path (a password may contain '@' unescaped).
  const std::string_view authority = rest.substr(0, rest.find('/'));
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    const size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      return Fail(ErrorCode::kInvalidArgument,
                  "the Redis URL's credentials must be ':password' or 'user:password'");
    }
    MINERU_ASSIGN_OR_RETURN(options.user, PercentDecode(userinfo.substr(0, colon), "user"));
    MINERU_ASSIGN_OR_RETURN(options.password,
                            PercentDecode(userinfo.substr(colon + 1), "password"));
    if (options.password.empty()) {
      return Fail(ErrorCode::kInvalidArgument,
                  "the Redis URL names credentials without a password");
    }
    rest.remove_prefix(at + 1);
  }
  const size_t slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  std::string_view port;
  if (!hostport.empty() && hostport[0] == '[') {  // [IPv6]:port
    const size_t close = hostport.find(']');
    if (close == std::string_view::npos) {
      return Fail(ErrorCode::kInvalidArgument, "the Redis URL's IPv6 host lacks its ']'");
    }
    options.host = std::string(hostport.substr(1, close - 1));
    const std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        return Fail(ErrorCode::kInvalidArgument, "unexpected '{}' after the Redis host", after);
      }
      port = after.substr(1);
      if (port.empty()) return Fail(ErrorCode::kInvalidArgument, "the Redis URL's port is empty");
    }
  } else {
    const size_t colon = hostport.find(':');
    options.host = std::string(hostport.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = hostport.substr(colon + 1);
      if (port.empty()) return Fail(ErrorCode::kInvalidArgument, "the Redis URL's port is empty");
    }
  }
  if (options.host.empty()) return Fail(ErrorCode::kInvalidArgument, "the Redis URL has no host");
  if (!port.empty() && !ParseBoundedInt(port, 1, 65535, &options.port)) {
    return Fail(ErrorCode::kInvalidArgument, "the Redis port '{}' is not a number in 1-65535",
                port);
  }
  if (slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && !ParseBoundedInt(db, 0, 1 << 30, &options.db)) {
      return Fail(ErrorCode::kInvalidArgument,
                  "the Redis database '{}' is not a non-negative number", db);
    }
  }
  return options;
}

struct RedisClient::Connection {
  explicit Connection(redisContext* c) : context(c) {}
  ~Connection() { redisFree(context); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  redisContext* context;
};

RedisClient::RedisClient(RedisOptions options)
    : options_(std::move(options)), backoff_(options_.initial_backoff) {}

RedisClient::~RedisClient() = default;

tl::unexpected<Error> RedisClient::DisconnectLocked(std::string error) {
  connection_.reset();
  last_error_ = std::move(error);
  next_attempt_ = std::chrono::steady_clock::now() + backoff_;
  backoff_ = std::min(backoff_ * 2, std::max(options_.max_backoff, options_.initial_backoff));
  return Fail(ErrorCode::kUnavailable, "Redis at {}: {}", options_.Describe(), last_error_);
}

namespace {

// Why a context failed, in words: hiredis reports a timed-out read as EAGAIN.
std::string ContextError(const redisContext& c, milliseconds timeout) {
  const std::string_view what = c.errstr;
  if (c.err == REDIS_ERR_IO && what.find("temporarily unavailable") != std::string_view::npos) {
    return fmt::format("no answer within {} ms", timeout.count());
  }
  return std::string(what);
}

// Sends the commands and reads one reply for each. Transport failures leave `error` set.
std::vector<RedisReply> RoundTrip(redisContext* c,
                                  const std::vector<std::vector<std::string>>& cmds,
                                  milliseconds timeout, std::string* error) {
  ScopedSigpipeBlock no_sigpipe;
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const std::vector<std::string>& cmd : cmds) {
    argv.clear();
    lengths.clear();
    for (const std::string& arg : cmd) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    if (redisAppendCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lengths.data()) !=
        REDIS_OK) {
      *error = ContextError(*c, timeout);
      return {};
    }
  }
  std::vector<RedisReply> replies;
  replies.reserve(cmds.size());
  for (size_t i = 0; i < cmds.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr) {
      *error = ContextError(*c, timeout);
      return {};
    }
    redisReply* reply = static_cast<redisReply*>(raw);
    replies.push_back(Convert(*reply));
    freeReplyObject(reply);
  }
  return replies;
}

}  // namespace

Result<RedisClient::Connection*> RedisClient::ConnectLocked() {
  if (connection_) return connection_.get();
  const auto now = std::chrono::steady_clock::now();
  if (now < next_attempt_) {
    const auto wait = std::chrono::ceil<milliseconds>(next_attempt_ - now);
    return Fail(ErrorCode::kUnavailable, "Redis at {} is unavailable ({}); next attempt in {} ms",
                options_.Describe(), last_error_, wait.count());
  }
  redisContext* context = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                                  ToTimeval(options_.connect_timeout));
  if (context == nullptr) return DisconnectLocked("cannot allocate a connection");
  auto connection = std::make_unique<Connection>(context);
  if (context->err) return DisconnectLocked(fmt::format("cannot connect: {}", context->errstr));
  if (redisSetTimeout(context, ToTimeval(options_.command_timeout)) != REDIS_OK) {
    return DisconnectLocked(fmt::format("cannot set the timeout: {}", context->errstr));
  }
  redisEnableKeepAlive(context);  // a dead peer is noticed on idle connections too

  std::vector<std::vector<std::string>> hello;
  if (!options_.password.empty()) {
    if (options_.user.empty()) {
      hello.push_back({"AUTH", options_.password});
    } else {
      hello.push_back({"AUTH", options_.user, options_.password});
    }
  }
  if (options_.db != 0) hello.push_back({"SELECT", std::to_string(options_.db)});
  if (!hello.empty()) {
    std::string error;
    std::vector<RedisReply> replies = RoundTrip(context, hello, options_.command_timeout, &error);
    if (!error.empty()) return DisconnectLocked(error);
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].type == RedisReply::Type::kError) {
        // A wrong password or database is a setting to fix: back off like a refused connection.
        return DisconnectLocked(fmt::format("{} failed: {}", hello[i][0], replies[i].str));
      }
    }
  }
  connection_ = std::move(connection);
  backoff_ = options_.initial_backoff;
  return connection_.get();
}

Result<std::vector<RedisReply>> RedisClient::Pipeline(
    std::vector<std::vector<std::string>> commands) {
  if (commands.empty()) return std::vector<RedisReply>{};
  for (const std::vector<std::string>& cmd : commands) {
    if (cmd.empty()) return Fail(ErrorCode::kInvalidArgument, "an empty Redis command");
  }
  std::lock_guard lock(mutex_);
  MINERU_ASSIGN_OR_RETURN(Connection * connection, ConnectLocked());
  std::string error;
  std::vector<RedisReply> replies =
      RoundTrip(connection->context, commands, options_.command_timeout, &error);
  if (!error.empty()) return DisconnectLocked(error);
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].type == RedisReply::Type::kError) {
      return Fail(ErrorCode::kInternal, "Redis at {} refused {}: {}", options_.Describe(),
                  commands[i][0], replies[i].str);
    }
  }
  return replies;
}

Result<RedisReply> RedisClient::Command(std::vector<std::string> argv) {
  std::vector<std::vector<std::string>> one;
  one.push_back(std::move(argv));
  MINERU_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Pipeline(std::move(one)));
  return std::move(replies.front());
}

}  // namespace mineru::jobs
