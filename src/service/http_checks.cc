// SPDX-License-Identifier: Apache-2.0
#include "service/http_checks.h"

#include <arpa/inet.h>

#include <algorithm>

#include "service/http_internal.h"

namespace mineru::service::internal {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

// "http://name:80" and "https://name:443" without their default ports, lower-case, without a
// trailing '/'; "" when it is no http(s) origin.
std::string NormalizeOrigin(std::string_view origin) {
  std::string o = Lower(Trim(origin));
  while (!o.empty() && o.back() == '/') o.pop_back();
  if (o.starts_with("http://") && o.ends_with(":80")) o.resize(o.size() - 3);
  if (o.starts_with("https://") && o.ends_with(":443")) o.resize(o.size() - 4);
  if (!o.starts_with("http://") && !o.starts_with("https://")) return "";
  return o;
}

bool IsLoopbackBind(std::string_view bound) {
  const std::string name = HostName(bound);
  if (name == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, name.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, name.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace

TransferCoding ClassifyTransferEncoding(std::optional<std::string_view> value) {
  if (!value) return TransferCoding::kNone;
  std::vector<std::string_view> codings;
  std::string_view rest = *value;
  while (true) {
    const size_t comma = rest.find(',');
    codings.push_back(Trim(rest.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (!EqualsIgnoreCase(codings.back(), "chunked")) return TransferCoding::kUnframed;
  if (codings.size() == 1) return TransferCoding::kChunked;
  return TransferCoding::kUnsupported;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of b is compared (against a's byte at the same place, or a's first byte once a
  // is shorter), so the time depends on b's length alone; the lengths are compared last.
  volatile unsigned char diff = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const unsigned char x = a.empty() ? 0 : static_cast<unsigned char>(a[i < a.size() ? i : 0]);
    diff = diff | (x ^ static_cast<unsigned char>(b[i]));
  }
  return diff == 0 && a.size() == b.size();
}

std::optional<std::string_view> BearerToken(std::string_view authorization) {
  authorization = Trim(authorization);
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() ||
      !EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme) ||
      !IsSpace(authorization[kScheme.size()])) {
    return std::nullopt;
  }
  const std::string_view token = Trim(authorization.substr(kScheme.size()));
  if (token.empty()) return std::nullopt;
  return token;
}

std::string HostName(std::string_view authority) {
  authority = Trim(authority);
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return "";
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return "";
    return Lower(authority.substr(1, close - 1));
  }
  const size_t colon = authority.find(':');
  if (colon != std::string_view::npos && authority.find(':', colon + 1) != std::string_view::npos) {
    return Lower(authority);  // a bare IPv6 address (a bind address, never a Host value)
  }
  return Lower(authority.substr(0, colon));
}

bool IsIpLiteral(std::string_view host_name) {
  const std::string name(host_name);
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, name.c_str(), &v4) == 1 || inet_pton(AF_INET6, name.c_str(), &v6) == 1;
}

OriginPolicy::OriginPolicy(std::string_view bound_host,
                           const std::vector<std::string>& allowed_origins)
    : loopback_bind_(IsLoopbackBind(bound_host)) {
  for (const std::string& entry : allowed_origins) {
    if (Trim(entry) == "*") {
      any_ = true;
      continue;
    }
    std::string origin = NormalizeOrigin(entry);
    if (origin.empty()) continue;  // the flag's check refuses these before the server starts
    hosts_.push_back(HostName(origin.substr(origin.find("://") + 3)));
    origins_.push_back(std::move(origin));
  }
}

bool OriginPolicy::Listed(std::string_view origin) const {
  if (any_) return true;
  const std::string o = NormalizeOrigin(origin);
  return !o.empty() && std::find(origins_.begin(), origins_.end(), o) != origins_.end();
}

bool OriginPolicy::HostAllowed(std::string_view host) const {
  if (any_ || !loopback_bind_) return true;
  const std::string name = HostName(host);
  if (name.empty()) return false;
  if (IsIpLiteral(name) || name == "localhost" || name.ends_with(".localhost")) return true;
  return std::find(hosts_.begin(), hosts_.end(), name) != hosts_.end();
}

std::string OriginPolicy::Check(std::optional<std::string_view> host,
                                std::optional<std::string_view> origin) const {
  if (any_) return "";
  if (host && !HostAllowed(*host)) {
    return "Host '" + std::string(HostName(*host)).substr(0, 100) +
           "' does not name this server (--allowed-origins lists the names it answers to)";
  }
  if (!origin) return "";
  const std::string o = NormalizeOrigin(*origin);
  if (!o.empty() && host) {
    const std::string own = o.substr(o.find("://") + 3);
    std::string h = Lower(Trim(*host));
    if (h.ends_with(":80") && o.starts_with("http://")) h.resize(h.size() - 3);
    if (h.ends_with(":443") && o.starts_with("https://")) h.resize(h.size() - 4);
    if (own == h) return "";  // same origin
  }
  if (Listed(*origin)) return "";
  return "cross-site request refused: origin not allowed (--allowed-origins)";
}

bool ByteBudget::TryAcquire(size_t n) {
  size_t used = used_.load();
  while (true) {
    if (n > capacity_ || used > capacity_ - n) return false;
    if (used_.compare_exchange_weak(used, used + n)) return true;
  }
}

void ByteBudget::Release(size_t n) { used_.fetch_sub(n); }

BudgetHold& BudgetHold::operator=(BudgetHold&& other) noexcept {
  if (this != &other) {
    Reset();
    budget_ = other.budget_;
    bytes_ = other.bytes_;
    other.budget_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

bool BudgetHold::Grow(size_t n) {
  if (budget_ == nullptr || !budget_->TryAcquire(n)) return false;
  bytes_ += n;
  return true;
}

void BudgetHold::Reset() {
  if (budget_ != nullptr && bytes_ > 0) budget_->Release(bytes_);
  bytes_ = 0;
}

bool PeerConnections::TryAdd(const std::string& peer, size_t limit) {
  std::lock_guard lock(mu_);
  size_t& count = counts_[peer];
  if (count >= limit) {
    if (count == 0) counts_.erase(peer);
    return false;
  }
  ++count;
  return true;
}

void PeerConnections::Remove(const std::string& peer) {
  std::lock_guard lock(mu_);
  auto it = counts_.find(peer);
  if (it == counts_.end()) return;
  if (--it->second == 0) counts_.erase(it);
}

size_t PeerConnections::Count(const std::string& peer) const {
  std::lock_guard lock(mu_);
  auto it = counts_.find(peer);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace mineru::service::internal
