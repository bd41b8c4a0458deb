#include "rule.h"

#include <linux/fib_rules.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>

namespace sriovctl {

namespace {

// Every attribute type parseRuleMessage reads by name and ruleRequest sends from a field; FRA_PAD carries nothing.
bool knownRuleAttr(uint16_t type) {
  switch (type) {
    case FRA_DST: case FRA_SRC: case FRA_IIFNAME: case FRA_GOTO: case FRA_PRIORITY: case FRA_FWMARK:
    case FRA_FLOW: case FRA_SUPPRESS_IFGROUP: case FRA_SUPPRESS_PREFIXLEN: case FRA_TABLE: case FRA_FWMASK:
    case FRA_OIFNAME: case FRA_PAD: case FRA_L3MDEV: case FRA_UID_RANGE: case FRA_PROTOCOL: case FRA_IP_PROTO:
    case FRA_SPORT_RANGE: case FRA_DPORT_RANGE:
      return true;
    default:
      return false;
  }
}

// The kernel stores an unset suppress_prefixlen / suppress_ifgroup as -1 and dumps it as such (u32 all ones).
std::optional<uint32_t> suppressor(const rtattr* a) {
  auto v = optionalValue<uint32_t>(a);
  if (v && *v == UINT32_MAX) return std::nullopt;
  return v;
}

std::optional<RuleRange> uidRange(const rtattr* a) {
  fib_rule_uid_range r{};
  if (!readAttr(a, r)) return std::nullopt;
  return RuleRange{r.start, r.end};
}

std::optional<RuleRange> portRange(const rtattr* a) {
  fib_rule_port_range r{};
  if (!readAttr(a, r)) return std::nullopt;
  return RuleRange{r.start, r.end};
}

NlRequest ruleRequest(uint16_t type, uint16_t flags, const RuleSpec& r) {
  auto req = NlRequest::make<fib_rule_hdr>(type, flags);
  auto& frh = req.family<fib_rule_hdr>();
  frh.family = static_cast<uint8_t>(r.family);
  frh.src_len = r.src ? r.srcLen : 0;
  frh.dst_len = r.dst ? r.dstLen : 0;
  frh.tos = r.tos;
  frh.action = r.action;
  frh.flags = r.flags;
  frh.table = static_cast<uint8_t>(r.table < 256 ? r.table : static_cast<uint32_t>(RT_TABLE_UNSPEC));
  if (r.priority) req.putU32(FRA_PRIORITY, *r.priority);
  if (r.table) req.putU32(FRA_TABLE, r.table);
  if (r.src) req.put(FRA_SRC, r.src->bytes, r.src->size());
  if (r.dst) req.put(FRA_DST, r.dst->bytes, r.dst->size());
  if (r.iifName) req.putString(FRA_IIFNAME, *r.iifName);
  if (r.oifName) req.putString(FRA_OIFNAME, *r.oifName);
  if (r.fwmark) req.putU32(FRA_FWMARK, *r.fwmark);
  if (r.fwmask) req.putU32(FRA_FWMASK, *r.fwmask);
  if (r.gotoPriority) req.putU32(FRA_GOTO, *r.gotoPriority);
  if (r.flow) req.putU32(FRA_FLOW, *r.flow);
  if (r.l3mdev) req.putU8(FRA_L3MDEV, 1);
  if (r.uidRange) req.putStruct(FRA_UID_RANGE, fib_rule_uid_range{r.uidRange->start, r.uidRange->end});
  if (r.ipProto) req.putU8(FRA_IP_PROTO, *r.ipProto);
  auto ports = [](const RuleRange& p) {
    return fib_rule_port_range{static_cast<uint16_t>(p.start), static_cast<uint16_t>(p.end)};
  };
  if (r.sport) req.putStruct(FRA_SPORT_RANGE, ports(*r.sport));
  if (r.dport) req.putStruct(FRA_DPORT_RANGE, ports(*r.dport));
  if (r.suppressPrefixLen) req.putU32(FRA_SUPPRESS_PREFIXLEN, *r.suppressPrefixLen);
  if (r.suppressIfGroup) req.putU32(FRA_SUPPRESS_IFGROUP, *r.suppressIfGroup);
  if (r.protocol) req.putU8(FRA_PROTOCOL, *r.protocol);
  for (const auto& a : r.extraAttrs) {
    if (knownRuleAttr(a.type & NLA_TYPE_MASK))
      throw SysFailure::withDetail(EINVAL, "rule attribute " + std::to_string(a.type), "sent from its own field");
    req.put(a.type, a.data.data(), a.data.size());
  }
  return req;
}

}  // namespace

std::vector<uint16_t> namedRuleAttrTypes() {
  std::vector<uint16_t> out;
  for (uint16_t t = 1; t <= FRA_MAX; ++t)
    if (knownRuleAttr(t)) out.push_back(t);
  return out;
}

bool parseRuleMessage(const nlmsghdr* h, RuleInfo& r) {
  auto* frh = familyHeader<fib_rule_hdr>(h);
  if (h->nlmsg_type != RTM_NEWRULE || !frh) return false;
  if (frh->family != AF_INET && frh->family != AF_INET6) return false;
  auto tb = AttrTable<FRA_MAX>::afterHeader(h, sizeof(fib_rule_hdr));
  r = RuleInfo{};
  r.family = frh->family;
  r.action = frh->action;
  r.flags = frh->flags;
  r.tos = frh->tos;
  r.table = frh->table;
  readAttr(tb[FRA_TABLE], r.table);
  readAttr(tb[FRA_PRIORITY], r.priority);
  readAttr(tb[FRA_PROTOCOL], r.protocol);
  const size_t addrLen = r.family == AF_INET ? 4 : 16;
  if (tb[FRA_SRC] && attrLen(tb[FRA_SRC]) >= addrLen) {
    r.src = formatInet(r.family, attrData(tb[FRA_SRC]));
    r.srcLen = frh->src_len;
  }
  if (tb[FRA_DST] && attrLen(tb[FRA_DST]) >= addrLen) {
    r.dst = formatInet(r.family, attrData(tb[FRA_DST]));
    r.dstLen = frh->dst_len;
  }
  r.iifName = optionalString(tb[FRA_IIFNAME]);
  r.oifName = optionalString(tb[FRA_OIFNAME]);
  r.fwmark = optionalValue<uint32_t>(tb[FRA_FWMARK]);
  r.fwmask = optionalValue<uint32_t>(tb[FRA_FWMASK]);
  r.gotoPriority = optionalValue<uint32_t>(tb[FRA_GOTO]);
  r.flow = optionalValue<uint32_t>(tb[FRA_FLOW]);
  uint8_t l3mdev = 0;
  r.l3mdev = readAttr(tb[FRA_L3MDEV], l3mdev) && l3mdev != 0;
  r.uidRange = uidRange(tb[FRA_UID_RANGE]);
  r.ipProto = optionalValue<uint8_t>(tb[FRA_IP_PROTO]);
  r.sport = portRange(tb[FRA_SPORT_RANGE]);
  r.dport = portRange(tb[FRA_DPORT_RANGE]);
  r.suppressPrefixLen = suppressor(tb[FRA_SUPPRESS_PREFIXLEN]);
  r.suppressIfGroup = suppressor(tb[FRA_SUPPRESS_IFGROUP]);
  forEachAttrAfterHeader(h, sizeof(fib_rule_hdr), [&](const rtattr* a) {
    if (!knownRuleAttr(attrType(a))) r.extraAttrs.push_back({a->rta_type, readBytes(a)});
  });
  return true;
}

std::vector<RuleInfo> listRules(NlSocket& s, int family) {
  auto req = NlRequest::make<fib_rule_hdr>(RTM_GETRULE, NLM_F_DUMP);
  req.family<fib_rule_hdr>().family = static_cast<uint8_t>(family);
  std::vector<RuleInfo> out;
  s.dump(req, "RTM_GETRULE dump", [&] { out.clear(); }, [&](const nlmsghdr* h) {
    RuleInfo r;
    if (!parseRuleMessage(h, r)) return;
    if (family != AF_UNSPEC && r.family != family) return;
    out.push_back(std::move(r));
  });
  return out;
}

void addRule(NlSocket& s, const RuleSpec& r) {
  auto req = ruleRequest(RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, r);
  s.request(req, "RTM_NEWRULE");
}

void deleteRule(NlSocket& s, const RuleSpec& r) {
  auto req = ruleRequest(RTM_DELRULE, 0, r);
  s.request(req, "RTM_DELRULE");
}

}  // namespace sriovctl
