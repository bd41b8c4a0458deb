#include "route.h"

#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace sriovctl {

namespace {

NlRequest routeRequest(uint16_t type, uint16_t flags, const RouteSpec& r) {
  const bool add = type == RTM_NEWROUTE;
  auto req = NlRequest::make<rtmsg>(type, flags);
  auto& rtm = req.family<rtmsg>();
  rtm.rtm_family = static_cast<uint8_t>(r.family);
  rtm.rtm_dst_len = r.dst ? r.dstLen : 0;
  rtm.rtm_table = static_cast<uint8_t>(r.table < 256 ? r.table : static_cast<uint32_t>(RT_TABLE_UNSPEC));
  // A delete leaves protocol/type unspecified and scope "nowhere" so it matches the route however it was
  // made; an add makes a boot-protocol unicast route, link-scoped when IPv4 has no gateway (as `ip` does).
  if (add) {
    rtm.rtm_protocol = RTPROT_BOOT;
    rtm.rtm_type = RTN_UNICAST;
    const uint8_t implied = (r.family == AF_INET && !r.gateway) ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
    rtm.rtm_scope = r.scope.value_or(implied);
  } else {
    rtm.rtm_scope = r.family == AF_INET6 ? RT_SCOPE_UNIVERSE : RT_SCOPE_NOWHERE;
  }
  if (r.dst) req.put(RTA_DST, r.dst->bytes, r.dst->size());
  if (r.gateway) req.put(RTA_GATEWAY, r.gateway->bytes, r.gateway->size());
  if (r.oif > 0) req.putU32(RTA_OIF, static_cast<uint32_t>(r.oif));
  if (r.metric) req.putU32(RTA_PRIORITY, *r.metric);
  req.putU32(RTA_TABLE, r.table);
  return req;
}

// Each rtnexthop's own length is checked against what is left before it is read, and must at least cover its
// header (a zero length would loop forever); nexthop attributes are not needed, only the ifindex.
std::vector<int> multipathOifs(const void* data, size_t len) {
  std::vector<int> out;
  const auto* p = static_cast<const unsigned char*>(data);
  while (len >= sizeof(rtnexthop)) {
    rtnexthop nh;
    std::memcpy(&nh, p, sizeof nh);
    if (nh.rtnh_len < sizeof(rtnexthop) || nh.rtnh_len > len) break;
    if (nh.rtnh_ifindex > 0) out.push_back(nh.rtnh_ifindex);
    const size_t step = RTNH_ALIGN(nh.rtnh_len);
    if (step >= len) break;
    p += step;
    len -= step;
  }
  return out;
}

}  // namespace

namespace {

// An RTM_NEWROUTE of IPv4 or IPv6, cached clone or not.
bool parseAnyRoute(const nlmsghdr* h, RouteInfo& r) {
  auto* rtm = familyHeader<rtmsg>(h);
  if (h->nlmsg_type != RTM_NEWROUTE || !rtm) return false;
  if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6) return false;
  auto tb = AttrTable<RTA_MAX>::afterHeader(h, sizeof(rtmsg));
  r = RouteInfo{};
  r.family = rtm->rtm_family;
  r.table = rtm->rtm_table;
  readAttr(tb[RTA_TABLE], r.table);
  const size_t addrLen = r.family == AF_INET ? 4 : 16;
  r.dstLen = rtm->rtm_dst_len;
  if (tb[RTA_DST] && attrLen(tb[RTA_DST]) >= addrLen) r.dst = formatInet(r.family, attrData(tb[RTA_DST]));
  if (tb[RTA_GATEWAY] && attrLen(tb[RTA_GATEWAY]) >= addrLen)
    r.gateway = formatInet(r.family, attrData(tb[RTA_GATEWAY]));
  uint32_t u = 0;
  if (readAttr(tb[RTA_OIF], u)) r.oif = static_cast<int>(u);
  if (readAttr(tb[RTA_PRIORITY], u)) r.metric = u;
  if (tb[RTA_MULTIPATH]) r.nexthopOifs = multipathOifs(attrData(tb[RTA_MULTIPATH]), attrLen(tb[RTA_MULTIPATH]));
  r.scope = rtm->rtm_scope;
  r.protocol = rtm->rtm_protocol;
  r.type = rtm->rtm_type;
  return true;
}

}  // namespace

bool parseRouteMessage(const nlmsghdr* h, RouteInfo& r) {
  auto* rtm = familyHeader<rtmsg>(h);
  if (!rtm || (rtm->rtm_flags & RTM_F_CLONED)) return false;
  return parseAnyRoute(h, r);
}

std::vector<RouteInfo> listRoutes(NlSocket& s, int family, uint32_t table) {
  auto req = NlRequest::make<rtmsg>(RTM_GETROUTE, NLM_F_DUMP);
  req.family<rtmsg>().rtm_family = static_cast<uint8_t>(family);
  std::vector<RouteInfo> out;
  s.dump(req, "RTM_GETROUTE dump", [&] { out.clear(); }, [&](const nlmsghdr* h) {
    RouteInfo r;
    if (!parseRouteMessage(h, r)) return;
    if (family != AF_UNSPEC && r.family != family) return;
    if (table != 0 && r.table != table) return;
    out.push_back(std::move(r));
  });
  return out;
}

void addRoute(NlSocket& s, const RouteSpec& r) {
  auto req = routeRequest(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, r);
  s.request(req, "RTM_NEWROUTE");
}

void deleteRoute(NlSocket& s, const RouteSpec& r) {
  auto req = routeRequest(RTM_DELROUTE, 0, r);
  s.request(req, "RTM_DELROUTE");
}

RouteInfo lookupRoute(NlSocket& s, const InetAddr& dst, uint8_t ipProto, uint16_t dport) {
  auto req = NlRequest::make<rtmsg>(RTM_GETROUTE, 0);
  auto& rtm = req.family<rtmsg>();
  rtm.rtm_family = static_cast<uint8_t>(dst.family);
  rtm.rtm_dst_len = static_cast<uint8_t>(dst.size() * 8);
  // LOOKUP_TABLE: the reply names the table the rules chose (without it, IPv4 says main whatever matched)
  rtm.rtm_flags = RTM_F_FIB_MATCH | RTM_F_LOOKUP_TABLE;
  req.put(RTA_DST, dst.bytes, dst.size());
  if (ipProto != 0) req.putU8(RTA_IP_PROTO, ipProto);
  if (dport != 0) {
    const uint16_t port = htons(dport);
    req.put(RTA_DPORT, &port, sizeof port);
  }
  RouteInfo r;
  bool found = false;
  s.request(req, "RTM_GETROUTE", [&](const nlmsghdr* h) { found = found || parseAnyRoute(h, r); });
  if (!found) throw SysFailure::withDetail(ENOENT, "RTM_GETROUTE", "no route in the reply");
  return r;
}

}  // namespace sriovctl
