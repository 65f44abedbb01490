// SPDX-License-Identifier: Apache-2.0
// Which addresses a remote image fetch may connect to by default: each non-public range at its
// edges (first and last address inside, the neighbours outside), the IPv6 forms that carry an
// IPv4 address, and socket addresses of other families. Before remote_address.h nothing was
// refused: a server with --allow-remote-images fetched its own /metrics through 127.0.0.1.
#include "service/remote_address.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstring>

namespace mineru::service {
namespace {

TEST(RemoteAddressTest, NonPublicIpv4RangesAreRefusedAtTheirEdges) {
  for (const char* address :
       {"0.0.0.0",         "0.255.255.255", "10.0.0.0",        "10.255.255.255",  "100.64.0.0",
        "100.127.255.255", "127.0.0.1",     "127.255.255.255", "169.254.0.0",     "169.254.169.254",
        "169.254.255.255", "172.16.0.0",    "172.31.255.255",  "192.0.0.0",       "192.0.0.255",
        "192.0.2.1",       "192.168.0.0",   "192.168.255.255", "198.18.0.0",      "198.19.255.255",
        "198.51.100.7",    "203.0.113.7",   "224.0.0.1",       "239.255.255.250", "240.0.0.1",
        "255.255.255.255"}) {
    EXPECT_FALSE(IsPublicIpAddress(address)) << address;
  }
  for (const char* address :
       {"1.0.0.0", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
        "126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255",
        "172.32.0.0", "192.0.1.0", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0",
        "223.255.255.255"}) {
    EXPECT_TRUE(IsPublicIpAddress(address)) << address;
  }
}

TEST(RemoteAddressTest, NonPublicIpv6RangesAndEmbeddedIpv4AreRefused) {
  for (const char* address :
       {"::", "::1", "fe80::1", "febf:ffff::1", "fec0::1", "fc00::1", "fdff:ffff::1", "ff02::1",
        "ff0e::1", "100::1", "2001:db8::1",
        // IPv4-mapped and IPv4-compatible forms of loopback, private and unspecified.
        "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.1.2.3", "::ffff:169.254.169.254",
        "::ffff:0.0.0.0", "::ffff:100.64.0.1", "::127.0.0.1", "::10.0.0.1",
        // NAT64 and 6to4 of internal IPv4 addresses.
        "64:ff9b::127.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::1", "2002:c0a8:101::1"}) {
    EXPECT_FALSE(IsPublicIpAddress(address)) << address;
  }
  for (const char* address : {"2606:4700:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8",
                              "64:ff9b::808:808", "2002:808:808::1", "fbff::1", "fe7f::1"}) {
    EXPECT_TRUE(IsPublicIpAddress(address)) << address;
  }
}

TEST(RemoteAddressTest, OnlyNumericAddressesAreJudged) {
  // Names and the short IPv4 spellings are not addresses: FetchUrl judges what they resolve to.
  for (const char* text :
       {"localhost", "example.com", "127.1", "2130706433", "0x7f000001", "", "8.8.8.8 ", "[::1]"}) {
    EXPECT_FALSE(IsPublicIpAddress(text)) << text;
  }
}

TEST(RemoteAddressTest, SocketAddressesOfEachFamily) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  ASSERT_EQ(inet_pton(AF_INET, "8.8.8.8", &v4.sin_addr), 1);
  EXPECT_TRUE(IsPublicAddress(reinterpret_cast<sockaddr*>(&v4), sizeof v4));
  ASSERT_EQ(inet_pton(AF_INET, "127.0.0.1", &v4.sin_addr), 1);
  EXPECT_FALSE(IsPublicAddress(reinterpret_cast<sockaddr*>(&v4), sizeof v4));

  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  ASSERT_EQ(inet_pton(AF_INET6, "2606:4700:4700::1111", &v6.sin6_addr), 1);
  EXPECT_TRUE(IsPublicAddress(reinterpret_cast<sockaddr*>(&v6), sizeof v6));
  // Too short for its family: refused, not read past its end.
  EXPECT_FALSE(IsPublicAddress(reinterpret_cast<sockaddr*>(&v6), sizeof v6 - 1));
  ASSERT_EQ(inet_pton(AF_INET6, "::ffff:192.168.1.1", &v6.sin6_addr), 1);
  EXPECT_FALSE(IsPublicAddress(reinterpret_cast<sockaddr*>(&v6), sizeof v6));

  sockaddr_un local{};
  local.sun_family = AF_UNIX;
  std::strcpy(local.sun_path, "/tmp/socket");
  EXPECT_FALSE(IsPublicAddress(reinterpret_cast<sockaddr*>(&local), sizeof local));
  EXPECT_FALSE(IsPublicAddress(nullptr, 0));
}

}  // namespace
}  // namespace mineru::service
