#include "addr.h"

#include <linux/if_addr.h>
#include <sys/socket.h>

namespace sriovctl {

namespace {

NlRequest addressRequest(uint16_t type, uint16_t flags, int index, const InetAddr& a, uint8_t prefixLen,
                         const InetAddr* peer = nullptr) {
  auto req = NlRequest::make<ifaddrmsg>(type, flags);
  auto& ifa = req.family<ifaddrmsg>();
  ifa.ifa_family = static_cast<uint8_t>(a.family);
  ifa.ifa_prefixlen = prefixLen;
  ifa.ifa_index = static_cast<uint32_t>(index);
  // IFA_LOCAL is the interface's own address; IFA_ADDRESS equals it when there is no point-to-point peer.
  req.put(IFA_LOCAL, a.bytes, a.size());
  const InetAddr& address = peer ? *peer : a;
  req.put(IFA_ADDRESS, address.bytes, address.size());
  return req;
}

std::optional<std::string> addressAttr(const rtattr* a, int family) {
  const size_t want = family == AF_INET ? 4 : 16;
  if (!a || attrLen(a) < want) return std::nullopt;
  return formatInet(family, attrData(a));
}

}  // namespace

bool parseAddressMessage(const nlmsghdr* h, AddressInfo& out) {
  auto* ifa = familyHeader<ifaddrmsg>(h);
  if (h->nlmsg_type != RTM_NEWADDR || !ifa) return false;
  if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) return false;
  auto tb = AttrTable<IFA_MAX>::afterHeader(h, sizeof(ifaddrmsg));
  const int family = ifa->ifa_family;
  auto local = addressAttr(tb[IFA_LOCAL], family);
  auto address = addressAttr(tb[IFA_ADDRESS], family);
  if (!local && !address) return false;
  uint32_t flags = ifa->ifa_flags;
  readAttr(tb[IFA_FLAGS], flags);
  out = AddressInfo{};
  out.index = static_cast<int>(ifa->ifa_index);
  out.family = family;
  out.address = local ? *local : *address;
  out.prefixLen = ifa->ifa_prefixlen;
  out.flags = flags;
  out.scope = ifa->ifa_scope;
  if (local && address && *local != *address) out.peer = address;
  out.broadcast = addressAttr(tb[IFA_BROADCAST], family);
  std::string label;
  if (readString(tb[IFA_LABEL], label)) out.label = label;
  ifa_cacheinfo ci{};
  if (readAttr(tb[IFA_CACHEINFO], ci)) {
    out.validLft = ci.ifa_valid;
    out.preferredLft = ci.ifa_prefered;
  }
  uint8_t proto = 0;
  if (readAttr(tb[IFA_PROTO], proto)) out.proto = proto;
  uint32_t metric = 0;
  if (readAttr(tb[IFA_RT_PRIORITY], metric)) out.metric = metric;
  return true;
}

std::vector<AddressInfo> listAddresses(NlSocket& s, int index, int family) {
  auto req = NlRequest::make<ifaddrmsg>(RTM_GETADDR, NLM_F_DUMP);
  req.family<ifaddrmsg>().ifa_family = static_cast<uint8_t>(family);
  // with strict checking the kernel sends only this link's addresses (NLM_F_DUMP_FILTERED); without it (a kernel
  // before 4.20) it ignores the index and the filter below does the work
  if (index > 0) req.family<ifaddrmsg>().ifa_index = static_cast<uint32_t>(index);
  StrictCheck strict(s, index > 0);
  std::vector<AddressInfo> out;
  s.dump(req, "RTM_GETADDR dump", [&] { out.clear(); }, [&](const nlmsghdr* h) {
    AddressInfo a;
    if (!parseAddressMessage(h, a)) return;
    if (index > 0 && a.index != index) return;
    if (family != AF_UNSPEC && a.family != family) return;
    out.push_back(std::move(a));
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

void putAddress(NlSocket& s, const AddressSpec& a) {
  auto req = addressRequest(RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE, a.index, a.local, a.prefixLen,
                            a.peer ? &*a.peer : nullptr);
  auto& ifa = req.family<ifaddrmsg>();
  ifa.ifa_flags = static_cast<uint8_t>(a.flags & 0xff);
  ifa.ifa_scope = a.scope;
  req.putU32(IFA_FLAGS, a.flags);
  if (a.broadcast) req.put(IFA_BROADCAST, a.broadcast->bytes, a.broadcast->size());
  if (a.label) req.putString(IFA_LABEL, *a.label);
  ifa_cacheinfo ci{};
  ci.ifa_valid = a.validLft;
  ci.ifa_prefered = a.preferredLft;
  req.putStruct(IFA_CACHEINFO, ci);
  if (a.metric) req.putU32(IFA_RT_PRIORITY, *a.metric);
  if (a.proto) req.putU8(IFA_PROTO, *a.proto);
  s.request(req, "RTM_NEWADDR replace");
}

}  // namespace sriovctl
