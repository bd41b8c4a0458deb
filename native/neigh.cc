#include "neigh.h"

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

namespace sriovctl {

bool parseNeighbourMessage(const nlmsghdr* h, NeighbourInfo& out) {
  auto* ndm = familyHeader<ndmsg>(h);
  if (h->nlmsg_type != RTM_NEWNEIGH || !ndm) return false;
  if (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6) return false;
  if (ndm->ndm_flags & NTF_PROXY) return false;
  auto tb = AttrTable<NDA_MAX>::afterHeader(h, sizeof(ndmsg));
  size_t want = ndm->ndm_family == AF_INET ? 4 : 16;
  if (!tb[NDA_DST] || attrLen(tb[NDA_DST]) < want) return false;
  out = NeighbourInfo{};
  out.index = ndm->ndm_ifindex;
  out.family = ndm->ndm_family;
  out.address = formatInet(ndm->ndm_family, attrData(tb[NDA_DST]));
  if (tb[NDA_LLADDR]) out.lladdr = formatHwAddr(static_cast<const uint8_t*>(attrData(tb[NDA_LLADDR])), attrLen(tb[NDA_LLADDR]));
  out.state = ndm->ndm_state;
  out.flags = ndm->ndm_flags;
  return true;
}

std::vector<NeighbourInfo> listNeighbours(NlSocket& s, int index, int family) {
  auto req = NlRequest::make<ndmsg>(RTM_GETNEIGH, NLM_F_DUMP);
  req.family<ndmsg>().ndm_family = static_cast<uint8_t>(family);
  std::vector<NeighbourInfo> out;
  s.dump(req, "RTM_GETNEIGH dump", [&] { out.clear(); }, [&](const nlmsghdr* h) {
    NeighbourInfo n;
    if (!parseNeighbourMessage(h, n)) return;
    if (n.index != index) return;
    if (family != AF_UNSPEC && n.family != family) return;
    out.push_back(std::move(n));
  });
  return out;
}

void replaceNeighbour(NlSocket& s, const NeighbourSpec& spec) {
  auto req = NlRequest::make<ndmsg>(RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
  auto& ndm = req.family<ndmsg>();
  ndm.ndm_family = static_cast<uint8_t>(spec.address.family);
  ndm.ndm_ifindex = spec.index;
  ndm.ndm_state = spec.state;
  ndm.ndm_flags = spec.flags;
  req.put(NDA_DST, spec.address.bytes, spec.address.size());
  if (spec.lladdr) req.put(NDA_LLADDR, spec.lladdr->data(), spec.lladdr->size());
  s.request(req, "RTM_NEWNEIGH");
}

}  // namespace sriovctl
