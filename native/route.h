// Routes (RTM_NEWROUTE / RTM_DELROUTE / RTM_GETROUTE), IPv4 and IPv6, main table by default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inet.h"
#include "nl_socket.h"

namespace sriovctl {

struct RouteInfo {
  int family = 0;
  std::optional<std::string> dst;  // nullopt = default
  uint8_t dstLen = 0;
  std::optional<std::string> gateway;
  std::optional<int> oif;
  // The output ifindexes of an RTA_MULTIPATH (ECMP) route's nexthops.
  std::vector<int> nexthopOifs;
  uint32_t table = 0;
  std::optional<uint32_t> metric;
  uint8_t scope = 0;
  uint8_t protocol = 0;
  uint8_t type = 0;
};

struct RouteSpec {
  int family = 0;                // AF_INET / AF_INET6
  std::optional<InetAddr> dst;   // nullopt = default
  uint8_t dstLen = 0;
  std::optional<InetAddr> gateway;
  int oif = 0;
  std::optional<uint32_t> metric;
  uint32_t table = 254;          // RT_TABLE_MAIN
  std::optional<uint8_t> scope;  // RT_SCOPE_*; nullopt on add: link for IPv4 without gateway, else universe
};

// An RTM_NEWROUTE of IPv4 or IPv6 that is not a cached clone; false for anything else.
bool parseRouteMessage(const nlmsghdr* h, RouteInfo& r);

// family AF_UNSPEC: both; table 0: every table.
std::vector<RouteInfo> listRoutes(NlSocket& s, int family, uint32_t table);
void addRoute(NlSocket& s, const RouteSpec& r);
void deleteRoute(NlSocket& s, const RouteSpec& r);

// The route a datagram to dst would take from this host (RTM_GETROUTE with RTM_F_FIB_MATCH: the route entry the
// lookup matched, through the policy rules, with its table and every nexthop), as `ip route get fibmatch` asks;
// ipProto/dport (0: not given) let rules that select on them match. Throws SysFailure with the kernel's errno
// (ENETUNREACH: no route; EHOSTUNREACH, EACCES, EINVAL: an unreachable, prohibit or blackhole route).
RouteInfo lookupRoute(NlSocket& s, const InetAddr& dst, uint8_t ipProto, uint16_t dport);

}  // namespace sriovctl
