// SPDX-License-Identifier: Apache-2.0
// What a request must pass before its body is read, without Beast: its framing
// (Transfer-Encoding), its Host and Origin (cross-site and DNS-rebinding protection), its API key,
// and the process-wide budgets the server admits bodies and connections against. Not an API:
// the server's session code (http_session.cc) applies them in the order http_server.h states.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mineru::service::internal {

// RFC 9112 6.1 for a request's Transfer-Encoding (every field joined with ", ").
enum class TransferCoding {
  kNone,         // no Transfer-Encoding field
  kChunked,      // exactly "chunked"
  kUnsupported,  // chunked last, with codings before it ("gzip, chunked"): 501
  kUnframed,     // chunked absent or not last ("gzip", "chunked, gzip", "xchunked", ""): 400
};
TransferCoding ClassifyTransferEncoding(std::optional<std::string_view> value);

// a == b in time that depends only on the lengths (never on where they differ).
bool ConstantTimeEquals(std::string_view a, std::string_view b);
// The token of "Bearer <token>" (scheme case-insensitive, spaces around the token dropped);
// nullopt for another scheme or an empty token.
std::optional<std::string_view> BearerToken(std::string_view authorization);

// The Host/Origin rule of ServerOptions::allowed_origins (http_server.h states it).
class OriginPolicy {
 public:
  OriginPolicy() = default;
  // bound_host: ServerOptions::host. Origins are kept as "scheme://host[:port]", lower-case.
  OriginPolicy(std::string_view bound_host, const std::vector<std::string>& allowed_origins);

  // "" when the request passes; else why not (the 403's message).
  std::string Check(std::optional<std::string_view> host,
                    std::optional<std::string_view> origin) const;
  // The origin is one of allowed_origins (or they hold "*"): it gets CORS answers.
  bool Listed(std::string_view origin) const;

 private:
  bool HostAllowed(std::string_view host) const;

  bool loopback_bind_ = false;
  bool any_ = false;                  // "*" listed
  std::vector<std::string> origins_;  // lower-case, without a trailing '/'
  std::vector<std::string> hosts_;    // their host names (no port), lower-case
};

// The host name of a Host value or an origin's authority, lower-case, without the port or the
// brackets of an IPv6 literal ("[::1]:8000" -> "::1"); "" when malformed.
std::string HostName(std::string_view authority);
bool IsIpLiteral(std::string_view host_name);

// A budget of bytes shared by threads (ServerLimits::max_body_bytes_in_flight).
class ByteBudget {
 public:
  void SetCapacity(size_t capacity) { capacity_ = capacity; }
  size_t capacity() const { return capacity_; }
  size_t used() const { return used_.load(); }
  // Takes n bytes when they fit (used + n <= capacity); false, taking nothing, when not.
  bool TryAcquire(size_t n);
  void Release(size_t n);

 private:
  size_t capacity_ = 0;
  std::atomic<size_t> used_{0};
};

// Bytes of a ByteBudget held until destroyed; movable, so a body's share follows the body from
// the connection to its handler.
class BudgetHold {
 public:
  BudgetHold() = default;
  explicit BudgetHold(ByteBudget* budget) : budget_(budget) {}
  BudgetHold(BudgetHold&& other) noexcept { *this = std::move(other); }
  BudgetHold& operator=(BudgetHold&& other) noexcept;
  ~BudgetHold() { Reset(); }
  BudgetHold(const BudgetHold&) = delete;
  BudgetHold& operator=(const BudgetHold&) = delete;

  size_t bytes() const { return bytes_; }
  // Holds n more bytes; false (holding what it held) when they do not fit.
  bool Grow(size_t n);
  void Reset();

 private:
  ByteBudget* budget_ = nullptr;
  size_t bytes_ = 0;
};

// Open connections per peer address (ServerLimits::max_connections_per_client).
class PeerConnections {
 public:
  // Counts one more for peer when it has fewer than limit; false (counting nothing) when not.
  bool TryAdd(const std::string& peer, size_t limit);
  void Remove(const std::string& peer);
  size_t Count(const std::string& peer) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, size_t> counts_;
};

}  // namespace mineru::service::internal
