#include "link.h"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace sriovctl {

namespace {

std::optional<std::string> hwAddr(const rtattr* a) {
  if (!a) return std::nullopt;
  return formatHwAddr(static_cast<const uint8_t*>(attrData(a)), attrLen(a));
}


NlRequest linkRequest(uint16_t type, uint16_t flags, int index) {
  auto req = NlRequest::make<ifinfomsg>(type, flags);
  req.family<ifinfomsg>().ifi_family = AF_UNSPEC;
  req.family<ifinfomsg>().ifi_index = index;
  return req;
}

void appendField(std::string& op, const char* field) {
  op += op.back() == ' ' ? "" : ",";
  op += field;
}

}  // namespace

const char* operstateName(uint8_t state) {
  switch (state) {
    case IF_OPER_NOTPRESENT: return "notpresent";
    case IF_OPER_DOWN: return "down";
    case IF_OPER_LOWERLAYERDOWN: return "lowerlayerdown";
    case IF_OPER_TESTING: return "testing";
    case IF_OPER_DORMANT: return "dormant";
    case IF_OPER_UP: return "up";
    default: return "unknown";
  }
}

// The true extent of an IFLA_VFINFO_LIST nest. The kernel stores a nest's length in the 16-bit rta_len, so
// a PF with a few hundred VFs (a nest over 64 KiB) wraps it. Its children are consecutive IFLA_VF_INFO
// attributes: walk them within the `room` bytes left in the message; if that extent is the stored length
// modulo 2^16, it is the real one. Never more than `room`.
static size_t vfinfoListExtent(const rtattr* list, size_t room) {
  const auto* base = reinterpret_cast<const uint8_t*>(list);
  size_t walked = RTA_LENGTH(0);
  while (room - walked >= RTA_LENGTH(0)) {
    auto* child = reinterpret_cast<const rtattr*>(base + walked);
    if (attrType(child) != IFLA_VF_INFO || child->rta_len < RTA_LENGTH(0) || child->rta_len > room - walked) break;
    walked += std::min<size_t>(RTA_ALIGN(child->rta_len), room - walked);
  }
  return walked > list->rta_len && (walked & 0xffff) == list->rta_len ? walked : list->rta_len;
}

// Top-level attributes of an RTM_NEWLINK, tolerating the wrapped IFLA_VFINFO_LIST length; the list's
// payload is returned separately with its true length. Every attribute is checked to lie inside the message
// before anything in it is read or handed on.
static AttrTable<IFLA_MAX> scanLinkAttrs(const nlmsghdr* h, const uint8_t** vfList, size_t* vfListLen) {
  AttrTable<IFLA_MAX> tb(nullptr, 0);
  const size_t start = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  if (h->nlmsg_len <= start) return tb;
  const auto* p = reinterpret_cast<const uint8_t*>(h) + start;
  size_t room = h->nlmsg_len - start;
  while (room >= RTA_LENGTH(0)) {
    auto* a = reinterpret_cast<const rtattr*>(p);
    size_t len = a->rta_len;
    if (len < RTA_LENGTH(0)) break;
    if (attrType(a) == IFLA_VFINFO_LIST) len = vfinfoListExtent(a, room);
    if (len > room) break;
    if (attrType(a) == IFLA_VFINFO_LIST) {
      *vfList = p + RTA_LENGTH(0);
      *vfListLen = len - RTA_LENGTH(0);
    }
    tb.set(attrType(a), a);
    size_t step = RTA_ALIGN(len);
    if (step >= room) break;
    p += step;
    room -= step;
  }
  return tb;
}

bool parseLinkMessage(const nlmsghdr* h, LinkInfo& out) {
  if (h->nlmsg_type != RTM_NEWLINK) return false;
  auto* ifi = familyHeader<ifinfomsg>(h);
  if (!ifi) return false;
  const uint8_t* vfList = nullptr;
  size_t vfListLen = 0;
  auto tb = scanLinkAttrs(h, &vfList, &vfListLen);
  out = LinkInfo{};
  out.index = ifi->ifi_index;
  out.flags = ifi->ifi_flags;
  readString(tb[IFLA_IFNAME], out.name);
  out.mac = hwAddr(tb[IFLA_ADDRESS]);
  out.permMac = hwAddr(tb[IFLA_PERM_ADDRESS]);
  readAttr(tb[IFLA_MTU], out.mtu);
  readAttr(tb[IFLA_GROUP], out.group);
  readAttr(tb[IFLA_OPERSTATE], out.operstate);
  out.alias = optionalString(tb[IFLA_IFALIAS]);
  out.parentIndex = optionalValue<int32_t>(tb[IFLA_LINK]);
  out.masterIndex = optionalValue<int32_t>(tb[IFLA_MASTER]);
  out.linkNetnsId = optionalValue<int32_t>(tb[IFLA_LINK_NETNSID]);
  out.numVfs = optionalValue<uint32_t>(tb[IFLA_NUM_VF]);
  if (const rtattr* info = tb[IFLA_LINKINFO]) {
    auto li = AttrTable<IFLA_INFO_MAX>::nested(info);
    out.kind = optionalString(li[IFLA_INFO_KIND]);
  }
  if (const rtattr* props = tb[IFLA_PROP_LIST]) {
    forEachNested(props, [&](const rtattr* a) {
      std::string alt;
      if (attrType(a) == IFLA_ALT_IFNAME && readString(a, alt)) out.altnames.push_back(alt);
    });
  }
  if (vfList) out.vfs = parseVfInfoList(vfList, vfListLen);
  return true;
}

std::vector<LinkInfo> parseLinkMessages(const void* data, size_t len) {
  std::vector<LinkInfo> links;
  forEachMessage(data, len, [&](const nlmsghdr* h) {
    LinkInfo l;
    if (parseLinkMessage(h, l)) links.push_back(std::move(l));
  });
  return links;
}

LinkInfo getLink(NlSocket& s, int index, const std::string& name, bool vfs) {
  auto req = linkRequest(RTM_GETLINK, 0, index > 0 ? index : 0);
  // Names longer than IFNAMSIZ can only be altnames, which the kernel looks up under IFLA_ALT_IFNAME.
  if (index <= 0) req.putString(name.size() < IFNAMSIZ ? IFLA_IFNAME : IFLA_ALT_IFNAME, name);
  // VF info only when asked: on a big PF it makes the kernel hold RTNL for a long time.
  req.putU32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS | (vfs ? RTEXT_FILTER_VF : 0));
  LinkInfo link;
  bool found = false;
  s.request(req, "RTM_GETLINK", [&](const nlmsghdr* h) { found = found || parseLinkMessage(h, link); });
  if (!found) throw SysFailure::withDetail(ENODEV, "RTM_GETLINK", "no link in the reply");
  return link;
}

std::vector<LinkInfo> listLinks(NlSocket& s) {
  auto req = linkRequest(RTM_GETLINK, NLM_F_DUMP, 0);
  req.putU32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
  std::vector<LinkInfo> links;
  s.dump(req, "RTM_GETLINK dump", [&] { links.clear(); }, [&](const nlmsghdr* h) {
    LinkInfo l;
    if (parseLinkMessage(h, l)) links.push_back(std::move(l));
  });
  return links;
}

void setLink(NlSocket& s, int index, const LinkChange& c) {
  auto req = linkRequest(RTM_NEWLINK, 0, index);
  std::string op = "RTM_NEWLINK set ";
  if (c.name) {
    req.putString(IFLA_IFNAME, *c.name);
    appendField(op, "name");
  }
  if (c.mtu) {
    req.putU32(IFLA_MTU, *c.mtu);
    appendField(op, "mtu");
  }
  if (c.mac) {
    req.put(IFLA_ADDRESS, c.mac->data(), c.mac->size());
    appendField(op, "mac");
  }
  if (c.up) {
    req.family<ifinfomsg>().ifi_change = IFF_UP;
    req.family<ifinfomsg>().ifi_flags = *c.up ? IFF_UP : 0;
    appendField(op, *c.up ? "up" : "down");
  }
  if (c.alias) {
    req.putString(IFLA_IFALIAS, *c.alias);
    appendField(op, "alias");
  }
  if (c.master) {
    req.putU32(IFLA_MASTER, *c.master);
    appendField(op, "master");
  }
  s.request(req, op);
}

void moveLink(NlSocket& s, int index, int nsFd, const std::optional<std::string>& newName) {
  auto req = linkRequest(RTM_NEWLINK, 0, index);
  req.putU32(IFLA_NET_NS_FD, static_cast<uint32_t>(nsFd));
  if (newName) req.putString(IFLA_IFNAME, *newName);
  s.request(req, newName ? "RTM_NEWLINK move+rename" : "RTM_NEWLINK move");
}

static void changeAltname(NlSocket& s, uint16_t type, int index, const std::string& altname, const char* op) {
  auto req = linkRequest(type, type == RTM_NEWLINKPROP ? NLM_F_EXCL : 0, index);
  size_t props = req.beginNest(IFLA_PROP_LIST);
  req.putString(IFLA_ALT_IFNAME, altname);
  req.endNest(props);
  s.request(req, op);
}

void addAltname(NlSocket& s, int index, const std::string& altname) {
  changeAltname(s, RTM_NEWLINKPROP, index, altname, "RTM_NEWLINKPROP add altname");
}

void delAltname(NlSocket& s, int index, const std::string& altname) {
  changeAltname(s, RTM_DELLINKPROP, index, altname, "RTM_DELLINKPROP del altname");
}

void addLink(NlSocket& s, const NewLink& spec) {
  auto req = linkRequest(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0);
  req.putString(IFLA_IFNAME, spec.name);
  if (spec.mac) req.put(IFLA_ADDRESS, spec.mac->data(), spec.mac->size());
  if (spec.mtu) req.putU32(IFLA_MTU, *spec.mtu);
  if (spec.group) req.putU32(IFLA_GROUP, *spec.group);
  if (spec.parentIndex > 0) req.putU32(IFLA_LINK, static_cast<uint32_t>(spec.parentIndex));
  size_t linkinfo = req.beginNest(IFLA_LINKINFO);
  req.putString(IFLA_INFO_KIND, spec.kind);
  if (spec.kind == "veth") {
    size_t data = req.beginNest(IFLA_INFO_DATA);
    size_t peer = req.beginNest(VETH_INFO_PEER, false);
    ifinfomsg peerHeader{};
    peerHeader.ifi_family = AF_UNSPEC;
    req.appendStruct(peerHeader);
    req.putString(IFLA_IFNAME, spec.peerName);
    if (spec.peerNsFd >= 0) req.putU32(IFLA_NET_NS_FD, static_cast<uint32_t>(spec.peerNsFd));
    if (spec.peerMac) req.put(IFLA_ADDRESS, spec.peerMac->data(), spec.peerMac->size());
    if (spec.mtu) req.putU32(IFLA_MTU, *spec.mtu);
    req.endNest(peer);
    req.endNest(data);
  } else if (spec.kind == "macvlan" && spec.macvlanMode) {
    size_t data = req.beginNest(IFLA_INFO_DATA);
    req.putU32(IFLA_MACVLAN_MODE, *spec.macvlanMode);
    req.endNest(data);
  }
  req.endNest(linkinfo);
  s.request(req, "RTM_NEWLINK create " + spec.kind);
}

void deleteLink(NlSocket& s, int index) {
  auto req = linkRequest(RTM_DELLINK, 0, index);
  s.request(req, "RTM_DELLINK");
}

void deleteLinkGroup(NlSocket& s, uint32_t group) {
  auto req = linkRequest(RTM_DELLINK, 0, 0);
  req.putU32(IFLA_GROUP, group);
  s.request(req, "RTM_DELLINK group");
}

}  // namespace sriovctl
