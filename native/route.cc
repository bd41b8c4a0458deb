#include "route.h"

#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sriovctl {

namespace {

size_t addrLenOf(int family) { return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0; }

// A gateway of the route's family is RTA_GATEWAY; of another (an IPv4 route via an IPv6 neighbour) RTA_VIA.
void putGateway(NlRequest& req, int routeFamily, const InetAddr& gw) {
  if (gw.family == routeFamily) {
    req.put(RTA_GATEWAY, gw.bytes, gw.size());
    return;
  }
  uint8_t via[sizeof(rtvia) + 16] = {};
  const auto family = static_cast<__kernel_sa_family_t>(gw.family);
  std::memcpy(via, &family, sizeof family);
  std::memcpy(via + sizeof(rtvia), gw.bytes, gw.size());
  req.put(RTA_VIA, via, sizeof(rtvia) + gw.size());
}

void putMultipath(NlRequest& req, const RouteSpec& r) {
  size_t nest = req.beginNest(RTA_MULTIPATH, false);  // a run of rtnexthop structs, not attributes
  for (const HopSpec& h : r.hops) {
    rtnexthop nh{};
    nh.rtnh_ifindex = h.ifindex;
    nh.rtnh_hops = static_cast<unsigned char>(h.weight > 0 ? h.weight - 1 : 0);
    nh.rtnh_flags = h.flags;
    size_t at = req.beginStruct(nh);
    if (h.gateway) putGateway(req, r.family, *h.gateway);
    req.structAt<rtnexthop>(at).rtnh_len = static_cast<unsigned short>(req.size() - at);
  }
  req.endNest(nest);
}

void putMetrics(NlRequest& req, const RouteSpec& r) {
  if (r.metrics.empty() && !r.ccAlgo) return;
  size_t nest = req.beginNest(RTA_METRICS);
  for (const auto& [type, value] : r.metrics) req.putU32(type, value);
  if (r.ccAlgo) req.putString(RTAX_CC_ALGO, *r.ccAlgo);
  req.endNest(nest);
}

NlRequest routeRequest(uint16_t type, uint16_t flags, const RouteSpec& r) {
  const bool add = type == RTM_NEWROUTE;
  auto req = NlRequest::make<rtmsg>(type, flags);
  auto& rtm = req.family<rtmsg>();
  rtm.rtm_family = static_cast<uint8_t>(r.family);
  rtm.rtm_dst_len = r.dst ? r.dstLen : 0;
  rtm.rtm_src_len = r.src ? r.srcLen : 0;
  rtm.rtm_tos = r.tos;
  rtm.rtm_table = static_cast<uint8_t>(r.table < 256 ? r.table : static_cast<uint32_t>(RT_TABLE_UNSPEC));
  // A delete leaves protocol/type unspecified and scope "nowhere" so it matches the route however it was
  // made; an add makes a boot-protocol unicast route, link-scoped when IPv4 has no gateway (as `ip` does),
  // unless the spec says otherwise (a route put back as it was).
  if (add) {
    rtm.rtm_protocol = r.protocol.value_or(RTPROT_BOOT);
    rtm.rtm_type = r.type.value_or(RTN_UNICAST);
    const uint8_t implied = (r.family == AF_INET && !r.gateway && r.hops.empty()) ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
    rtm.rtm_scope = r.scope.value_or(implied);
    rtm.rtm_flags = r.flags;
  } else {
    rtm.rtm_scope = r.family == AF_INET6 ? RT_SCOPE_UNIVERSE : RT_SCOPE_NOWHERE;
  }
  if (r.dst) req.put(RTA_DST, r.dst->bytes, r.dst->size());
  if (r.src) req.put(RTA_SRC, r.src->bytes, r.src->size());
  if (r.gateway) putGateway(req, r.family, *r.gateway);
  if (r.oif > 0) req.putU32(RTA_OIF, static_cast<uint32_t>(r.oif));
  if (r.metric) req.putU32(RTA_PRIORITY, *r.metric);
  if (r.prefsrc) req.put(RTA_PREFSRC, r.prefsrc->bytes, r.prefsrc->size());
  if (r.pref) req.putU8(RTA_PREF, *r.pref);
  if (r.nhId) req.putU32(RTA_NH_ID, *r.nhId);
  if (!r.hops.empty()) putMultipath(req, r);
  putMetrics(req, r);
  req.putU32(RTA_TABLE, r.table);
  return req;
}

// RTA_GATEWAY (the route's family) or RTA_VIA (struct rtvia: a family, then its address), each checked to hold
// a whole address.
void readGateway(const rtattr* gateway, const rtattr* via, int family, std::optional<std::string>& out, int& outFamily) {
  if (gateway && attrLen(gateway) >= addrLenOf(family)) {
    out = formatInet(family, attrData(gateway));
    outFamily = family;
    return;
  }
  if (!via || attrLen(via) < sizeof(rtvia)) return;
  __kernel_sa_family_t f = 0;
  std::memcpy(&f, attrData(via), sizeof f);
  const size_t len = addrLenOf(f);
  if (len == 0 || attrLen(via) < sizeof(rtvia) + len) return;
  out = formatInet(f, static_cast<const uint8_t*>(attrData(via)) + sizeof(rtvia));
  outFamily = f;
}

// Each rtnexthop's own length is checked against what is left before it is read, and must at least cover its
// header (a zero length would loop forever); its attributes lie within that length.
std::vector<RouteHop> multipathHops(const void* data, size_t len, int family) {
  std::vector<RouteHop> out;
  const auto* p = static_cast<const unsigned char*>(data);
  while (len >= sizeof(rtnexthop)) {
    rtnexthop nh;
    std::memcpy(&nh, p, sizeof nh);
    if (nh.rtnh_len < sizeof(rtnexthop) || nh.rtnh_len > len) break;
    RouteHop hop;
    hop.ifindex = nh.rtnh_ifindex;
    hop.weight = static_cast<uint8_t>(nh.rtnh_hops + 1);
    hop.flags = nh.rtnh_flags;
    const size_t attrsAt = RTNH_ALIGN(sizeof(rtnexthop));
    if (nh.rtnh_len > attrsAt) {
      AttrTable<RTA_MAX> tb(p + attrsAt, nh.rtnh_len - attrsAt);
      readGateway(tb[RTA_GATEWAY], tb[RTA_VIA], family, hop.gateway, hop.gatewayFamily);
    }
    out.push_back(std::move(hop));
    const size_t step = RTNH_ALIGN(nh.rtnh_len);
    if (step >= len) break;
    p += step;
    len -= step;
  }
  return out;
}

void readMetrics(const rtattr* nest, RouteInfo& r) {
  if (!nest) return;
  forEachNested(nest, [&](const rtattr* a) {
    const uint16_t t = attrType(a);
    uint32_t v = 0;
    std::string name;
    if (t == RTAX_CC_ALGO) {
      if (readString(a, name)) r.ccAlgo = name;
    } else if (readAttr(a, v)) {
      r.metrics.emplace_back(t, v);
    }
  });
}

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
  const size_t addrLen = addrLenOf(r.family);
  r.dstLen = rtm->rtm_dst_len;
  if (tb[RTA_DST] && attrLen(tb[RTA_DST]) >= addrLen) r.dst = formatInet(r.family, attrData(tb[RTA_DST]));
  r.srcLen = rtm->rtm_src_len;
  if (tb[RTA_SRC] && attrLen(tb[RTA_SRC]) >= addrLen) r.src = formatInet(r.family, attrData(tb[RTA_SRC]));
  if (tb[RTA_PREFSRC] && attrLen(tb[RTA_PREFSRC]) >= addrLen) r.prefsrc = formatInet(r.family, attrData(tb[RTA_PREFSRC]));
  readGateway(tb[RTA_GATEWAY], tb[RTA_VIA], r.family, r.gateway, r.gatewayFamily);
  uint32_t u = 0;
  if (readAttr(tb[RTA_OIF], u)) r.oif = static_cast<int>(u);
  if (readAttr(tb[RTA_PRIORITY], u)) r.metric = u;
  if (readAttr(tb[RTA_NH_ID], u)) r.nhId = u;
  if (readAttr(tb[RTA_EXPIRES], u)) r.expires = u;
  uint8_t pref = 0;
  if (readAttr(tb[RTA_PREF], pref)) r.pref = pref;
  if (tb[RTA_MULTIPATH]) {
    r.hops = multipathHops(attrData(tb[RTA_MULTIPATH]), attrLen(tb[RTA_MULTIPATH]), r.family);
    for (const RouteHop& hop : r.hops)
      if (hop.ifindex > 0) r.nexthopOifs.push_back(hop.ifindex);
  }
  readMetrics(tb[RTA_METRICS], r);
  r.encap = tb[RTA_ENCAP] != nullptr;
  r.scope = rtm->rtm_scope;
  r.protocol = rtm->rtm_protocol;
  r.type = rtm->rtm_type;
  r.tos = rtm->rtm_tos;
  r.flags = rtm->rtm_flags;
  return true;
}

}  // namespace

bool parseRouteMessage(const nlmsghdr* h, RouteInfo& r) {
  auto* rtm = familyHeader<rtmsg>(h);
  if (!rtm || (rtm->rtm_flags & RTM_F_CLONED)) return false;
  return parseAnyRoute(h, r);
}

namespace {

void dumpRoutes(NlSocket& s, int family, uint32_t table, int oif, std::vector<RouteInfo>& out) {
  auto req = NlRequest::make<rtmsg>(RTM_GETROUTE, NLM_F_DUMP);
  req.family<rtmsg>().rtm_family = static_cast<uint8_t>(family);
  // the kernel filters by output device (any nexthop counts) and table only with strict checking
  if (oif > 0) req.putU32(RTA_OIF, static_cast<uint32_t>(oif));
  if (oif > 0 && table != 0) req.putU32(RTA_TABLE, table);
  StrictCheck strict(s, oif > 0);
  const size_t first = out.size();
  s.dump(req, "RTM_GETROUTE dump", [&] { out.resize(first); }, [&](const nlmsghdr* h) {
    RouteInfo r;
    if (!parseRouteMessage(h, r)) return;
    if (family != AF_UNSPEC && r.family != family) return;
    if (table != 0 && r.table != table) return;
    if (oif > 0 && r.oif != oif && std::find(r.nexthopOifs.begin(), r.nexthopOifs.end(), oif) == r.nexthopOifs.end()) return;
    out.push_back(std::move(r));
  });
}

}  // namespace

std::vector<RouteInfo> listRoutes(NlSocket& s, int family, uint32_t table, int oif) {
  std::vector<RouteInfo> out;
  // a filtered dump family by family: an AF_UNSPEC one would also run the multicast routing dumps, whose filters
  // differ
  if (oif > 0 && family == AF_UNSPEC) {
    dumpRoutes(s, AF_INET, table, oif, out);
    dumpRoutes(s, AF_INET6, table, oif, out);
  } else {
    dumpRoutes(s, family, table, oif, out);
  }
  return out;
}

void addRoute(NlSocket& s, const RouteSpec& r) {
  auto req = routeRequest(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, r);
  s.request(req, "RTM_NEWROUTE");
}

void replaceRoute(NlSocket& s, const RouteSpec& r) {
  auto req = routeRequest(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, r);
  s.request(req, "RTM_NEWROUTE replace");
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
