#include "nexthop.h"

#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <type_traits>

namespace sriovctl {

namespace {

// Every attribute type parseNexthopMessage reads and nexthopRequest can send back.
bool knownNexthopAttr(uint16_t type) {
  switch (type) {
    case NHA_ID: case NHA_GROUP: case NHA_GROUP_TYPE: case NHA_BLACKHOLE: case NHA_OIF: case NHA_GATEWAY:
    case NHA_FDB: case NHA_RES_GROUP:
      return true;
    default:
      return false;
  }
}

// nexthop_grp holds weight - 1 in `weight`; kernels since 6.12 carry the high byte of a 16-bit weight in the
// next byte, which older UAPI headers still call resvd1 and newer ones weight_high (older kernels refuse it
// non-zero: it is non-zero only for weights over 256). Either spelling of the header builds.
template <class G, class = void>
struct HasWeightHigh : std::false_type {};
template <class G>
struct HasWeightHigh<G, std::void_t<decltype(G::weight_high)>> : std::true_type {};

template <class G>
uint8_t& weightHigh(G& g) {
  if constexpr (HasWeightHigh<G>::value)
    return g.weight_high;
  else
    return g.resvd1;
}

std::vector<NexthopMember> groupMembers(const rtattr* a) {
  std::vector<NexthopMember> out;
  const size_t n = attrLen(a) / sizeof(nexthop_grp);
  const auto* p = static_cast<const unsigned char*>(attrData(a));
  for (size_t i = 0; i < n; ++i) {
    nexthop_grp g;
    std::memcpy(&g, p + i * sizeof g, sizeof g);
    out.push_back({g.id, ((static_cast<uint32_t>(weightHigh(g)) << 8) | g.weight) + 1});
  }
  return out;
}

ResilientGroup resilientGroup(const rtattr* nest) {
  auto tb = AttrTable<NHA_RES_GROUP_MAX>::nested(nest);
  ResilientGroup r;
  readAttr(tb[NHA_RES_GROUP_BUCKETS], r.buckets);
  readAttr(tb[NHA_RES_GROUP_IDLE_TIMER], r.idleTimer);
  readAttr(tb[NHA_RES_GROUP_UNBALANCED_TIMER], r.unbalancedTimer);
  return r;
}

NlRequest nexthopRequest(uint16_t type, uint16_t flags, const NexthopSpec& n) {
  auto req = NlRequest::make<nhmsg>(type, flags);
  auto& nhm = req.family<nhmsg>();
  nhm.nh_family = static_cast<uint8_t>(n.family);
  nhm.nh_protocol = n.protocol;
  nhm.nh_flags = n.flags;
  req.putU32(NHA_ID, n.id);
  if (!n.group.empty()) {
    std::vector<nexthop_grp> members;
    for (const auto& m : n.group) {
      nexthop_grp g{};
      g.id = m.id;
      g.weight = static_cast<uint8_t>((m.weight - 1) & 0xff);
      weightHigh(g) = static_cast<uint8_t>((m.weight - 1) >> 8);
      members.push_back(g);
    }
    req.put(NHA_GROUP, members.data(), members.size() * sizeof(nexthop_grp));
    req.put(NHA_GROUP_TYPE, &n.groupType, sizeof n.groupType);
    if (n.resilient) {
      size_t nest = req.beginNest(NHA_RES_GROUP);
      req.put(NHA_RES_GROUP_BUCKETS, &n.resilient->buckets, sizeof n.resilient->buckets);
      req.putU32(NHA_RES_GROUP_IDLE_TIMER, n.resilient->idleTimer);
      req.putU32(NHA_RES_GROUP_UNBALANCED_TIMER, n.resilient->unbalancedTimer);
      req.endNest(nest);
    }
  }
  if (n.blackhole) req.put(NHA_BLACKHOLE, nullptr, 0);
  if (n.fdb) req.put(NHA_FDB, nullptr, 0);
  if (n.oif) req.putU32(NHA_OIF, *n.oif);
  if (n.gateway) req.put(NHA_GATEWAY, n.gateway->bytes, n.gateway->size());
  return req;
}

}  // namespace

bool parseNexthopMessage(const nlmsghdr* h, NexthopInfo& n) {
  auto* nhm = familyHeader<nhmsg>(h);
  if (h->nlmsg_type != RTM_NEWNEXTHOP || !nhm) return false;
  auto tb = AttrTable<NHA_MAX>::afterHeader(h, sizeof(nhmsg));
  n = NexthopInfo{};
  if (!readAttr(tb[NHA_ID], n.id)) return false;
  n.family = nhm->nh_family;
  n.scope = nhm->nh_scope;
  n.protocol = nhm->nh_protocol;
  n.flags = nhm->nh_flags;
  uint32_t oif = 0;
  if (readAttr(tb[NHA_OIF], oif)) n.oif = oif;
  const size_t addrLen = n.family == AF_INET ? 4 : n.family == AF_INET6 ? 16 : 0;
  if (addrLen && tb[NHA_GATEWAY] && attrLen(tb[NHA_GATEWAY]) >= addrLen)
    n.gateway = formatInet(n.family, attrData(tb[NHA_GATEWAY]));
  n.blackhole = tb[NHA_BLACKHOLE] != nullptr;
  n.fdb = tb[NHA_FDB] != nullptr;
  if (tb[NHA_GROUP]) n.group = groupMembers(tb[NHA_GROUP]);
  readAttr(tb[NHA_GROUP_TYPE], n.groupType);
  if (tb[NHA_RES_GROUP]) n.resilient = resilientGroup(tb[NHA_RES_GROUP]);
  forEachAttrAfterHeader(h, sizeof(nhmsg), [&](const rtattr* a) {
    if (!knownNexthopAttr(attrType(a))) n.unknownAttrs.push_back(attrType(a));
  });
  return true;
}

std::vector<NexthopInfo> listNexthops(NlSocket& s) {
  auto req = NlRequest::make<nhmsg>(RTM_GETNEXTHOP, NLM_F_DUMP);
  std::vector<NexthopInfo> out;
  s.dump(req, "RTM_GETNEXTHOP dump", [&] { out.clear(); }, [&](const nlmsghdr* h) {
    NexthopInfo n;
    if (parseNexthopMessage(h, n)) out.push_back(std::move(n));
  });
  return out;
}

void addNexthop(NlSocket& s, const NexthopSpec& n, bool replace) {
  auto req = nexthopRequest(RTM_NEWNEXTHOP, NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL), n);
  s.request(req, "RTM_NEWNEXTHOP");
}

void deleteNexthop(NlSocket& s, uint32_t id) {
  auto req = NlRequest::make<nhmsg>(RTM_DELNEXTHOP, 0);
  req.putU32(NHA_ID, id);
  s.request(req, "RTM_DELNEXTHOP");
}

}  // namespace sriovctl
