// SPDX-License-Identifier: Apache-2.0
#include "service/remote_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

namespace mineru::service {
namespace {

struct V4Range {
  uint32_t prefix;  // host byte order
  int bits;
};

constexpr uint32_t V4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// The IPv4 ranges that are not public unicast (remote_address.h lists why each is here).
constexpr std::array<V4Range, 14> kNotPublicV4 = {{
    {V4(0, 0, 0, 0), 8},
    {V4(10, 0, 0, 0), 8},
    {V4(100, 64, 0, 0), 10},
    {V4(127, 0, 0, 0), 8},
    {V4(169, 254, 0, 0), 16},
    {V4(172, 16, 0, 0), 12},
    {V4(192, 0, 0, 0), 24},
    {V4(192, 0, 2, 0), 24},
    {V4(192, 168, 0, 0), 16},
    {V4(198, 18, 0, 0), 15},
    {V4(198, 51, 100, 0), 24},
    {V4(203, 0, 113, 0), 24},
    {V4(224, 0, 0, 0), 4},
    {V4(240, 0, 0, 0), 4},  // includes 255.255.255.255
}};

bool IsPublicV4(uint32_t address) {
  for (const V4Range& r : kNotPublicV4) {
    const uint32_t mask = r.bits == 0 ? 0 : ~uint32_t{0} << (32 - r.bits);
    if ((address & mask) == r.prefix) return false;
  }
  return true;
}

uint32_t V4At(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

bool AllZero(const uint8_t* b, int n) {
  for (int i = 0; i < n; ++i) {
    if (b[i] != 0) return false;
  }
  return true;
}

bool IsPublicV6(const uint8_t* b) {
  // ::/96 holds ::, ::1 and the IPv4-compatible forms; judged by the last 32 bits (:: is
  // 0.0.0.0 and ::1 is 0.0.0.1, both in 0/8, so both are refused).
  if (AllZero(b, 12)) return IsPublicV4(V4At(b + 12));
  // ::ffff:0:0/96, IPv4-mapped.
  if (AllZero(b, 10) && b[10] == 0xff && b[11] == 0xff) return IsPublicV4(V4At(b + 12));
  // 64:ff9b::/96, NAT64: the gateway connects to the embedded IPv4 address.
  static constexpr uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(b, kNat64, 12) == 0) return IsPublicV4(V4At(b + 12));
  // 2002::/16, 6to4: bits 16..47 are the IPv4 address of the relay's far end.
  if (b[0] == 0x20 && b[1] == 0x02) return IsPublicV4(V4At(b + 2));
  if (b[0] == 0xff) return false;                                       // ff00::/8 multicast
  if ((b[0] & 0xfe) == 0xfc) return false;                              // fc00::/7 unique-local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return false;              // fe80::/10 link-local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return false;              // fec0::/10 site-local
  if (b[0] == 0x01 && b[1] == 0x00 && AllZero(b + 2, 6)) return false;  // 100::/64 discard
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return false;  // 2001:db8::/32
  return true;
}

}  // namespace

bool IsPublicAddress(const sockaddr* address, socklen_t length) {
  if (address == nullptr) return false;
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in v4;
    std::memcpy(&v4, address, sizeof v4);
    return IsPublicV4(ntohl(v4.sin_addr.s_addr));
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 v6;
    std::memcpy(&v6, address, sizeof v6);
    return IsPublicV6(v6.sin6_addr.s6_addr);
  }
  return false;
}

bool IsPublicIpAddress(std::string_view numeric) {
  const std::string text(numeric);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return IsPublicV4(ntohl(v4.s_addr));
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return IsPublicV6(v6.s6_addr);
  return false;
}

}  // namespace mineru::service
