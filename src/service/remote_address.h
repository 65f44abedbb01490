// SPDX-License-Identifier: Apache-2.0
// Which network addresses a server that fetches URLs named by its clients may connect to by
// default: public unicast only. Everything that reaches the server itself or the network behind
// it is "not public" and refused unless the operator allows private targets
// (--allow-private-remote-images):
//
//   IPv4  0.0.0.0/8 (unspecified, "this network"; 0.0.0.0 reaches the host itself on Linux),
//         10/8, 172.16/12, 192.168/16 (RFC 1918), 100.64/10 (carrier-grade NAT, RFC 6598),
//         127/8 (loopback), 169.254/16 (link-local, cloud metadata at 169.254.169.254),
//         192.0.0/24 (IETF assignments), 192.0.2/24, 198.51.100/24, 203.0.113/24
//         (documentation), 198.18/15 (benchmarking), 224/4 (multicast), 240/4 (reserved, and
//         the broadcast address 255.255.255.255)
//   IPv6  :: and ::1, fe80::/10 (link-local), fec0::/10 (old site-local), fc00::/7
//         (unique-local), ff00::/8 (multicast), 100::/64 (discard), 2001:db8::/32
//         (documentation), and the forms that carry an IPv4 address, judged by that address:
//         ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64),
//         2002:aabb:ccdd::/48 (6to4)
//
// The check belongs on the address a connection is actually opened to (after name resolution,
// on every redirect hop), not on the URL's spelling: "localhost", "2130706433", "0x7f.1",
// "0177.0.0.1" and "user@127.0.0.1" all resolve to loopback. url_fetch.cc applies it in
// libcurl's open-socket callback, so no DNS answer can change between check and connect.
#pragma once

#include <sys/socket.h>

#include <string_view>

namespace mineru::service {

// True for a public unicast address (none of the ranges above); false for every other address
// and for families other than AF_INET and AF_INET6. `length` is the size of *address.
bool IsPublicAddress(const sockaddr* address, socklen_t length);

// The same for a numeric address as inet_pton reads it ("203.0.113.7", "::ffff:10.0.0.1");
// false for anything else (host names, "127.1").
bool IsPublicIpAddress(std::string_view numeric);

}  // namespace mineru::service
