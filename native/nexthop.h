// Nexthop objects and groups (RTM_NEWNEXTHOP / RTM_DELNEXTHOP / RTM_GETNEXTHOP, <linux/nexthop.h>).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inet.h"
#include "nl_socket.h"

namespace sriovctl {

struct NexthopMember {
  uint32_t id = 0;
  uint32_t weight = 1;  // 1..65536 (the wire holds weight - 1)
};

// A resilient group's settings (NHA_RES_GROUP); timers in clock_t (USER_HZ) as the kernel takes them.
struct ResilientGroup {
  uint16_t buckets = 0;
  uint32_t idleTimer = 0;
  uint32_t unbalancedTimer = 0;
};

struct NexthopInfo {
  uint32_t id = 0;
  int family = 0;  // AF_INET / AF_INET6; AF_UNSPEC for a group (and some blackholes)
  uint8_t scope = 0;
  uint8_t protocol = 0;
  uint32_t flags = 0;  // RTNH_F_* as dumped (ONLINK is set by a caller; DEAD, LINKDOWN by the kernel)
  std::optional<uint32_t> oif;
  std::optional<std::string> gateway;
  bool blackhole = false;
  bool fdb = false;
  std::vector<NexthopMember> group;  // empty: not a group
  uint16_t groupType = 0;            // NEXTHOP_GRP_TYPE_*
  std::optional<ResilientGroup> resilient;
  // Attribute types this build cannot re-send (an encapsulation, a newer kernel's attribute).
  std::vector<uint16_t> unknownAttrs;
};

struct NexthopSpec {
  uint32_t id = 0;
  int family = 0;
  uint8_t protocol = 0;
  uint32_t flags = 0;  // only RTNH_F_ONLINK is ours to send
  std::optional<uint32_t> oif;
  std::optional<InetAddr> gateway;
  bool blackhole = false;
  bool fdb = false;
  std::vector<NexthopMember> group;
  uint16_t groupType = 0;
  std::optional<ResilientGroup> resilient;
};

// An RTM_NEWNEXTHOP with an id; false for anything else.
bool parseNexthopMessage(const nlmsghdr* h, NexthopInfo& n);

std::vector<NexthopInfo> listNexthops(NlSocket& s);
// replace: NLM_F_REPLACE (an existing id keeps its routes and takes the new members), else NLM_F_EXCL.
void addNexthop(NlSocket& s, const NexthopSpec& n, bool replace);
void deleteNexthop(NlSocket& s, uint32_t id);

}  // namespace sriovctl
