#include "addr.h"

#include <linux/if_addr.h>
#include <sys/socket.h>

namespace sriovctl {

namespace {

NlRequest addressRequest(uint16_t type, uint16_t flags, int index, const InetAddr& a, uint8_t prefixLen) {
  auto req = NlRequest::make<ifaddrmsg>(type, flags);
  auto& ifa = req.family<ifaddrmsg>();
  ifa.ifa_family = static_cast<uint8_t>(a.family);
  ifa.ifa_prefixlen = prefixLen;
  ifa.ifa_index = static_cast<uint32_t>(index);
  // IFA_LOCAL is the interface's own address; IFA_ADDRESS equals it when there is no point-to-point peer.
  req.put(IFA_LOCAL, a.bytes, a.size());
  req.put(IFA_ADDRESS, a.bytes, a.size());
  return req;
}

}  // namespace

std::vector<AddressInfo> listAddresses(NlSocket& s, int index, int family) {
  auto req = NlRequest::make<ifaddrmsg>(RTM_GETADDR, NLM_F_DUMP);
  req.family<ifaddrmsg>().ifa_family = static_cast<uint8_t>(family);
  std::vector<AddressInfo> out;
  s.dump(req, "RTM_GETADDR dump", [&] { out.clear(); }, [&](const nlmsghdr* h) {
    auto* ifa = familyHeader<ifaddrmsg>(h);
    if (h->nlmsg_type != RTM_NEWADDR || !ifa) return;
    if (index > 0 && ifa->ifa_index != static_cast<uint32_t>(index)) return;
    if (family != AF_UNSPEC && ifa->ifa_family != family) return;
    if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) return;
    auto tb = AttrTable<IFA_MAX>::afterHeader(h, sizeof(ifaddrmsg));
    const rtattr* a = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
    size_t want = ifa->ifa_family == AF_INET ? 4 : 16;
    if (!a || attrLen(a) < want) return;
    uint32_t flags = ifa->ifa_flags;
    readAttr(tb[IFA_FLAGS], flags);
    out.push_back(AddressInfo{static_cast<int>(ifa->ifa_index), ifa->ifa_family,
                              formatInet(ifa->ifa_family, attrData(a)), ifa->ifa_prefixlen, flags});
  });
  return out;
}

void addAddress(NlSocket& s, int index, const InetAddr& addr, uint8_t prefixLen) {
  auto req = addressRequest(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, index, addr, prefixLen);
  s.request(req, "RTM_NEWADDR");
}

void deleteAddress(NlSocket& s, int index, const InetAddr& addr, uint8_t prefixLen) {
  auto req = addressRequest(RTM_DELADDR, 0, index, addr, prefixLen);
  s.request(req, "RTM_DELADDR");
}

}  // namespace sriovctl
