// Links (RTM_*LINK, RTM_*LINKPROP): read, list, change, move, create, delete.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hwaddr.h"
#include "nl_socket.h"
#include "vf.h"

namespace sriovctl {

struct LinkInfo {
  int index = 0;
  std::string name;
  std::optional<std::string> mac;
  std::optional<std::string> permMac;
  uint32_t mtu = 0;
  uint32_t group = 0;  // IFLA_GROUP
  uint32_t flags = 0;
  uint8_t operstate = 0;  // IF_OPER_*
  std::optional<std::string> kind;
  std::optional<std::string> alias;
  std::vector<std::string> altnames;
  std::optional<int> parentIndex;     // IFLA_LINK
  std::optional<int> masterIndex;     // IFLA_MASTER (the bridge or bond it is a port of)
  std::optional<int> linkNetnsId;     // IFLA_LINK_NETNSID: the parent/peer lives in another namespace
  std::optional<uint32_t> numVfs;     // IFLA_NUM_VF
  std::optional<std::vector<VfInfo>> vfs;  // only when the reply carried IFLA_VFINFO_LIST
};

// One RTM_NEWLINK message → LinkInfo; false when the message is not a usable RTM_NEWLINK.
bool parseLinkMessage(const nlmsghdr* h, LinkInfo& out);

// Every RTM_NEWLINK in a buffer of concatenated messages (other types are skipped). Pure.
std::vector<LinkInfo> parseLinkMessages(const void* data, size_t len);

// 'up', 'down', 'lowerlayerdown', … for IF_OPER_*.
const char* operstateName(uint8_t state);

// By index when index > 0, else by name (the kernel also resolves altnames). With vfs, the VF table too.
LinkInfo getLink(NlSocket& s, int index, const std::string& name, bool vfs);
std::vector<LinkInfo> listLinks(NlSocket& s);

// Exactly the given fields, in one RTM_NEWLINK.
struct LinkChange {
  std::optional<std::string> name;
  std::optional<uint32_t> mtu;
  std::optional<Mac> mac;
  std::optional<bool> up;
  std::optional<std::string> alias;
  // IFLA_MASTER: the bridge or bond to enslave the link to
  std::optional<uint32_t> master;
};
void setLink(NlSocket& s, int index, const LinkChange& change);

// IFLA_NET_NS_FD, with IFLA_IFNAME in the same request when newName is given.
void moveLink(NlSocket& s, int index, int nsFd, const std::optional<std::string>& newName);

void addAltname(NlSocket& s, int index, const std::string& altname);
void delAltname(NlSocket& s, int index, const std::string& altname);

struct NewLink {
  std::string kind;  // 'dummy', 'veth', 'macvlan', …
  std::string name;
  std::optional<Mac> mac;
  std::optional<uint32_t> mtu;
  // IFLA_GROUP: links of one group can be deleted in one request (deleteLinkGroup)
  std::optional<uint32_t> group;
  // veth
  std::string peerName;
  int peerNsFd = -1;  // the peer is created in this namespace (IFLA_NET_NS_FD in the peer's info)
  std::optional<Mac> peerMac;
  // macvlan
  int parentIndex = 0;
  std::optional<uint32_t> macvlanMode;  // MACVLAN_MODE_*
};
void addLink(NlSocket& s, const NewLink& spec);
void deleteLink(NlSocket& s, int index);
// Every link of `group` in the socket's namespace, in one RTM_DELLINK: the kernel unregisters them as one batch,
// paying its RCU wait once instead of once per link.
void deleteLinkGroup(NlSocket& s, uint32_t group);

}  // namespace sriovctl
