// Routes (RTM_NEWROUTE / RTM_DELROUTE / RTM_GETROUTE), IPv4 and IPv6, main table by default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inet.h"
#include "nl_socket.h"

namespace sriovctl {

// One nexthop of an RTA_MULTIPATH route (struct rtnexthop and its attributes).
struct RouteHop {
  int ifindex = 0;
  std::optional<std::string> gateway;
  int gatewayFamily = 0;  // the route's own family (RTA_GATEWAY), or another one (RTA_VIA)
  uint8_t weight = 1;     // rtnh_hops + 1
  uint8_t flags = 0;      // RTNH_F_*
};

// An RTAX_* metric of RTA_METRICS (all u32 but RTAX_CC_ALGO, kept apart as its name).
using RouteMetric = std::pair<uint16_t, uint32_t>;

struct RouteInfo {
  int family = 0;
  std::optional<std::string> dst;  // nullopt = default
  uint8_t dstLen = 0;
  std::optional<std::string> gateway;
  int gatewayFamily = 0;  // as RouteHop's
  std::optional<int> oif;
  // The output ifindexes of an RTA_MULTIPATH (ECMP) route's nexthops.
  std::vector<int> nexthopOifs;
  std::vector<RouteHop> hops;
  uint32_t table = 0;
  std::optional<uint32_t> metric;
  uint8_t scope = 0;
  uint8_t protocol = 0;
  uint8_t type = 0;
  uint8_t tos = 0;
  uint32_t flags = 0;  // rtm_flags (RTNH_F_ONLINK, RTNH_F_LINKDOWN, …)
  std::optional<std::string> prefsrc;
  std::optional<std::string> src;  // RTA_SRC (IPv6 source routing) with srcLen
  uint8_t srcLen = 0;
  std::optional<uint8_t> pref;  // RTA_PREF (IPv6 router preference)
  std::vector<RouteMetric> metrics;
  std::optional<std::string> ccAlgo;
  std::optional<uint32_t> nhId;     // RTA_NH_ID: the route uses a nexthop object
  std::optional<uint32_t> expires;  // RTA_EXPIRES: seconds left (a route that times out)
  bool encap = false;               // RTA_ENCAP (a lightweight tunnel)
};

struct HopSpec {
  int ifindex = 0;
  std::optional<InetAddr> gateway;  // of another family than the route's: sent as RTA_VIA
  uint8_t weight = 1;
  uint8_t flags = 0;
};

struct RouteSpec {
  int family = 0;                // AF_INET / AF_INET6
  std::optional<InetAddr> dst;   // nullopt = default
  uint8_t dstLen = 0;
  std::optional<InetAddr> gateway;  // of another family than the route's: sent as RTA_VIA
  int oif = 0;
  std::optional<uint32_t> metric;
  uint32_t table = 254;          // RT_TABLE_MAIN
  std::optional<uint8_t> scope;  // RT_SCOPE_*; nullopt on add: link for IPv4 without gateway, else universe
  // what a route put back carries besides (absent: a boot-protocol unicast route, as `ip route add` makes)
  std::optional<uint8_t> protocol;
  std::optional<uint8_t> type;
  uint8_t tos = 0;
  uint32_t flags = 0;  // rtm_flags: RTNH_F_ONLINK
  std::optional<InetAddr> prefsrc;
  std::optional<InetAddr> src;
  uint8_t srcLen = 0;
  std::optional<uint8_t> pref;
  std::vector<RouteMetric> metrics;
  std::optional<std::string> ccAlgo;
  std::vector<HopSpec> hops;  // non-empty: RTA_MULTIPATH
  std::optional<uint32_t> nhId;
};

// An RTM_NEWROUTE of IPv4 or IPv6 that is not a cached clone; false for anything else.
bool parseRouteMessage(const nlmsghdr* h, RouteInfo& r);

// family AF_UNSPEC: both; table 0: every table; oif > 0: only routes with that output device or a nexthop through
// it (a dump the kernel filters, NETLINK_GET_STRICT_CHK).
std::vector<RouteInfo> listRoutes(NlSocket& s, int family, uint32_t table, int oif = 0);
void addRoute(NlSocket& s, const RouteSpec& r);
// NLM_F_CREATE | NLM_F_REPLACE: the route with its key (dst, table, tos, metric) becomes exactly this one.
void replaceRoute(NlSocket& s, const RouteSpec& r);
void deleteRoute(NlSocket& s, const RouteSpec& r);

// The route a datagram to dst would take from this host (RTM_GETROUTE with RTM_F_FIB_MATCH: the route entry the
// lookup matched, through the policy rules, with its table and every nexthop), as `ip route get fibmatch` asks;
// ipProto/dport (0: not given) let rules that select on them match. Throws SysFailure with the kernel's errno
// (ENETUNREACH: no route; EHOSTUNREACH, EACCES, EINVAL: an unreachable, prohibit or blackhole route).
RouteInfo lookupRoute(NlSocket& s, const InetAddr& dst, uint8_t ipProto, uint16_t dport);

}  // namespace sriovctl
