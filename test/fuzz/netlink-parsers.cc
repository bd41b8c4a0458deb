// libFuzzer target over the addon's netlink reply parsers, built from the addon's own sources (native/*.cc) with
// AddressSanitizer and UndefinedBehaviorSanitizer (test/fuzz/run.sh). Every input is treated as a buffer the
// kernel could have handed to recv(): concatenated messages, each given to every parser the socket layer uses —
// links with VF tables (including the wrapped 16-bit IFLA_VFINFO_LIST length), addresses (peer, label, cache info),
// routes (multipath hops with their gateway/via attributes, metrics), policy rules, nexthop objects and groups,
// neighbours, qdiscs, errors with extended-ack TLVs, and the reply filter. A read outside the buffer, a wrapped
// length or a bad shift stops the run with a report; the input is copied to an allocation of exactly its size so
// ASan sees any overread.
#include <cstdint>
#include <cstring>
#include <memory>

#include "../../native/addr.h"
#include "../../native/link.h"
#include "../../native/nexthop.h"
#include "../../native/neigh.h"
#include "../../native/qdisc.h"
#include "../../native/nl_message.h"
#include "../../native/nl_socket.h"
#include "../../native/route.h"
#include "../../native/rule.h"
#include "../../native/vf.h"

using namespace sriovctl;

namespace {

// Results are folded into this so the optimiser cannot drop a parse.
volatile size_t sink;

void parseOne(const nlmsghdr* h) {
  LinkInfo link;
  if (parseLinkMessage(h, link)) {
    size_t n = link.name.size() + link.altnames.size() + (link.mac ? link.mac->size() : 0);
    if (link.vfs)
      for (const auto& vf : *link.vfs) n += vf.vf + vf.vlan + vf.mac[0];
    sink = sink + n;
  }
  AddressInfo addr;
  if (parseAddressMessage(h, addr))
    sink = sink + addr.address.size() + (addr.peer ? addr.peer->size() : 0) + (addr.label ? addr.label->size() : 0) + addr.validLft;
  NeighbourInfo neigh;
  if (parseNeighbourMessage(h, neigh)) sink = sink + neigh.address.size() + (neigh.lladdr ? neigh.lladdr->size() : 0) + neigh.state;
  QdiscInfo qdisc;
  if (parseQdiscMessage(h, qdisc)) sink = sink + qdisc.kind.size() + qdisc.options.size() + qdisc.handle;
  RouteInfo route;
  if (parseRouteMessage(h, route)) {
    size_t n = (route.dst ? route.dst->size() : 0) + (route.gateway ? route.gateway->size() : 0) + route.nexthopOifs.size();
    for (const auto& hop : route.hops) n += hop.ifindex + hop.weight + (hop.gateway ? hop.gateway->size() : 0);
    for (const auto& m : route.metrics) n += m.first + m.second;
    n += route.ccAlgo ? route.ccAlgo->size() : 0;
    sink = sink + n;
  }
  RuleInfo rule;
  if (parseRuleMessage(h, rule))
    sink = sink + (rule.src ? rule.src->size() : 0) + (rule.iifName ? rule.iifName->size() : 0) + rule.extraAttrs.size();
  NexthopInfo nh;
  if (parseNexthopMessage(h, nh)) {
    size_t n = nh.id + (nh.gateway ? nh.gateway->size() : 0) + nh.unknownAttrs.size();
    for (const auto& m : nh.group) n += m.id + m.weight;
    sink = sink + n;
  }
  if (h->nlmsg_type == NLMSG_ERROR) {
    if (auto f = failureFromError(h, "fuzz")) sink = sink + f->kernelMessage.size();
  } else if (h->nlmsg_type == NLMSG_DONE) {
    if (auto f = failureFromDone(h, "fuzz")) sink = sink + f->kernelMessage.size();
  }
  sink = sink + acceptsMessage(h, 1234, 5678);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // new[] aligns to 16, as a receive buffer is; the exact size lets ASan flag the first byte past the end.
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size]);
  if (size) std::memcpy(buf.get(), data, size);
  try {
    forEachMessage(buf.get(), size, parseOne);
    sink = sink + parseLinkMessages(buf.get(), size).size();
    // the VF list parser alone, over the raw bytes (it is handed a nest's payload by parseLinkMessage)
    sink = sink + parseVfInfoList(buf.get(), size).size();
  } catch (const SysFailure&) {
    // a parser may refuse a message; that is not a crash
  }
  return 0;
}
