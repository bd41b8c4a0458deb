#include "vf.h"

#include <arpa/inet.h>
#include <linux/rtnetlink.h>

#include <cstring>

namespace sriovctl {

namespace {

int optionalFlag(uint32_t setting) { return setting == static_cast<uint32_t>(-1) ? -1 : (setting ? 1 : 0); }

VfInfo parseOneVf(const rtattr* vfInfo) {
  VfInfo v;
  auto tb = AttrTable<IFLA_VF_MAX>::nested(vfInfo);
  ifla_vf_mac mac{};
  if (readAttr(tb[IFLA_VF_MAC], mac)) {
    v.vf = mac.vf;
    std::memcpy(v.mac.data(), mac.mac, v.mac.size());
  }
  ifla_vf_vlan vlan{};
  if (readAttr(tb[IFLA_VF_VLAN], vlan)) {
    v.vlan = vlan.vlan;
    v.qos = vlan.qos;
  }
  // The list carries the protocol; the kernel reports the VF's (single) VLAN there too.
  if (const rtattr* list = tb[IFLA_VF_VLAN_LIST]) {
    bool first = true;
    forEachNested(list, [&](const rtattr* a) {
      ifla_vf_vlan_info info{};
      if (!first || attrType(a) != IFLA_VF_VLAN_INFO || !readAttr(a, info)) return;
      first = false;
      v.vlan = info.vlan;
      v.qos = info.qos;
      v.vlanProto = ntohs(info.vlan_proto);
    });
  }
  ifla_vf_tx_rate txRate{};
  if (readAttr(tb[IFLA_VF_TX_RATE], txRate)) v.maxTxRate = txRate.rate;
  ifla_vf_rate rate{};
  if (readAttr(tb[IFLA_VF_RATE], rate)) {
    v.minTxRate = rate.min_tx_rate;
    v.maxTxRate = rate.max_tx_rate;
  }
  ifla_vf_spoofchk spoofchk{};
  if (readAttr(tb[IFLA_VF_SPOOFCHK], spoofchk)) v.spoofchk = optionalFlag(spoofchk.setting);
  ifla_vf_trust trust{};
  if (readAttr(tb[IFLA_VF_TRUST], trust)) v.trust = optionalFlag(trust.setting);
  ifla_vf_link_state linkState{};
  if (readAttr(tb[IFLA_VF_LINK_STATE], linkState)) v.linkState = linkState.link_state;
  return v;
}

// ifla_vf_spoofchk and ifla_vf_trust have the same layout: { vf, setting }.
template <typename Flag>
void putVfFlag(NlRequest& req, unsigned short type, uint32_t vf, bool enabled) {
  Flag f{};
  f.vf = vf;
  f.setting = enabled ? 1 : 0;
  req.putStruct(type, f);
}

void putVfAttribute(NlRequest& req, uint32_t vf, const VfChange& c) {
  using K = VfChange::Kind;
  switch (c.kind) {
    case K::Mac: {
      ifla_vf_mac m{};
      m.vf = vf;
      std::memcpy(m.mac, c.mac.data(), c.mac.size());
      req.putStruct(IFLA_VF_MAC, m);
      break;
    }
    case K::Vlan:
      if (c.vlanProto == 0x8100) {
        // Legacy attribute for 802.1Q: every driver with VF VLAN support implements it.
        ifla_vf_vlan v{};
        v.vf = vf;
        v.vlan = c.vlan;
        v.qos = c.qos;
        req.putStruct(IFLA_VF_VLAN, v);
      } else {
        ifla_vf_vlan_info v{};
        v.vf = vf;
        v.vlan = c.vlan;
        v.qos = c.qos;
        v.vlan_proto = htons(c.vlanProto);
        size_t list = req.beginNest(IFLA_VF_VLAN_LIST);
        req.putStruct(IFLA_VF_VLAN_INFO, v);
        req.endNest(list);
      }
      break;
    case K::Spoofchk:
      putVfFlag<ifla_vf_spoofchk>(req, IFLA_VF_SPOOFCHK, vf, c.enabled);
      break;
    case K::Trust:
      putVfFlag<ifla_vf_trust>(req, IFLA_VF_TRUST, vf, c.enabled);
      break;
    case K::LinkState: {
      ifla_vf_link_state l{};
      l.vf = vf;
      l.link_state = c.linkState;
      req.putStruct(IFLA_VF_LINK_STATE, l);
      break;
    }
    case K::Rate: {
      ifla_vf_rate r{};
      r.vf = vf;
      r.min_tx_rate = c.minTxRate;
      r.max_tx_rate = c.maxTxRate;
      req.putStruct(IFLA_VF_RATE, r);
      break;
    }
  }
}

}  // namespace

std::vector<VfInfo> parseVfInfoList(const void* payload, size_t len) {
  std::vector<VfInfo> vfs;
  forEachAttr(payload, len, [&](const rtattr* a) {
    if (attrType(a) == IFLA_VF_INFO) vfs.push_back(parseOneVf(a));
  });
  return vfs;
}

NlRequest encodeVfChange(int pfIndex, uint32_t vf, const VfChange& change) {
  auto req = NlRequest::make<ifinfomsg>(RTM_NEWLINK, 0);
  req.family<ifinfomsg>().ifi_family = AF_UNSPEC;
  req.family<ifinfomsg>().ifi_index = pfIndex;
  size_t list = req.beginNest(IFLA_VFINFO_LIST);
  size_t info = req.beginNest(IFLA_VF_INFO);
  putVfAttribute(req, vf, change);
  req.endNest(info);
  req.endNest(list);
  return req;
}

std::string vfChangeOp(const VfChange& change) {
  using K = VfChange::Kind;
  switch (change.kind) {
    case K::Mac: return "RTM_NEWLINK set vf mac";
    case K::Vlan: return "RTM_NEWLINK set vf vlan";
    case K::Spoofchk: return "RTM_NEWLINK set vf spoofchk";
    case K::Trust: return "RTM_NEWLINK set vf trust";
    case K::LinkState: return "RTM_NEWLINK set vf link state";
    case K::Rate: return "RTM_NEWLINK set vf rate";
  }
  return "RTM_NEWLINK set vf";
}

}  // namespace sriovctl
