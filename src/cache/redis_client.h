// SPDX-License-Identifier: Apache-2.0
// A small synchronous Redis client (hiredis underneath, kept out of this header): one connection,
// binary-safe commands, pipelines, AUTH and SELECT on connect, connect and command timeouts, and
// reconnection with exponential backoff.
//
//   auto options = ParseRedisUrl("redis://:secret@127.0.0.1:6379/0");
//   RedisClient redis(*options);
//   Result<RedisReply> reply = redis.Command({"SETEX", key, "7200", value});
//
// Failures are Results, never exceptions or aborts: kUnavailable when Redis cannot be reached or
// does not answer in time (the connection is dropped and reopened later), kInternal when Redis
// answers with an error (OOM, MISCONF, READONLY, WRONGTYPE, ...; the message is Redis' own).
//
// Reconnection: the first command connects. After a connection fails (refused, reset, timed
// out) the client waits `initial_backoff` before it tries again, doubling the wait after every
// failed attempt up to `max_backoff`; a success resets it. While it waits, commands fail at once
// with kUnavailable instead of stalling their callers on a Redis that is known to be down.
//
// Thread-safe: one connection per object, and a mutex that lets one command (or pipeline) at a
// time use it. Callers that need parallel round trips use one client per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru::jobs {

struct RedisOptions {
  static constexpr int kDefaultPort = 6379;
  static constexpr std::chrono::milliseconds kDefaultConnectTimeout{1000};
  static constexpr std::chrono::milliseconds kDefaultCommandTimeout{2000};
  static constexpr std::chrono::milliseconds kDefaultInitialBackoff{100};
  static constexpr std::chrono::milliseconds kDefaultMaxBackoff{5000};

  std::string host = "127.0.0.1";  // a name, an IPv4 or an IPv6 address
  int port = kDefaultPort;
  std::string user;      // empty: AUTH with the password alone (or no AUTH without one)
  std::string password;  // empty: no AUTH
  int db = 0;            // SELECTed on connect when not 0
  // Establishing the TCP connection.
  std::chrono::milliseconds connect_timeout = kDefaultConnectTimeout;
  // Sending a command and reading its reply: the connection fails when the socket stays
  // unwritable, or no reply byte arrives, for this long.
  std::chrono::milliseconds command_timeout = kDefaultCommandTimeout;
  // The wait before reconnecting after a failure; doubles per failure up to max_backoff.
  std::chrono::milliseconds initial_backoff = kDefaultInitialBackoff;
  std::chrono::milliseconds max_backoff = kDefaultMaxBackoff;

  // "redis://host:port/db" with the password left out, for messages and logs.
  std::string Describe() const;
};

// Parses redis://[[user]:password@]host[:port][/db]. The user and the password may be
// percent-encoded; an IPv6 host is written in brackets ("redis://[::1]:6379"). kInvalidArgument
// with the reason for anything else (another scheme, rediss:// — hiredis 0.14 has no TLS —, a
// port outside 1-65535, a database that is not a non-negative number, a query string).
Result<RedisOptions> ParseRedisUrl(std::string_view url);

// One reply (RESP2). Strings are binary-safe.
struct RedisReply {
  enum class Type { kNil, kInteger, kString, kStatus, kError, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;               // kInteger
  std::string str;                   // kString, kStatus ("OK", "PONG"), kError (the message)
  std::vector<RedisReply> elements;  // kArray

  bool is_nil() const { return type == Type::kNil; }
};

class RedisClient {
 public:
  explicit RedisClient(RedisOptions options);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Sends one command (argv[0] is its name; every argument is sent as is, so any bytes may
  // appear in keys and values) and returns its reply. A top-level error reply is kInternal.
  Result<RedisReply> Command(std::vector<std::string> argv);

  // Sends every command, then reads every reply: one round trip (e.g. SETEX and PUBLISH of the
  // same result). Replies come in order. If any reply is an error, all replies are still read
  // (the connection stays in step) and the first error is returned as kInternal.
  Result<std::vector<RedisReply>> Pipeline(std::vector<std::vector<std::string>> commands);

  const RedisOptions& options() const { return options_; }

 private:
  struct Connection;  // the hiredis context

  // The open connection, connecting (AUTH, SELECT) when allowed. mutex_ is held.
  Result<Connection*> ConnectLocked();
  // Drops the connection after `error` and schedules the next attempt. mutex_ is held.
  tl::unexpected<Error> DisconnectLocked(std::string error);

  const RedisOptions options_;
  std::mutex mutex_;
  std::unique_ptr<Connection> connection_;
  std::chrono::steady_clock::time_point next_attempt_{};  // no connecting before this
  std::chrono::milliseconds backoff_;                     // the next wait after a failure
  std::string last_error_;                                // why the last connection ended
};

}  // namespace mineru::jobs
