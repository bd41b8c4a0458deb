#include "qdisc.h"

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "sys_failure.h"

namespace sriovctl {

namespace {

std::string toHex(const uint8_t* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; i++) {
    out.push_back(digits[p[i] >> 4]);
    out.push_back(digits[p[i] & 0xf]);
  }
  return out;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::vector<uint8_t> fromHex(const std::string& hex) {
  if (hex.size() % 2) throw SysFailure::withDetail(EINVAL, "RTM_NEWQDISC", "options are not hex");
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); i++) {
    int hi = hexDigit(hex[2 * i]), lo = hexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw SysFailure::withDetail(EINVAL, "RTM_NEWQDISC", "options are not hex");
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

}  // namespace

bool parseQdiscMessage(const nlmsghdr* h, QdiscInfo& out) {
  auto* tcm = familyHeader<tcmsg>(h);
  if (h->nlmsg_type != RTM_NEWQDISC || !tcm) return false;
  auto tb = AttrTable<TCA_MAX>::afterHeader(h, sizeof(tcmsg));
  if (!tb[TCA_KIND]) return false;
  out = QdiscInfo{};
  out.index = tcm->tcm_ifindex;
  out.handle = tcm->tcm_handle;
  out.parent = tcm->tcm_parent;
  const char* kind = static_cast<const char*>(attrData(tb[TCA_KIND]));
  size_t len = attrLen(tb[TCA_KIND]);
  while (len > 0 && kind[len - 1] == '\0') len--;
  out.kind.assign(kind, len);
  if (tb[TCA_OPTIONS]) out.options = toHex(static_cast<const uint8_t*>(attrData(tb[TCA_OPTIONS])), attrLen(tb[TCA_OPTIONS]));
  return true;
}

std::vector<QdiscInfo> listQdiscs(NlSocket& s, int index) {
  auto req = NlRequest::make<tcmsg>(RTM_GETQDISC, NLM_F_DUMP);
  std::vector<QdiscInfo> out;
  s.dump(req, "RTM_GETQDISC dump", [&] { out.clear(); }, [&](const nlmsghdr* h) {
    QdiscInfo q;
    if (parseQdiscMessage(h, q) && q.index == index) out.push_back(std::move(q));
  });
  return out;
}

void replaceRootQdisc(NlSocket& s, int index, uint32_t handle, const std::string& kind, const std::string& optionsHex) {
  auto req = NlRequest::make<tcmsg>(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE);
  auto& tcm = req.family<tcmsg>();
  tcm.tcm_family = AF_UNSPEC;
  tcm.tcm_ifindex = index;
  tcm.tcm_handle = handle;
  tcm.tcm_parent = TC_H_ROOT;
  req.putString(TCA_KIND, kind);
  std::vector<uint8_t> options = fromHex(optionsHex);
  if (!options.empty()) req.put(TCA_OPTIONS, options.data(), options.size());
  s.request(req, "RTM_NEWQDISC replace root " + kind);
}

}  // namespace sriovctl
