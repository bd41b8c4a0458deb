// Policy routing rules (RTM_NEWRULE / RTM_DELRULE / RTM_GETRULE, <linux/fib_rules.h>), IPv4 and IPv6.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inet.h"
#include "nl_socket.h"

namespace sriovctl {

// start..end, inclusive (struct fib_rule_uid_range / fib_rule_port_range).
struct RuleRange {
  uint32_t start = 0;
  uint32_t end = 0;
};

// An attribute carried as the kernel sent it: a match newer than this build's UAPI header (a port mask, a DSCP),
// sent back byte for byte so the rule is recreated as it was. Never one of the attributes read by name.
struct RawAttr {
  uint16_t type = 0;
  std::vector<uint8_t> data;
};

// What a rule matches besides its addresses, and how (the same in a dump and in a request).
struct RuleMatches {
  uint8_t tos = 0;
  std::optional<std::string> iifName;
  std::optional<std::string> oifName;
  std::optional<uint32_t> fwmark;
  std::optional<uint32_t> fwmask;
  std::optional<uint32_t> gotoPriority;
  std::optional<uint32_t> flow;  // FRA_FLOW: IPv4 realms
  bool l3mdev = false;
  std::optional<RuleRange> uidRange;
  std::optional<uint8_t> ipProto;
  std::optional<RuleRange> sport;
  std::optional<RuleRange> dport;
  std::optional<uint32_t> suppressPrefixLen;
  std::optional<uint32_t> suppressIfGroup;
  // Every attribute not read by name (FRA_PAD aside), as sent.
  std::vector<RawAttr> extraAttrs;
};

struct RuleInfo : RuleMatches {
  int family = 0;  // AF_INET / AF_INET6
  uint32_t priority = 0;
  uint8_t action = 0;  // FR_ACT_*
  uint32_t table = 0;  // FRA_TABLE when sent (it carries tables above 255), else the header's
  uint32_t flags = 0;  // FIB_RULE_* as dumped (INVERT, and the kernel's own UNRESOLVED / *_DETACHED)
  uint8_t protocol = 0;  // FRA_PROTOCOL: who made it (RTPROT_*)
  std::optional<std::string> src;
  uint8_t srcLen = 0;
  std::optional<std::string> dst;
  uint8_t dstLen = 0;
};

struct RuleSpec : RuleMatches {
  int family = 0;
  std::optional<uint32_t> priority;  // nullopt: the kernel picks one (add) or any (delete)
  uint8_t action = 1;                // FR_ACT_TO_TBL
  uint32_t table = 0;
  uint32_t flags = 0;  // only FIB_RULE_INVERT is ours to send
  std::optional<uint8_t> protocol;
  std::optional<InetAddr> src;
  uint8_t srcLen = 0;
  std::optional<InetAddr> dst;
  uint8_t dstLen = 0;
};

// The FRA_* types read into, and sent from, the named fields above (and FRA_PAD): never a RawAttr's.
std::vector<uint16_t> namedRuleAttrTypes();

// An RTM_NEWRULE of IPv4 or IPv6; false for anything else.
bool parseRuleMessage(const nlmsghdr* h, RuleInfo& r);

// family AF_UNSPEC: both.
std::vector<RuleInfo> listRules(NlSocket& s, int family);
void addRule(NlSocket& s, const RuleSpec& r);
void deleteRule(NlSocket& s, const RuleSpec& r);

}  // namespace sriovctl
